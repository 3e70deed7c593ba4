/*
 * api.h - the viewer's JSON answers, shared by the HTTP server (server.c) and
 * the static HTML report (html_report.c).
 *
 * Invariants:
 *   - Every connection is opened with SQLITE_OPEN_READONLY, defensive, no
 *     extensions, no fts3_tokenizer pointers, no triggers, and carries an
 *     authorizer that allows only reads (SELECT, READ, recursive CTEs and
 *     the functions of safe_functions in rodb.c); nothing here can write the
 *     file or call a function that is not a pure computation.
 *   - The SQL console is not here: console.c runs /api/sql on its own
 *     threads and connections with API_SQL_TIME_MS and API_SQL_MAX_ROWS.
 *   - Every answer is bounded by the screen, not the trace: windowed
 *     queries go through the store (store.h); lists are LIMITed.
 *   - Times in answers are nanoseconds relative to meta.start_ts.
 *   - Figures are the analyzer's (metrics.h): /api/util and /api/latency
 *     read struct metrics (loaded once, like `wsr report` does) and the
 *     latency histogram; /api/schedtrace reads schedtrace_row. Nothing here
 *     computes a figure of its own.
 * Concurrency: the server calls api_handle() from several threads at once
 *   (libmicrohttpd's thread pool). Each SQLite connection has its own mutex
 *   (db_lock, cdb_lock), held for one bounded query; the timeline takes no
 *   lock (the store); the store, the figures and the latency answer are
 *   immutable once published.
 *   The two loader threads of api_open() use their own connections and
 *   publish the store through lanes_ready and counters_ready (the figures
 *   through metrics_ready, the latency histogram through latency_ready);
 *   until a part is ready, its answers say {"loading": true}. With API_PREVIEW, the lanes thread first
 *   builds the overview pv (with a helper thread for half of the cells, on
 *   its own connection, joined before the merge) and publishes it through
 *   preview_ready: until
 *   lanes_ready, /api/info and /api/timeline answer from it ("preview":true
 *   in the timeline), so a cold start paints in well under a second instead
 *   of waiting seconds for the full index. pv is immutable once published
 *   and freed only by api_close(), after the loaders are joined.
 */
#ifndef WSR_VIEWER_API_H
#define WSR_VIEWER_API_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"
#include "metrics.h"
#include "sbuf.h"
#include "store.h"

#define API_SQL_TIME_MS  2000
#define API_SQL_MAX_ROWS 1000
#define API_SCHEDTRACE_MAX_ROWS 1000

struct api {
	char *path;
	sqlite3 *db;  /* the viewer's own queries; under db_lock */
	sqlite3 *cdb; /* counters at fine zoom; under cdb_lock */
	pthread_mutex_t db_lock, cdb_lock;
	struct store st;
	struct store pv;         /* the sampled overview, answered until st's lanes are in */
	struct sbuf latency;     /* the latency answer, built once by the lanes loader */
	/*
	 * The store is loaded in the background: api_open() starts the lanes
	 * thread (with a helper for half of g_state), which starts the counters
	 * thread once the lanes are published, then builds the latency. Each flag
	 * is 0 while loading, 1 once its part is complete (store-release by
	 * the loader; pairs with the load-acquire in api_handle()), -1 on
	 * failure with the cause in the matching *_error.
	 */
	pthread_t lanes_thread, counters_thread; /* the lanes thread starts the counters one */
	int threads, counters_started;
	atomic_int preview_ready, lanes_ready, counters_ready, metrics_ready, latency_ready;
	atomic_int cancel; /* set by api_close(): loaders stop early */
	char preview_error[WSR_ERR_LEN], lanes_error[WSR_ERR_LEN], counters_error[WSR_ERR_LEN],
		metrics_error[WSR_ERR_LEN], latency_error[WSR_ERR_LEN];
	/* The report's figures (metrics.c), loaded by the lanes thread; read once metrics_ready. */
	struct metrics *m;
	double preview_s, lanes_s, counters_s; /* load times, for the log */
	double preview_cpu_s;                  /* the overview's CPU time, for the log */
	int flags;                             /* API_* */
	int preview_skipped; /* written by the lanes thread before preview_ready */
};

enum {
	API_LOG = 1,     /* say on stderr when each part is loaded */
	API_PREVIEW = 2, /* build the sampled overview first (store_load_preview) */
	API_PREVIEW_ONLY = 4, /* tests: stop after the overview (the lanes never load) */
	API_REPORT = 8, /* the HTML report: no lanes (it streams its one window), the rest at once */
};

/*
 * The overview's cells: a few per pixel of a full-HD screen, about 0.2 s of
 * index lookups on the 10M-event trace of docs/viewer.md.
 */
#define API_PREVIEW_CELLS 4096
/* The overview's connections map this much of the file (api_load.c says why). */
#define API_PREVIEW_MMAP ((int64_t)1 << 32)
/* Below this many g_state rows the lanes load in a few tenths of a second: no overview. */
#define API_PREVIEW_MIN_ROWS 1000000

/* Opens the database and starts loading the store in the background (flags: API_*). */
int api_open(struct api *api, const char *path, int flags, struct wsr_err *err);
/* Waits until the store is loaded; -1 (with the cause) if loading failed. */
int api_wait(struct api *api, struct wsr_err *err);
void api_close(struct api *api);

typedef const char *(*api_arg_fn)(void *ctx, const char *name);

/*
 * Answers GET /api/NAME with query arguments read through arg(ctx, name).
 * Writes the JSON body to out and returns the HTTP status (200, 400 or 404;
 * 500 with a JSON error on a database failure).
 */
int api_handle(struct api *api, const char *name, api_arg_fn arg, void *ctx, struct sbuf *out);

/* /api/info with the Ps and Ms of lanes (a store with its lane ids: api->st, or a report's). */
int api_info_json(struct api *api, const struct store *lanes, struct sbuf *out,
		  struct wsr_err *err);
/* Column i of q's current row as a JSON value (blobs as "<blob of N bytes>"). */
void api_json_value(struct sbuf *out, sqlite3_stmt *q, int i);
int api_steals_json(struct api *api, struct sbuf *out, struct wsr_err *err);
int api_schedtrace_json(struct api *api, int64_t interval_ns, struct sbuf *out,
			struct wsr_err *err);
int api_latency_json(struct api *api, struct sbuf *out, struct wsr_err *err);
int api_util_json(struct api *api, struct sbuf *out, struct wsr_err *err);

#endif /* WSR_VIEWER_API_H */
