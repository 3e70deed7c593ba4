/*
 * api.c - JSON answers of the viewer (see api.h); their data is loaded in
 * the background by api_load.c, their connections opened by rodb.c.
 *
 * Invariants:
 *   - Answers hold relative times (ts - meta.start_ts); G details say where
 *     the G came from (the runnable interval that ended at the run's start:
 *     its source) and why the run ended (the running interval's reason).
 *   - Until the lanes are published, /api/info and /api/timeline answer from
 *     the sampled overview (api.h, store_load_preview) if it is; /api/util
 *     and /api/counters never do (their figures would be wrong, not coarse).
 *   - A part is read only after the load-acquire of its flag has seen 1
 *     (the store-release in api_load.c's load_part); before, the answer
 *     says {"loading": true}.
 * Concurrency: api_handle() runs on several server threads at once; each
 *   connection is used under its own mutex (db_lock, cdb_lock) and
 *   the store and the overview, once published by the lanes thread, are only
 *   read (api.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "db.h"
#include "duration.h"

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

int api_info_json(struct api *api, const struct store *lanes, struct sbuf *out,
		  struct wsr_err *err)
{
	return info_json(api, lanes, out, err);
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
	/* The run at t (the last one starting at or before it), or the first run.
	 * A G's intervals do not overlap, so its rows' end order (rowid) is their
	 * start order, which the module reads without sorting them all. */
	if (db_prepare(api->db, &q,
		       have_t ? "SELECT start_ts FROM g_state WHERE g = ?2 AND state = "
				"'running' AND start_ts <= ?3 ORDER BY rowid DESC LIMIT 1"
			      : "SELECT start_ts FROM g_state WHERE g = ?2 AND state = "
				"'running' ORDER BY rowid LIMIT 1",
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
