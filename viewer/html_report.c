/*
 * html_report.c - `wsr-view --html -o FILE trace.db`: one self-contained
 * HTML file with the viewer's pictures, downsampled, for CI artifacts.
 *
 * The file is the viewer page itself (index.html) with style.css and app.js
 * inlined and the API answers the page would fetch written into a
 * <script type="application/json" id="wsr-data"> element: the whole trace
 * at HTML_REPORT_PX pixels (timeline and counters), the steal graph, the
 * schedtrace table at the given interval (default: meta's), the latency
 * histogram and the utilisation bars. app.js sees the data element and draws from it instead
 * of fetching; the SQL console is hidden.
 * Invariants:
 *   - No network and no external file: a CSP meta element forbids every
 *     fetch (default-src 'none'), and the only scripts and styles are inline.
 *   - JSON strings escape '<', '>' and '&' (sbuf.c) and embed_assets.py
 *     refuses an app.js containing "</script", so nothing closes the
 *     elements early.
 *   - All or nothing: written to FILE.tmp, then renamed over FILE (or, with
 *     no FILE or "-", to stdout in one write once complete).
 *   - Memory is bounded by the pixels and the lanes, not the trace: the
 *     timeline is folded as the rows are read (store_timeline_stream), the
 *     counters are the store's fixed buckets; only a database whose lane
 *     rows break their order falls back to the full store.
 * Concurrency: the caller's thread draws the timeline on its own connection
 *   while api's loaders (opened with API_REPORT) build the rest.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "assets.h"
#include "html_report.h"
#include "rodb.h"

#define HTML_REPORT_PX 2400

#define STYLE_TAG  "<link rel=\"stylesheet\" href=\"style.css\">"
#define SCRIPT_TAG "<script src=\"app.js\"></script>"
#define HEAD_TAG   "<head>"
#define CSP_META                                                                                   \
	"\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "            \
	"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"

/* Appends src up to the marker, then repl; returns the text after the marker. */
static const char *splice(struct sbuf *out, const char *src, const char *marker, const char *repl,
			  size_t repl_len, int keep_marker, struct wsr_err *err)
{
	const char *at = strstr(src, marker);

	if (at == NULL) {
		err_push(err, "index.html lacks %s", marker);
		return NULL;
	}
	sb_add(out, src, (size_t)(at - src));
	if (keep_marker)
		sb_puts(out, marker);
	sb_add(out, repl, repl_len);
	return at + strlen(marker);
}

/* An empty store with st's bounds: the fields store_init() wrote, which no
 * loader writes again (the counters thread is filling st's others). */
static void bounds(struct store *to, const struct store *st)
{
	memset(to, 0, sizeof(*to));
	to->start_ts = st->start_ts;
	to->end_ts = st->end_ts;
	to->duration_ns = st->duration_ns;
	to->gomaxprocs = st->gomaxprocs;
}

/*
 * The whole trace's timeline at HTML_REPORT_PX into out, and its lanes' ids
 * into lanes, on a connection of its own while api's threads load the rest
 * (store_timeline_stream: one pass that keeps no spans).
 */
static int timeline(struct api *api, struct store *lanes, struct sbuf *out, struct wsr_err *err)
{
	sqlite3 *db = NULL;
	int rc;

	if (rodb_open(api->path, 0, &db, err) < 0)
		return -1;
	bounds(lanes, &api->st);
	rc = store_timeline_stream(lanes, db, HTML_REPORT_PX, out, err);
	sqlite3_close(db);
	if (rc < 0) {
		err_push(err, "drawing the timeline");
		return -1;
	}
	return 0;
}

int html_report_write(struct api *api, const char *path, int64_t interval_ns, struct wsr_err *err)
{
	const struct viewer_asset *index = assets_find("/index.html");
	const struct viewer_asset *css = assets_find("/style.css");
	const struct viewer_asset *js = assets_find("/app.js");
	struct sbuf data, out, tl;
	struct store lanes;
	char *tmp = NULL;
	FILE *f = NULL;
	const char *rest;
	int ret = -1;

	sb_init(&data);
	sb_init(&out);
	sb_init(&tl);
	memset(&lanes, 0, sizeof(lanes));
	if (index == NULL || css == NULL || js == NULL) {
		err_push(err, "the viewer assets are missing from this build");
		goto out;
	}
	if (timeline(api, &lanes, &tl, err) < 0 || api_wait(api, err) < 0)
		goto out;
	sb_printf(&data, "{\"static\":true,\"px\":%d,\"generator\":\"wsr-view %s\",\"info\":",
		  HTML_REPORT_PX, WSR_VERSION);
	if (api_info_json(api, &lanes, &data, err) < 0)
		goto out;
	sb_puts(&data, ",\"timeline\":");
	sb_add(&data, tl.buf, tl.len);
	sb_puts(&data, ",\"counters\":");
	if (store_counters_json(&api->st, api->db, 0, api->st.duration_ns, HTML_REPORT_PX, &data,
				err) < 0)
		goto out;
	sb_puts(&data, ",\"steals\":");
	if (api_steals_json(api, &data, err) < 0)
		goto out;
	sb_puts(&data, ",\"schedtrace\":");
	{
		/* The report's default (metrics.c), errors included. */
		int64_t iv = interval_ns;
		if (iv <= 0 && metrics_schedtrace_interval(api->db, &iv, err) < 0)
			goto out;
		if (api_schedtrace_json(api, iv, &data, err) < 0)
			goto out;
	}
	sb_puts(&data, ",\"latency\":");
	if (api_latency_json(api, &data, err) < 0)
		goto out;
	sb_puts(&data, ",\"util\":");
	if (api_util_json(api, &data, err) < 0)
		goto out;
	sb_putc(&data, '}');

	rest = splice(&out, (const char *)index->data, HEAD_TAG, CSP_META, strlen(CSP_META), 1,
		      err);
	if (rest != NULL) {
		struct sbuf style;
		sb_init(&style);
		sb_puts(&style, "<style>\n");
		sb_add(&style, css->data, css->len);
		sb_puts(&style, "</style>");
		rest = splice(&out, rest, STYLE_TAG, style.buf, style.len, 0, err);
		sb_free(&style);
	}
	if (rest != NULL) {
		struct sbuf scripts;
		sb_init(&scripts);
		sb_puts(&scripts, "<script type=\"application/json\" id=\"wsr-data\">");
		sb_add(&scripts, data.buf, data.len);
		sb_puts(&scripts, "</script>\n<script>\n");
		sb_add(&scripts, js->data, js->len);
		sb_puts(&scripts, "</script>");
		rest = splice(&out, rest, SCRIPT_TAG, scripts.buf, scripts.len, 0, err);
		sb_free(&scripts);
	}
	if (rest == NULL)
		goto out;
	sb_puts(&out, rest);
	if (out.oom || data.oom || tl.oom) {
		err_push(err, "out of memory building the report");
		goto out;
	}
	if (path == NULL || strcmp(path, "-") == 0) {
		if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
			err_push(err, "writing the report to stdout: %s", strerror(errno));
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		err_push(err, "out of memory");
		goto out;
	}
	f = fopen(tmp, "w");
	if (f == NULL) {
		err_push(err, "creating %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fwrite(out.buf, 1, out.len, f) != out.len || fclose(f) != 0) {
		f = NULL;
		err_push(err, "writing %s: %s", tmp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) != 0) {
		err_push(err, "renaming %s to %s: %s", tmp, path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f != NULL)
		fclose(f);
	if (ret < 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	store_free(&lanes);
	sb_free(&tl);
	sb_free(&data);
	sb_free(&out);
	return ret;
}
