/*
 * api.c - JSON answers of the viewer (see api.h) and the read-only guards.
 *
 * Invariants:
 *   - The authorizer (reads and safe_functions only) is installed on every
 *     connection before any query, so even a bug in the viewer's own SQL
 *     cannot write; the console's queries must also pass
 *     sqlite3_stmt_readonly().
 *   - Answers hold relative times (ts - meta.start_ts); G details say where
 *     the G came from (the runnable interval that ended at the run's start:
 *     its source) and why the run ended (the running interval's reason).
 *   - Until the lanes are published, /api/info and /api/timeline answer from
 *     the sampled overview (api.h, store_load_preview) if it is; /api/util
 *     and /api/counters never do (their figures would be wrong, not coarse).
 * Concurrency: api_handle() runs on several server threads at once; each
 *   connection is used under its own mutex (db_lock, cdb_lock) and
 *   the store and the overview, once published by the lanes thread, are only
 *   read (api.h). The lanes thread builds the overview first, then the lanes,
 *   one after the other: on two cores, running them side by side would slow
 *   the overview, the only thing the first paint waits for.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "db.h"
#include "duration.h"

/*
 * The SQL functions a query may call: SQLite's core scalar, aggregate,
 * window, date, math and JSON functions, which only compute a value from
 * their arguments (sorted, for bsearch; compared without case). Everything
 * else is refused, in particular fts3_tokenizer() (the one-argument form
 * returns a pointer into libsqlite3, the two-argument form installs one: a
 * later MATCH jumps there), load_extension(), the FTS and R*Tree helpers
 * (match, snippet, optimize, which writes, rtreenode, which parses a blob),
 * sqlite_log() and the compile-option probes.
 */
static const char *const safe_functions[] = {
	"->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg",
	"ceil", "ceiling", "changes", "char", "coalesce", "concat", "concat_ws", "cos", "cosh",
	"count", "cume_dist", "current_date", "current_time", "current_timestamp", "date",
	"datetime", "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob",
	"group_concat", "hex", "ifnull", "iif", "instr", "json", "json_array", "json_array_length",
	"json_extract", "json_group_array", "json_group_object", "json_insert", "json_object",
	"json_patch", "json_quote", "json_remove", "json_replace", "json_set", "json_type",
	"json_valid", "julianday", "lag", "last_insert_rowid", "last_value", "lead", "length",
	"like", "likelihood", "likely", "ln", "log", "log10", "log2", "lower", "ltrim", "max",
	"min", "mod", "nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi", "pow",
	"power", "printf", "quote", "radians", "random", "randomblob", "rank", "replace", "round",
	"row_number", "rtrim", "sign", "sin", "sinh", "soundex", "sqlite_source_id",
	"sqlite_version", "sqrt", "strftime", "string_agg", "substr", "substring", "sum", "tan",
	"tanh", "time", "timediff", "total", "total_changes", "trim", "trunc", "typeof", "unhex",
	"unicode", "unixepoch", "unlikely", "upper", "zeroblob",
};

static int name_cmp(const void *key, const void *elem)
{
	return strcasecmp(key, *(const char *const *)elem);
}

/* 1 if name is in safe_functions. */
static int function_allowed(const char *name)
{
	return name != NULL && bsearch(name, safe_functions,
				       sizeof(safe_functions) / sizeof(safe_functions[0]),
				       sizeof(safe_functions[0]), name_cmp) != NULL;
}

/*
 * Allows reads only. Views read their tables through SQLITE_READ, recursive
 * CTEs need SQLITE_RECURSIVE, and only the functions of safe_functions may
 * be called (SQLITE_FUNCTION names the function in b). Everything else
 * (INSERT, UPDATE, DELETE, CREATE, DROP, PRAGMA, ATTACH, transactions...)
 * is denied.
 */
