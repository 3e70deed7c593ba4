/*
 * wsr_view.c - `wsr-view`: the viewer's entry point (run by `wsr view`,
 * git-style; `wsr report --format html` and `wsr export --perfetto` exec it
 * with --html / --perfetto).
 *
 *   wsr-view trace.db [--port N]            serve the web UI on 127.0.0.1
 *   wsr-view --html [-o FILE] trace.db      self-contained HTML report
 *   wsr-view --perfetto -o FILE trace.db    Perfetto protobuf trace
 *
 * The front end execs this binary with its own argv shifted by one, so
 * argv[0] is the subcommand: "view" as above; "report" (from `wsr report
 * --format html [-o FILE] trace.db`) means --html and accepts --format html,
 * --detail (ignored: the report has every picture) and --interval DUR (the
 * schedtrace table's interval); "export" (from `wsr export --perfetto
 * trace.db -o FILE`) means --perfetto. Without -o the HTML report goes to
 * stdout.
 *
 * Invariants:
 *   - Exit codes: 0 success, 1 failure, 2 usage error or bad input.
 *   - The database is only ever opened read-only (api.c).
 *   - The server prints exactly one line on stdout, "wsr view: serving
 *     PATH at http://127.0.0.1:PORT/#token=HEX", flushed, once it is
 *     listening (the token is this run's; the API needs it; tests
 *     and scripts read the URL from it); the store loads in the background
 *     meanwhile (the page shows "indexing" until the sampled overview or the
 *     lanes are ready, then the overview until the lanes are). It stops on
 *     SIGINT, SIGTERM or SIGHUP.
 * Concurrency: SIGINT/SIGTERM are blocked before the server thread starts,
 *   so only the main thread takes them (sigwait).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "err.h"
#include "html_report.h"
#include "perfetto.h"
#include "server.h"

static const char *prog = "wsr view";

static void usage(FILE *f)
{
	fprintf(f, "usage: wsr view trace.db [--port N]\n"
		   "       wsr report --format html [-o report.html] trace.db\n"
		   "       wsr export --perfetto trace.db -o trace.perfetto-trace\n"
		   "       (wsr-view [--html | --perfetto] [-o FILE] [--port N] trace.db)\n");
}

static int serve(const char *db_path, unsigned port, struct wsr_err *err)
{
	/*
	 * WSR_VIEW_PREVIEW_ONLY=1 (tests/browser) serves the overview and never
	 * loads the lanes, so the page's overview path can be checked on a small
	 * trace, which would otherwise be indexed before the first request.
	 */
	const char *po = getenv("WSR_VIEW_PREVIEW_ONLY");
	int flags = API_LOG | API_PREVIEW;
	struct api api;
	struct server sv;
	sigset_t set;
	int sig;

	/* Blocked before any thread starts, so every thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (po != NULL && strcmp(po, "1") == 0)
		flags |= API_PREVIEW_ONLY;
	if (api_open(&api, db_path, flags, err) < 0)
		return -1;
	if (server_start(&sv, &api, (uint16_t)port, err) < 0) {
		api_close(&api);
		return -1;
	}
	printf("wsr view: serving %s at %s\n", db_path, sv.url);
	fflush(stdout);
	sigwait(&set, &sig);
	server_stop(&sv);
	api_close(&api);
	return 0;
}

/* Parses a duration such as 10ms, 500us, 2s or 1000000 (ns) into *ns. */
static int parse_duration(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1}};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			if (v * units[i].mult < 1000 || v * units[i].mult > 9e18)
				return -1;
			*ns = (int64_t)(v * units[i].mult);
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct wsr_err err;
	const char *db = NULL, *out = NULL;
	enum { SERVE, HTML, PERFETTO } mode = SERVE;
	long port = 0;
	int64_t interval = 0;
	int rc = 0;

	err_init(&err);
	{
		const char *base = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
		if (strcmp(base, "report") == 0) {
			mode = HTML;
			prog = "wsr report";
		} else if (strcmp(base, "export") == 0) {
			mode = PERFETTO;
			prog = "wsr export";
		}
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--format") == 0 && i + 1 < argc && mode == HTML) {
			if (strcmp(argv[++i], "html") != 0) {
				fprintf(stderr, "%s: error: wsr-view writes only --format html\n", prog);
				return 2;
			}
		} else if (strcmp(a, "--detail") == 0 && mode == HTML) {
			/* The HTML report always has every picture. */
		} else if (strcmp(a, "--interval") == 0 && i + 1 < argc && mode == HTML) {
			if (parse_duration(argv[++i], &interval) < 0) {
				fprintf(stderr, "%s: error: bad --interval '%s' (e.g. 10ms)\n", prog,
					argv[i]);
				return 2;
			}
		} else if (strcmp(a, "--html") == 0) {
			mode = HTML;
		} else if (strcmp(a, "--perfetto") == 0) {
			mode = PERFETTO;
		} else if ((strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(a, "--port") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			port = strtol(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || port < 0 || port > 65535) {
				fprintf(stderr, "%s: error: bad port %s\n", prog, argv[i]);
				return 2;
			}
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "%s: error: unknown option %s\n", prog, a);
			usage(stderr);
			return 2;
		} else if (db == NULL) {
			db = a;
		} else {
			fprintf(stderr, "%s: error: more than one database given\n", prog);
			usage(stderr);
			return 2;
		}
	}
	if (db == NULL || (mode == PERFETTO && out == NULL) || (mode == SERVE && out != NULL)) {
		usage(stderr);
		return 2;
	}
	if (mode == SERVE) {
		rc = serve(db, (unsigned)port, &err);
	} else if (mode == HTML) {
		struct api api;
		prog = "wsr report";
		rc = api_open(&api, db, 0, &err);
		if (rc == 0) {
			rc = html_report_write(&api, out, interval, &err);
			api_close(&api);
		}
	} else {
		sqlite3 *sdb = NULL;
		prog = "wsr export";
		rc = api_open_db(db, &sdb, &err);
		if (rc == 0)
			rc = perfetto_write(sdb, out, &err);
		sqlite3_close(sdb);
	}
	if (rc < 0) {
		err_print(&err, prog, stderr);
		return err.exit_code != 0 ? err.exit_code : 1;
	}
	return 0;
}
