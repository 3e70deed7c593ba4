/*
 * api_load.c - loading what the viewer's answers read (see api.h): the
 * sampled overview, the lanes, the counters, the report's figures and the
 * latency answer, in the background, each published once complete.
 *
 * Invariants:
 *   - Each part is built on its own read-only connection (rodb_open) and
 *     published by one store-release of its flag (load_part): 1 once
 *     complete, -1 with the cause in its *_error; a published part is never
 *     written again, so readers need no lock once they have seen the flag.
 *   - The overview (store_load_preview) is built only for traces whose
 *     g_state is at least API_PREVIEW_MIN_ROWS rows; otherwise preview_ready
 *     ends at -1 with preview_skipped set.
 * Concurrency: api_open() starts the lanes thread, which builds the overview
 *   first (with a helper thread for half of the cells, joined before the
 *   merge), then the lanes (a helper for half of g_state, joined before the
 *   merge), then starts the counters thread, then loads the figures and
 *   builds the latency answer. The overview and the lanes run one after
 *   the other: on two cores, running them side by side would slow the
 *   overview, the only thing the first paint waits for. With API_REPORT
 *   the lanes thread skips the overview and the lanes (lanes_ready stays
 *   0, and api_wait() does not wait for it). api_close() sets
 *   cancel (loaders stop early) and joins every thread before freeing.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "db.h"
#include "rodb.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int latency_build(struct api *api, sqlite3 *db, struct wsr_err *err);
static int metrics_fn(struct api *api, sqlite3 *db, struct wsr_err *err);

/* g_interval's largest rowid (the rows of the g_state view) into *n: 0, or -1
 * with the cause (a failed read is not "empty"). */