static int ro_authorizer(void *ud, int action, const char *a, const char *b, const char *c,
			 const char *d)
{
	(void)ud;
	(void)a;
	(void)c;
	(void)d;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		return function_allowed(b) ? SQLITE_OK : SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

/*
 * Opens path read-only with the authorizer; mmap_bytes > 0 maps that much of
 * the file (set before the authorizer, which refuses PRAGMA).
 */
static int open_db(const char *path, int64_t mmap_bytes, sqlite3 **out, struct wsr_err *err)
{
	sqlite3 *db = NULL;
	int ret = -1;

	/* The analyzer's open: read-only, schema version and meta checked (db.c). */
	if (db_open_ro(path, &db, err) < 0)
		goto out;
	if (mmap_bytes > 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA mmap_size = %" PRId64, mmap_bytes);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			err_push(err, "%s: %s", sql, sqlite3_errmsg(db));
			goto out;
		}
	}
	/*
	 * Defensive, no extensions, no fts3_tokenizer() pointer form, no
	 * triggers: the file is data, not code. Each must take effect. (The
	 * schema stays "trusted": the schedtrace view needs json_group_array(),
	 * which SQLite does not mark innocuous; the authorizer's function list
	 * applies inside views as well.)
	 */
	{
		static const int off[] = {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
					  SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER,
					  SQLITE_DBCONFIG_ENABLE_TRIGGER};
		int v = 0;

		if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &v) != SQLITE_OK || v != 1) {
			err_push(err, "%s: cannot turn on SQLITE_DBCONFIG_DEFENSIVE", path);
			goto out;
		}
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			v = 1;
			if (sqlite3_db_config(db, off[i], 0, &v) != SQLITE_OK || v != 0) {
				err_push(err, "%s: cannot turn off SQLite option %d", path, off[i]);
				goto out;
			}
		}
	}
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 * 1024 * 1024);
	if (sqlite3_set_authorizer(db, ro_authorizer, NULL) != SQLITE_OK) {
		err_push(err, "installing the authorizer: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	if (ret < 0) {
		sqlite3_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}

int api_open_db(const char *path, sqlite3 **out, struct wsr_err *err)
{
	return open_db(path, 0, out, err);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int latency_build(struct api *api, sqlite3 *db, struct wsr_err *err);
static int metrics_fn(struct api *api, sqlite3 *db, struct wsr_err *err);

/* g_state's largest rowid into *n: 0, or -1 with the cause (a failed read is not "empty"). */
static int g_state_rows(sqlite3 *db, int64_t *n, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	if (db_prepare(db, &q, "SELECT coalesce(max(rowid), 0) FROM g_state", err) < 0)
		return -1;
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(q, 0);
	else
		err_push(err, "sqlite: reading g_state: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The second half of g_state's runs, loaded by a helper thread. */
struct runs_job {
	struct api *api;
	struct store part;
	int64_t lo, hi;
	int ok;
	char error[WSR_ERR_LEN];
};

static void *runs_main(void *arg)
{
	struct runs_job *job = arg;
	struct wsr_err err;
	sqlite3 *db = NULL;

	err_init(&err);
	job->ok = api_open_db(job->api->path, &db, &err) == 0 &&
		  store_load_runs(&job->part, db, job->lo, job->hi, &err) == 0;
	sqlite3_close(db);
	if (!job->ok)
		err_format(&err, job->error, sizeof(job->error));
	return NULL;
}

/*
 * Loads the lanes: g_state's running rows in two halves of the rowid range
 * on two threads (the biggest part of the start-up), then the P and M states.
 */
static int lanes_fn(struct api *api, sqlite3 *db, struct wsr_err *err)
{
	struct runs_job job;
	pthread_t helper;
	int64_t maxrow = 0, mid;
	int started, rc;

	if (g_state_rows(db, &maxrow, err) < 0)
		return -1;
	mid = maxrow / 2 + 1;
	memset(&job, 0, sizeof(job));
	job.api = api;
	job.lo = mid;
	job.hi = maxrow + 1;
	job.part.start_ts = api->st.start_ts;
	job.part.end_ts = api->st.end_ts;
	job.part.duration_ns = api->st.duration_ns;
	job.part.gomaxprocs = api->st.gomaxprocs;
	job.part.cancel = &api->cancel;
	started = pthread_create(&helper, NULL, runs_main, &job) == 0;
	rc = store_load_runs(&api->st, db, 0, started ? mid : maxrow + 1, err);
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
	ok = open_db(api->path, mmap_bytes, &db, &err) == 0 && fn(api, db, &err) == 0;
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
	job->ok = open_db(job->api->path, API_PREVIEW_MMAP, &db, &err) == 0 &&
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

static void *lanes_main(void *arg)
{
	struct api *api = arg;

	double secs;

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
			return NULL;
	}
	load_part(api, lanes_fn, 0, &api->lanes_ready, api->lanes_error, &api->lanes_s);
	if ((api->flags & API_LOG) && api->lanes_ready == 1)
		fprintf(stderr, "wsr view: indexed %zu intervals in %.2f s\n", api->st.spans,
			api->lanes_s);
	/*
	 * The counters start once the lanes are in: the first paint needs the
	 * lanes, and on two cores the counters would only slow them down.
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
	if (api_open_db(path, &api->db, err) < 0 || api_open_db(path, &api->cdb, err) < 0)
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
	if (api->lanes_ready != 1) {
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

void api_json_value(struct sbuf *out, sqlite3_stmt *q, int i)
{
	switch (sqlite3_column_type(q, i)) {
	case SQLITE_INTEGER:
		sb_i64(out, sqlite3_column_int64(q, i));
		break;
	case SQLITE_FLOAT: {
		double v = sqlite3_column_double(q, i);
		if (isfinite(v))
			sb_printf(out, "%.17g", v);
		else
			sb_puts(out, "null");
		break;
	}
	case SQLITE_TEXT:
		sb_json_str(out, (const char *)sqlite3_column_text(q, i));
		break;
	case SQLITE_BLOB:
		sb_printf(out, "\"<blob of %d bytes>\"", sqlite3_column_bytes(q, i));
		break;
	default:
		sb_puts(out, "null");
	}
}

/*
 * Writes the rows of q as a JSON array of objects keyed by column name,
 * at most max_rows of them. Returns the number written, or -1 on error.
 */
static int64_t rows_json(sqlite3 *db, sqlite3_stmt *q, struct sbuf *out, int64_t max_rows,
			 struct wsr_err *err)
{
	int64_t n = 0;
	int rc;

	sb_putc(out, '[');
	while (n < max_rows && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		sb_putc(out, '{');
		for (int i = 0; i < sqlite3_column_count(q); i++) {
			sb_json_str(out, sqlite3_column_name(q, i));
			sb_putc(out, ':');
			api_json_value(out, q, i);
			sb_putc(out, ',');
		}
		sb_uncomma(out);
		sb_puts(out, "},");
		n++;
	}
	if (n < max_rows && rc != SQLITE_DONE) {
		err_push(err, "query failed: %s", sqlite3_errmsg(db));
		return -1;
	}
	sb_uncomma(out);
	sb_putc(out, ']');
	return n;
}

/* Runs sql (binding ?1.. to the given integers) and writes its rows. */
static int query_json(sqlite3 *db, const char *sql, struct sbuf *out, int64_t max_rows,
		      struct wsr_err *err, int nargs, const int64_t *args)
{
	sqlite3_stmt *q = NULL;
	int ret = -1;

	if (db_prepare(db, &q, sql, err) < 0)
		goto out;
	for (int i = 0; i < nargs; i++)
		sqlite3_bind_int64(q, i + 1, args[i]);
	if (rows_json(db, q, out, max_rows, err) < 0)
		goto out;
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

/* /api/info from st: the lanes, or the overview (same Ps and Ms) until they are in. */
static int info_json(struct api *api, const struct store *st, struct sbuf *out, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	sb_puts(out, "{\"path\":");
	sb_json_str(out, api->path);
	sb_printf(out,
		  ",\"start_ts\":%" PRId64 ",\"end_ts\":%" PRId64 ",\"duration_ns\":%" PRId64
		  ",\"gomaxprocs\":%d,\"ps\":[",
		  st->start_ts, st->end_ts, st->duration_ns, st->gomaxprocs);
	for (size_t i = 0; i < st->nps; i++)
		sb_printf(out, "%s%" PRId64, i != 0 ? "," : "", st->p_runs[i].id);
	sb_puts(out, "],\"ms\":[");
	for (size_t i = 0; i < st->nms; i++)
		sb_printf(out, "%s%" PRId64, i != 0 ? "," : "", st->m_states[i].id);
	sb_puts(out, "],\"states\":[");
	for (int i = 0; i < ST_NSTATES; i++)
		sb_printf(out, "%s\"%s\"", i != 0 ? "," : "", store_state_names[i]);
	sb_puts(out, "],\"counters\":[");
	for (int i = 0; i < STORE_NCOUNTERS; i++)
		sb_printf(out, "%s\"%s\"", i != 0 ? "," : "", store_counter_names[i]);
	sb_printf(out, "],\"sql_max_rows\":%d,\"sql_time_ms\":%d,\"meta\":{", API_SQL_MAX_ROWS,
		  API_SQL_TIME_MS);
	if (db_prepare(api->db, &q, "SELECT key, value FROM meta ORDER BY key", err) < 0)
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		sb_json_str(out, (const char *)sqlite3_column_text(q, 0));
		sb_putc(out, ':');
		api_json_value(out, q, 1);
		sb_putc(out, ',');
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: reading meta: %s", sqlite3_errmsg(api->db));
		return -1;
	}
	sb_uncomma(out);
	sb_puts(out, "}}");
	return 0;
}

int api_info_json(struct api *api, struct sbuf *out, struct wsr_err *err)
{
	return info_json(api, &api->st, out, err);
}

/* The steal_graph rows (as the report's matrix) and the report's totals; requires metrics_ready. */
int api_steals_json(struct api *api, struct sbuf *out, struct wsr_err *err)
{
	sb_puts(out, "{\"edges\":");
	if (query_json(api->db,
		       METRICS_STEAL_PAIRS_SQL,
		       out, INT64_MAX, err, 0, NULL) < 0)
		return -1;
	sb_printf(out, ",\"total\":[{\"steals\":%" PRId64 ",\"gs\":%" PRId64 "}]}", api->m->steals,
		  api->m->stolen);
	return 0;
}

/*
 * The schedtrace rows of metrics.c (sql/schedtrace.sql, as `wsr report`
 * prints them), with each row's SCHED line as the report has it.
 */
int api_schedtrace_json(struct api *api, int64_t interval_ns, struct sbuf *out, struct wsr_err *err)
{
	struct schedtrace_row *r = malloc(sizeof(*r));
	sqlite3_stmt *q = NULL;
	char line[8192];
	int ret = -1, rc, n = 0;

	if (r == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (schedtrace_prepare(api->db, interval_ns, API_SCHEDTRACE_MAX_ROWS, &q, err) < 0)
		goto out;
	sb_printf(out, "{\"interval_ns\":%" PRId64 ",\"max_rows\":%d,\"rows\":[", interval_ns,
		  API_SCHEDTRACE_MAX_ROWS);
	while ((rc = schedtrace_next(api->db, q, r, err)) == 1) {
		sb_printf(out,
			  "%s{\"t_ms\":%" PRId64 ",\"t\":%" PRId64 ",\"gomaxprocs\":%" PRId64
			  ",\"idleprocs\":%" PRId64 ",\"threads\":%" PRId64
			  ",\"spinningthreads\":%" PRId64 ",\"needspinning\":%" PRId64
			  ",\"idlethreads\":%" PRId64 ",\"runqueue\":%" PRId64
			  ",\"runnable_gs\":%" PRId64 ",\"running_gs\":%" PRId64 ",\"runq\":[",
			  n++ != 0 ? "," : "", r->t_ms, r->t, r->gomaxprocs, r->idleprocs, r->threads,
			  r->spinningthreads, r->needspinning, r->idlethreads, r->runqueue,
			  r->runnable_gs, r->running_gs);
		for (int p = 0; p < r->np; p++)
			sb_printf(out, "%s%" PRId64, p != 0 ? "," : "", r->runq[p]);
		sb_puts(out, "],\"schedticks\":[");
		for (int p = 0; p < r->np; p++)
			sb_printf(out, "%s%" PRId64, p != 0 ? "," : "", r->schedticks[p]);
		sb_puts(out, "],\"line\":");
		schedtrace_format(r, line, sizeof(line));
		sb_json_str(out, line);
		sb_putc(out, '}');
	}
	if (rc < 0)
		goto out;
	sb_puts(out, "]}");
	ret = 0;
out:
	sqlite3_finalize(q);
	free(r);
	return ret;
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

int api_latency_json(struct api *api, struct sbuf *out, struct wsr_err *err)
{
	/* load-acquire; pairs with the store-release in load_part(). */
	int st = atomic_load_explicit(&api->latency_ready, memory_order_acquire);

	if (st == 0) {
		sb_puts(out, "{\"loading\":true}");
		return 0;
	}
	if (st < 0) {
		err_push(err, "%s", api->latency_error);
		return -1;
	}
	sb_add(out, api->latency.buf, api->latency.len);
	return 0;
}

/*
 * Per-P time by state, the report's figures (struct metrics, the per-P
 * table of `wsr report`): ns and % of the run for running Gs, scheduling
 * (the P held with no G running), spinning, syscall and idle. Requires
 * metrics_ready.
 */
int api_util_json(struct api *api, struct sbuf *out, struct wsr_err *err)
{
	const struct metrics *m = api->m;

	(void)err;
	sb_printf(out, "{\"duration_ns\":%" PRId64 ",\"lossy\":%s,\"procs\":[", m->duration_ns,
		  m->discarded_events + m->discarded_packets > 0 ? "true" : "false");
	for (int p = 0; p < m->np; p++) {
		const struct p_metrics *pm = &m->p[p];
		double v[5];

		metrics_p_pcts(m, p, v);
		sb_printf(out,
			  "%s{\"p\":%d,\"running_ns\":%" PRId64 ",\"sched_ns\":%" PRId64
			  ",\"spinning_ns\":%" PRId64 ",\"syscall_ns\":%" PRId64
			  ",\"idle_ns\":%" PRId64 ",\"running_pct\":%.17g,\"sched_pct\":%.17g"
			  ",\"spinning_pct\":%.17g,\"syscall_pct\":%.17g,\"idle_pct\":%.17g"
			  ",\"schedticks\":%" PRId64 ",\"runnext_runs\":%" PRId64 "}",
			  p != 0 ? "," : "", p, pm->running_ns, pm->other_ns, pm->spinning_ns,
			  pm->syscall_ns, pm->idle_ns, v[0], v[4], v[2], v[3], v[1], pm->schedticks,
			  pm->runnext_runs);
	}
	sb_puts(out, "]}");
	return 0;
}

/* One row of sql (bound to args) as a JSON object, or null. */
static int one_json(sqlite3 *db, const char *sql, struct sbuf *out, int nargs,
		    const int64_t *args, struct wsr_err *err)
{
	struct sbuf tmp;
	int ret;

	sb_init(&tmp);
	ret = query_json(db, sql, &tmp, 1, err, nargs, args);
	if (ret == 0) {
		if (tmp.len > 2)
			sb_add(out, tmp.buf + 1, tmp.len - 2); /* strip [ ] */
		else
			sb_puts(out, "null");
	}
	sb_free(&tmp);
	return ret;
}

static int api_g_json(struct api *api, int64_t g, int64_t t, int have_t, struct sbuf *out,
		      struct wsr_err *err)
{
	int64_t s0 = api->st.start_ts;
	int64_t args[3] = {s0, g, have_t ? s0 + t : INT64_MAX};
	sqlite3_stmt *q = NULL;
	int64_t run_start = INT64_MIN;
	int ret = -1;

	sb_printf(out, "{\"g\":%" PRId64 ",\"info\":", g);
	if (one_json(api->db,
		     "SELECT g, parent, created_ts - ?1 AS created, first_run_ts - ?1 AS first_run,\n"
		     "  end_ts - ?1 AS end, create_p, runs, stolen, run_ns, runnable_ns, waiting_ns,\n"
		     "  syscall_ns, end_reason FROM g WHERE g = ?2",
		     out, 2, args, err) < 0)
		goto out;
	/* The run at t (the last one starting at or before it), or the first run. */
	if (db_prepare(api->db, &q,
		       have_t ? "SELECT start_ts FROM g_state WHERE g = ?2 AND state = "
				"'running' AND start_ts <= ?3 ORDER BY start_ts DESC LIMIT 1"
			      : "SELECT start_ts FROM g_state WHERE g = ?2 AND state = "
				"'running' ORDER BY start_ts LIMIT 1",
		       err) < 0)
		goto out;
	sqlite3_bind_int64(q, 2, g);
	if (have_t)
		sqlite3_bind_int64(q, 3, args[2]);
	int step_rc = sqlite3_step(q);
	if (step_rc == SQLITE_ROW) {
		run_start = sqlite3_column_int64(q, 0);
	} else if (step_rc != SQLITE_DONE) {
		err_push(err, "sqlite: reading G %" PRId64 "'s run: %s", g,
			 sqlite3_errmsg(api->db));
		goto out;
	}
	args[2] = run_start;
	sb_puts(out, ",\"run\":");
	if (one_json(api->db,
		     "SELECT start_ts - ?1 AS start, end_ts - ?1 AS end, end_ts - start_ts AS ran_ns,\n"
		     "  p, m, reason AS stop_reason, cut FROM g_state\n"
		     "WHERE g = ?2 AND state = 'running' AND start_ts = ?3",
		     out, 3, args, err) < 0)
		goto out;
	sb_puts(out, ",\"ready\":");
	if (one_json(api->db,
		     "SELECT start_ts - ?1 AS start, end_ts - ?1 AS end, end_ts - start_ts AS "
		     "latency_ns,\n"
		     "  reason AS ready_reason, source, p AS queued_on FROM g_state\n"
		     "WHERE g = ?2 AND state = 'runnable' AND end_ts = ?3",
		     out, 3, args, err) < 0)
		goto out;
	sb_putc(out, '}');
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

static int arg_i64(api_arg_fn arg, void *ctx, const char *name, int64_t *v)
{
	const char *s = arg(ctx, name);
	char *end;
	double d;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(d) || fabs(d) > 9.0e18)
		return -1;
	*v = (int64_t)llround(d);
	return 0;
}

/* Reads t0, t1, px with defaults (the whole trace, 1000 px) and bounds. */
static int window_args(struct api *api, api_arg_fn arg, void *ctx, int64_t *t0, int64_t *t1,
		       int *px)
{
	int64_t p = 1000;

	if (arg_i64(arg, ctx, "t0", t0) < 0)
		*t0 = 0;
	if (arg_i64(arg, ctx, "t1", t1) < 0)
		*t1 = api->st.duration_ns;
	if (arg_i64(arg, ctx, "px", &p) < 0)
		p = 1000;
	/* Far outside the trace there is nothing to draw; clamping keeps t1 - t0 in range. */
	if (*t0 < -api->st.duration_ns)
		*t0 = -api->st.duration_ns;
	if (*t1 > 2 * api->st.duration_ns)
		*t1 = 2 * api->st.duration_ns;
	if (p < 1 || p > 8192 || *t1 <= *t0)
		return -1;
	*px = (int)p;
	return 0;
}

int api_handle(struct api *api, const char *name, api_arg_fn arg, void *ctx, struct sbuf *out)
{
	const struct store *lanes = &api->st; /* or the overview, until the lanes are in */
	struct wsr_err err;
	int64_t t0, t1, v, t;
	int px, rc = 0;

	err_init(&err);
	if (strcmp(name, "status") == 0) {
		/* load-acquire; pairs with the store-release in load_part(). */
		sb_printf(out,
			  "{\"preview\":%d,\"lanes\":%d,\"counters\":%d,\"metrics\":%d,"
			  "\"latency\":%d}",
			  atomic_load_explicit(&api->preview_ready, memory_order_acquire),
			  atomic_load_explicit(&api->lanes_ready, memory_order_acquire),
			  atomic_load_explicit(&api->counters_ready, memory_order_acquire),
			  atomic_load_explicit(&api->metrics_ready, memory_order_acquire),
			  atomic_load_explicit(&api->latency_ready, memory_order_acquire));
		return 200;
	}
	if (strcmp(name, "info") == 0 || strcmp(name, "timeline") == 0 ||
	    strcmp(name, "counters") == 0 || strcmp(name, "util") == 0 ||
	    strcmp(name, "steals") == 0) {
		int c = strcmp(name, "counters") == 0;
		int u = strcmp(name, "util") == 0 || strcmp(name, "steals") == 0;
		/* load-acquire; pairs with the store-release in load_part(). */
		int st = atomic_load_explicit(c   ? &api->counters_ready
					      : u ? &api->metrics_ready
						  : &api->lanes_ready,
					      memory_order_acquire);
		/* load-acquire; pairs with the store-release in load_part(). */
		if (st == 0 && (strcmp(name, "info") == 0 || strcmp(name, "timeline") == 0) &&
		    atomic_load_explicit(&api->preview_ready, memory_order_acquire) == 1)
			lanes = &api->pv;
		else if (st == 0) {
			sb_puts(out, "{\"loading\":true}");
			return 503;
		}
		if (st < 0) {
			sb_puts(out, "{\"error\":");
			sb_json_str(out, c ? api->counters_error : u ? api->metrics_error : api->lanes_error);
			sb_putc(out, '}');
			return 500;
		}
	}
	if (strcmp(name, "info") == 0) {
		pthread_mutex_lock(&api->db_lock);
		rc = info_json(api, lanes, out, &err);
		pthread_mutex_unlock(&api->db_lock);
	} else if (strcmp(name, "timeline") == 0) {
		if (window_args(api, arg, ctx, &t0, &t1, &px) < 0)
			goto bad;
		store_timeline_json(lanes, t0, t1, px, out);
	} else if (strcmp(name, "counters") == 0) {
		if (window_args(api, arg, ctx, &t0, &t1, &px) < 0)
			goto bad;
		pthread_mutex_lock(&api->cdb_lock);
		rc = store_counters_json(&api->st, api->cdb, t0, t1, px, out, &err);
		pthread_mutex_unlock(&api->cdb_lock);
	} else if (strcmp(name, "g") == 0) {
		if (arg_i64(arg, ctx, "g", &v) < 0)
			goto bad;
		int have_t = arg_i64(arg, ctx, "t", &t) == 0;
		pthread_mutex_lock(&api->db_lock);
		rc = api_g_json(api, v, have_t ? t : 0, have_t, out, &err);
		pthread_mutex_unlock(&api->db_lock);
	} else if (strcmp(name, "steals") == 0) {
		pthread_mutex_lock(&api->db_lock);
		rc = api_steals_json(api, out, &err);
		pthread_mutex_unlock(&api->db_lock);
	} else if (strcmp(name, "schedtrace") == 0) {
		pthread_mutex_lock(&api->db_lock);
		/* `interval` in the duration grammar of `wsr report --interval` (duration.c). */
		const char *iv = arg(ctx, "interval");
		if (iv != NULL && *iv != '\0')
			rc = duration_parse(iv, &v) < 0 ? 1 : 0;
		else
			rc = metrics_schedtrace_interval(api->db, &v, &err);
		if (rc == 0)
			rc = api_schedtrace_json(api, v, out, &err);
		pthread_mutex_unlock(&api->db_lock);
		if (rc == 1)
			goto bad;
	} else if (strcmp(name, "latency") == 0) {
		rc = api_latency_json(api, out, &err);
	} else if (strcmp(name, "util") == 0) {
		rc = api_util_json(api, out, &err);
	} else {
		sb_puts(out, "{\"error\":\"no such API\"}");
		return 404;
	}
	if (rc < 0) {
		char msg[WSR_ERR_MAX * WSR_ERR_LEN];
		err_format(&err, msg, sizeof(msg));
		out->len = 0;
		sb_puts(out, "{\"error\":");
		sb_json_str(out, msg);
		sb_putc(out, '}');
		return 500;
	}
	return 200;
bad:
	out->len = 0;
	sb_puts(out, "{\"error\":\"bad arguments\"}");
	return 400;
}