static int g_state_rows(sqlite3 *db, int64_t *n, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	if (db_prepare(db, &q, "SELECT coalesce(max(rowid), 0) FROM g_interval", err) < 0)
		return -1;
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(q, 0);
	else
		err_push(err, "sqlite: reading g_interval: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The second half of g_interval's runs, loaded by a helper thread. */
struct runs_job {
	struct api *api;
	struct store part;
	uint32_t b0, b1;
	int ok;
	char error[WSR_ERR_LEN];
};

static void *runs_main(void *arg)
{
	struct runs_job *job = arg;
	struct wsr_err err;
	sqlite3 *db = NULL;

	err_init(&err);
	job->ok = rodb_open(job->api->path, 0, &db, &err) == 0 &&
		  store_load_runs(&job->part, db, job->b0, job->b1, &err) == 0;
	sqlite3_close(db);
	if (!job->ok)
		err_format(&err, job->error, sizeof(job->error));
	return NULL;
}

/*
 * Loads the lanes: g_interval's running rows in two halves of its blocks on
 * two threads (the biggest part of the start-up), then the P and M states.
 */
static int lanes_fn(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	struct runs_job job;
	pthread_t helper;
	uint32_t nblocks = 0, mid;
	int started, rc;

	if (store_run_blocks(db, &nblocks, err) < 0)
		return -1;
	mid = nblocks / 2;
	memset(&job, 0, sizeof(job));
	job.api = api;
	job.b0 = mid;
	job.b1 = nblocks;
	job.part.start_ts = api->st.start_ts;
	job.part.end_ts = api->st.end_ts;
	job.part.duration_ns = api->st.duration_ns;
	job.part.gomaxprocs = api->st.gomaxprocs;
	job.part.cancel = &api->cancel;
	started = pthread_create(&helper, NULL, runs_main, &job) == 0;
	rc = store_load_runs(&api->st, db, 0, started ? mid : nblocks, err);
	if (!started)
		return rc < 0 ? -1 : store_load_states(&api->st, db, err);
	pthread_join(helper, NULL);
	if (rc < 0 || !job.ok) {
		if (rc == 0)
			err_push(err, "%s", job.error);
		store_free(&job.part);
		return -1;
	}
	if (store_merge_runs(&api->st, &job.part, err) < 0)
		return -1;
	return store_load_states(&api->st, db, err);
}

static int counters_fn(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	return store_load_counters(&api->st, db, err);
}

/* Runs one loader on its own read-only connection and publishes the result. */
static void load_part(struct api *api, int (*fn)(struct api *, sqlite3 *, struct wsr_err *),
		      int64_t mmap_bytes, atomic_int *ready, char *error, double *secs)
{
	struct wsr_err err;
	sqlite3 *db = NULL;
	double t = now_s();
	int ok;

	err_init(&err);
	ok = rodb_open(api->path, mmap_bytes, &db, &err) == 0 && fn(api, db, &err) == 0;
	sqlite3_close(db);
	*secs = now_s() - t;
	if (!ok)
		err_format(&err, error, WSR_ERR_LEN);
	/* store-release; pairs with the load-acquire in part_state(). */
	atomic_store_explicit(ready, ok ? 1 : -1, memory_order_release);
}

static void *counters_main(void *arg);

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The second half of the overview's cells, built by a helper thread. */
struct preview_job {
	struct api *api;
	struct store part;
	int ok;
	double cpu_s;
	char error[WSR_ERR_LEN];
};

static void *preview_main(void *arg)
{
	struct preview_job *job = arg;
	struct wsr_err err;
	sqlite3 *db = NULL;
	double cpu = thread_cpu_s();

	err_init(&err);
	job->ok = rodb_open(job->api->path, API_PREVIEW_MMAP, &db, &err) == 0 &&
		  store_load_preview(&job->part, db, API_PREVIEW_CELLS, API_PREVIEW_CELLS / 2,
				     API_PREVIEW_CELLS, &err) == 0;
	sqlite3_close(db);
	if (!job->ok)
		err_format(&err, job->error, sizeof(job->error));
	job->cpu_s = thread_cpu_s() - cpu;
	return NULL;
}

/*
 * Builds the overview, unless g_state is small enough that the lanes load
 * about as fast as the overview would (then it fails with preview_skipped set).
 * Two threads, each over half of the cells: on a loaded machine the
 * scheduler shares CPU time by thread, so two halve the wait, and on an idle
 * one they use both cores.
 */
static int preview_fn(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	struct preview_job job;
	pthread_t helper;
	double cpu = thread_cpu_s();
	int64_t rows = 0;
	int started, rc;

	if (!(api->flags & API_PREVIEW_ONLY) && g_state_rows(db, &rows, err) < 0)
		return -1;
	if (!(api->flags & API_PREVIEW_ONLY) && rows < API_PREVIEW_MIN_ROWS) {
		api->preview_skipped = 1;
		err_push(err, "small trace");
		return -1;
	}
	memset(&job, 0, sizeof(job));
	job.api = api;
	job.part = api->pv; /* the bounds only: no lanes yet */
	started = pthread_create(&helper, NULL, preview_main, &job) == 0;
	rc = store_load_preview(&api->pv, db, API_PREVIEW_CELLS, 0,
				started ? API_PREVIEW_CELLS / 2 : API_PREVIEW_CELLS, err);
	if (started) {
		pthread_join(helper, NULL);
		if (rc == 0 && !job.ok) {
			err_push(err, "%s", job.error);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = store_finish_preview(&api->pv, started ? &job.part : NULL, err);
	else
		store_free(&job.part);
	api->preview_cpu_s = thread_cpu_s() - cpu + job.cpu_s;
	return rc;
}

/* The overview (with API_PREVIEW), then the lanes; 1 when the loader stops
 * there (API_PREVIEW_ONLY), else 0. */
static int lanes_load(struct api *api)
{
	/*
	 * The overview first: it takes a fraction of a second and lets the page
	 * paint while the lanes load. A failed overview only costs that: the
	 * page then waits for the lanes as before. Its connection reads through
	 * a memory map: its lookups touch a few 64 KiB pages each, and copying
	 * them out of the page cache (pread) was a quarter of its CPU time
	 * (0.17 -> 0.12 CPU-s on the 10M-event trace). A map faults (SIGBUS) if
	 * the file is truncated under it; `wsr ingest` replaces databases by
	 * rename(), and this connection lives only while the overview is built.
	 * The lanes' scans gained nothing measurable from it.
	 */
	if (api->flags & API_PREVIEW) {
		load_part(api, preview_fn, API_PREVIEW_MMAP, &api->preview_ready,
			  api->preview_error, &api->preview_s);
		if ((api->flags & API_LOG) && api->preview_ready == 1)
			fprintf(stderr, "wsr view: overview (%d cells, %zu spans) in %.2f s (%.2f CPU-s)\n",
				API_PREVIEW_CELLS, api->pv.spans, api->preview_s, api->preview_cpu_s);
		else if ((api->flags & API_LOG) && api->preview_ready < 0 && !api->preview_skipped)
			fprintf(stderr, "wsr view: no overview: %s\n", api->preview_error);
		if (api->flags & API_PREVIEW_ONLY)
			return 1;
	}
	load_part(api, lanes_fn, 0, &api->lanes_ready, api->lanes_error, &api->lanes_s);
	if ((api->flags & API_LOG) && api->lanes_ready == 1)
		fprintf(stderr, "wsr view: indexed %zu intervals in %.2f s\n", api->st.spans,
			api->lanes_s);
	return 0;
}

static void *lanes_main(void *arg)
{
	struct api *api = arg;
	double secs;

	/* A report draws its one window itself (store_timeline_stream): no lanes. */
	if (!(api->flags & API_REPORT) && lanes_load(api))
		return NULL;
	/*
	 * The counters start once the lanes are in (for a report: at once): the
	 * first paint needs the lanes, and on two cores the counters would only
	 * slow them down.
	 */
	if (pthread_create(&api->counters_thread, NULL, counters_main, api) == 0) {
		api->counters_started = 1;
	} else {
		snprintf(api->counters_error, sizeof(api->counters_error), "cannot start a thread");
		/* store-release; pairs with the load-acquire in api_handle(). */
		atomic_store_explicit(&api->counters_ready, -1, memory_order_release);
	}
	load_part(api, metrics_fn, 0, &api->metrics_ready, api->metrics_error, &secs);
	load_part(api, latency_build, 0, &api->latency_ready, api->latency_error, &secs);
	return NULL;
}

static void *counters_main(void *arg)
{
	struct api *api = arg;

	load_part(api, counters_fn, 0, &api->counters_ready, api->counters_error,
		  &api->counters_s);
	if ((api->flags & API_LOG) && api->counters_ready == 1)
		fprintf(stderr, "wsr view: summarised the counters in %.2f s\n", api->counters_s);
	return NULL;
}

int api_open(struct api *api, const char *path, int flags, struct wsr_err *err)
{
	memset(api, 0, sizeof(*api));
	api->flags = flags;
	sb_init(&api->latency);
	api->path = strdup(path);
	api->m = calloc(1, sizeof(*api->m));
	if (api->path == NULL || api->m == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	pthread_mutex_init(&api->db_lock, NULL);
	pthread_mutex_init(&api->cdb_lock, NULL);
	if (rodb_open(path, 0, &api->db, err) < 0 || rodb_open(path, 0, &api->cdb, err) < 0)
		goto fail;
	if (store_init(&api->st, api->db, err) < 0) {
		err_push(err, "reading %s", path);
		goto fail;
	}
	api->st.cancel = &api->cancel;
	/* The overview starts from the same bounds (no lanes yet: nothing is shared). */
	api->pv = api->st;
	if (pthread_create(&api->lanes_thread, NULL, lanes_main, api) != 0) {
		err_push(err, "starting a loader thread");
		goto fail;
	}
	api->threads = 1;
	return 0;
fail:
	api_close(api);
	return -1;
}

static void join_loaders(struct api *api)
{
	/* counters_started is written by the lanes thread: read it after the join. */
	if (api->threads >= 1)
		pthread_join(api->lanes_thread, NULL);
	if (api->counters_started)
		pthread_join(api->counters_thread, NULL);
	api->threads = 0;
	api->counters_started = 0;
}

int api_wait(struct api *api, struct wsr_err *err)
{
	join_loaders(api);
	if (!(api->flags & API_REPORT) && api->lanes_ready != 1) {
		err_push(err, "indexing the lanes: %s", api->lanes_error);
		return -1;
	}
	if (api->counters_ready != 1) {
		err_push(err, "summarising the counters: %s", api->counters_error);
		return -1;
	}
	if (api->metrics_ready != 1) {
		err_push(err, "loading the figures: %s", api->metrics_error);
		return -1;
	}
	if (api->latency_ready != 1) {
		err_push(err, "building the latency histogram: %s", api->latency_error);
		return -1;
	}
	return 0;
}

void api_close(struct api *api)
{
	atomic_store_explicit(&api->cancel, 1, memory_order_relaxed);
	join_loaders(api);
	store_free(&api->st);
	store_free(&api->pv);
	sqlite3_close(api->db);
	sqlite3_close(api->cdb);
	if (api->path != NULL) {
		pthread_mutex_destroy(&api->db_lock);
		pthread_mutex_destroy(&api->cdb_lock);
	}
	sb_free(&api->latency);
	free(api->m);
	free(api->path);
	memset(api, 0, sizeof(*api));
}

/* Polled by latency_hist_load(): api_close() cancels the scan. */
static int cancelled(void *arg)
{
	struct api *api = arg;

	return atomic_load_explicit(&api->cancel, memory_order_relaxed);
}

/* Loads the figures (metrics.c) on the loader's connection: util and latency read them. */
static int metrics_fn(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	return metrics_load(db, api->path, api->m, err);
}

/*
 * Builds the latency answer into api->latency (run once, by the lanes loader
 * thread on its own connection, after metrics_ready, before latency_ready is
 * set): count, percentiles and max are the report's (struct metrics, i.e.
 * meta.latency_*); mean, min and the buckets come from latency_hist_load().
 */
static int latency_build(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	/* load-acquire; pairs with the store-release in load_part(). */
	const struct metrics *m = atomic_load_explicit(&api->metrics_ready, memory_order_acquire) == 1
					  ? api->m
					  : NULL;
	struct latency_hist *h = NULL;
	struct sbuf *c = &api->latency;
	int ret = -1;

	if (m == NULL) {
		err_push(err, "the figures did not load: %s", api->metrics_error);
		return -1;
	}
	h = malloc(sizeof(*h));
	if (h == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (latency_hist_load(db, h, cancelled, api, err) < 0)
		goto out;
	sb_printf(c, "{\"count\":%" PRId64 ",\"mean_ns\":%.1f", m->latency_n,
		  h->n > 0 ? h->sum_ns / (double)h->n : 0.0);
	if (m->latency_n > 0)
		sb_printf(c,
			  ",\"min_ns\":%" PRId64 ",\"p50_ns\":%" PRId64 ",\"p90_ns\":%" PRId64
			  ",\"p99_ns\":%" PRId64 ",\"max_ns\":%" PRId64,
			  h->min_ns, m->latency_p50, m->latency_p90, m->latency_p99, m->latency_max);
	sb_printf(c, ",\"lossy\":%s,\"sources\":[",
		  m->discarded_events + m->discarded_packets > 0 ? "true" : "false");
	for (int i = 0; i < LATENCY_SOURCES; i++)
		sb_printf(c, "%s\"%s\"", i != 0 ? "," : "", latency_sources[i]);
	/* Bucket b holds [2^b, 2^(b+1)) ns; bucket 0 also holds 0 and 1. */
	sb_puts(c, "],\"buckets\":[");
	for (int b = h->lo; b <= h->hi; b++) {
		int64_t tot = 0;
		for (int s = 0; s < LATENCY_SOURCES; s++)
			tot += h->counts[b][s];
		sb_printf(c, "{\"lo\":%" PRId64 ",\"hi\":%" PRId64 ",\"n\":%" PRId64 ",\"by_source\":[",
			  b == 0 ? (int64_t)0 : (int64_t)1 << b, (int64_t)2 << b, tot);
		for (int s = 0; s < LATENCY_SOURCES; s++)
			sb_printf(c, "%s%" PRId64, s != 0 ? "," : "", h->counts[b][s]);
		sb_puts(c, "]},");
	}
	sb_uncomma(c);
	sb_puts(c, "]}");
	if (c->oom) {
		sb_free(c);
		err_push(err, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(h);
	return ret;
}
