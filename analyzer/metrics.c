/*
 * metrics.c - figures of a trace database (see metrics.h, docs/report.md).
 *
 * Design: every figure is one SQL query over the derived tables that are
 * small next to `events` (p, m, steals, spills, global_gets, p_state,
 * m_state, meta). Nothing here scans `events`, `g_state` or `counters`: the
 * figures that would need a pass over them (time integrals of the counters,
 * the latency percentiles) are computed once during ingestion and kept in
 * meta (idle_while_*_ns, latency_*), so a report on a 10M-event database
 * takes well under 2 s (wsr lab's locality too: meta queued_runs and
 * local_runs, counted at ingestion). Two exceptions, each read by one
 * caller: the latency histogram (latency_hist_load, the viewer's picture)
 * reads sched_latency's rows once, from g_interval's blocks (blockread.h); the schedtrace rows run sql/schedtrace.sql,
 * index lookups per instant.
 *
 * One place per figure: the viewer and the HTML report link this file and
 * read struct metrics, latency_hist and schedtrace_row like `wsr report`,
 * `check` and `diff` do, so none of them can print another number.
 *
 * Invariants:
 *   - Read-only; every SQLite rc is checked and reported with errmsg.
 *   - A P id outside 0..METRICS_MAX_P-1 is ignored (gomaxprocs is capped at
 *     1024 by ingestion, and per-P figures stop at METRICS_MAX_P).
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "blockread.h"
#include "db.h"
#include "gtable.h"
#include "metrics.h"

const struct metric_info metric_list[] = {
	{"duration_ms", "trace duration, ms", false},
	{"events", "events in the trace", false},
	{"discarded", "events + packets lost (LTTng discard mode)", false},
	{"discarded_events", "events lost", false},
	{"discarded_packets", "packets lost", false},
	{"gomaxprocs", "number of Ps", false},
	{"threads", "Ms seen", true},
	{"gs", "Gs seen", true},
	{"steals", "successful steals", true},
	{"stolen", "Gs taken by steals", true},
	{"spills", "local run queue overflows to the global queue", true},
	{"global_gets", "batches taken from the global queue", true},
	{"runnext_hit_pct", "runs that came from the runnext slot, %", true},
	{"latency_p50_us", "scheduling latency (ready -> run) median, us", true},
	{"latency_p90_us", "scheduling latency 90th percentile, us", true},
	{"latency_p99_us", "scheduling latency 99th percentile, us", true},
	{"latency_max_us", "scheduling latency maximum, us", true},
	{"spin_cpu_pct", "CPU spent by spinning Ms, % of one CPU over the run", true},
	{"spin_per_steal_us", "spinning time per successful steal, us", true},
	{"spin_wasted_pct", "spins that found no work, %", true},
	{"running_pct", "time Ps ran Gs, % of gomaxprocs x duration", true},
	{"idle_pct", "time Ps were idle, % of gomaxprocs x duration", true},
	{"spinning_pct", "time Ps were held by spinning Ms, %", true},
	{"imbalance_pct", "busiest minus least busy P running %, points", true},
	{"idle_while_global_pct", "time some P was idle while the global queue held work, %", true},
	{"idle_while_runnable_pct", "time some P was idle while a G was runnable, %", true},
	/* Work and span of the recorded DAG (dag.c, docs/workspan.md). */
	{"work_ms", "T1: running time of every strand of the DAG, ms", true},
	{"span_ms", "T_inf: longest path of the DAG weighted by running time, ms", true},
	{"parallelism", "T1 / T_inf", true},
	{"burdened_span_ms", "longest path plus the scheduling delay measured on each edge, ms", true},
	{"burdened_parallelism", "T1 / burdened span", true},
	{"observed_ms", "T_P: first strand's start to last strand's end, ms", true},
	{"lower_bound_ms", "max(T1/P, T_inf), ms", true},
	{"greedy_bound_ms", "T1/P + T_inf (Graham, Brent), ms", true},
	{"bound_position", "where T_P falls: 0 at the lower bound, 1 at the greedy bound", true},
};
const int metric_count = (int)(sizeof(metric_list) / sizeof(metric_list[0]));

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0.0;
}

static double p_running_pct(const struct metrics *m, int p)
{
	return pct((double)m->p[p].running_ns, (double)m->duration_ns);
}

int metric_value(const struct metrics *m, const char *name, double *v)
{
	double total = (double)m->duration_ns * (m->np > 0 ? m->np : 1);
	double run = 0, idle = 0, spin = 0, maxr = -1, minr = -1;

	for (int p = 0; p < m->np; p++) {
		double r = p_running_pct(m, p);
		run += (double)m->p[p].running_ns;
		idle += (double)m->p[p].idle_ns;
		spin += (double)m->p[p].spinning_ns;
		if (maxr < 0 || r > maxr)
			maxr = r;
		if (minr < 0 || r < minr)
			minr = r;
	}

	struct {
		const char *n;
		double v;
	} t[] = {
		{"duration_ms", (double)m->duration_ns / 1e6},
		{"events", (double)m->events},
		{"discarded", (double)(m->discarded_events + m->discarded_packets)},
		{"discarded_events", (double)m->discarded_events},
		{"discarded_packets", (double)m->discarded_packets},
		{"gomaxprocs", m->gomaxprocs},
		{"threads", (double)m->threads},
		{"gs", (double)m->gs},
		{"steals", (double)m->steals},
		{"stolen", (double)m->stolen},
		{"spills", (double)m->spills},
		{"global_gets", (double)m->global_gets},
		{"runnext_hit_pct", pct((double)m->runnext_runs, (double)m->runs)},
		{"latency_p50_us", (double)m->latency_p50 / 1e3},
		{"latency_p90_us", (double)m->latency_p90 / 1e3},
		{"latency_p99_us", (double)m->latency_p99 / 1e3},
		{"latency_max_us", (double)m->latency_max / 1e3},
		{"spin_cpu_pct", pct((double)m->spin_ns, (double)m->duration_ns)},
		{"spin_per_steal_us", m->steals > 0 ? (double)m->spin_ns / (double)m->steals / 1e3
						    : (double)m->spin_ns / 1e3},
		{"spin_wasted_pct", pct((double)m->spins_empty, (double)m->spins)},
		{"running_pct", pct(run, total)},
		{"idle_pct", pct(idle, total)},
		{"spinning_pct", pct(spin, total)},
		{"imbalance_pct", m->np > 0 ? maxr - minr : 0},
		{"idle_while_global_pct",
		 pct((double)m->idle_while_global_ns, (double)m->duration_ns)},
		{"idle_while_runnable_pct",
		 pct((double)m->idle_while_runnable_ns, (double)m->duration_ns)},
		{"work_ms", m->ws.work_ms},
		{"span_ms", m->ws.span_ms},
		{"parallelism", m->ws.parallelism},
		{"burdened_span_ms", m->ws.burdened_span_ms},
		{"burdened_parallelism", m->ws.burdened_parallelism},
		{"observed_ms", m->ws.observed_ms},
		{"lower_bound_ms", m->ws.lower_bound_ms},
		{"greedy_bound_ms", m->ws.greedy_bound_ms},
		{"bound_position", m->ws.bound_position},
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		if (strcmp(t[k].n, name) == 0) {
			*v = t[k].v;
			return 0;
		}
	}
	return -1;
}

static int done(sqlite3 *db, sqlite3_stmt *st, int rc, struct wsr_err *err)
{
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* meta.KEY, or DFLT when absent; an SQLite error is pushed on ERR (checked once after the reads). */
static int64_t meta_i(sqlite3 *db, const char *key, int64_t dflt, struct wsr_err *err)
{
	int64_t v;

	return db_meta_read_int(db, key, &v, err) == 1 ? v : dflt;
}

/* One row of integers from SQL into out[0..n-1]; 0, or -1 (pushed). */
static int query_ints(sqlite3 *db, const char *what, const char *sql, int64_t *out, int n,
		      struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_prepare(db, &st, sql, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	for (int k = 0; rc == SQLITE_ROW && k < n; k++)
		out[k] = sqlite3_column_int64(st, k);
	if (rc != SQLITE_ROW)
		err_push(err, "sqlite: %s: %s", what, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* policy_knobs' topology=NxM, remote steals, lock waits (docs/lab.md). */
static int lab_knob_figures(sqlite3 *db, struct lab_figures *f, struct wsr_err *err)
{
	int64_t v[2];
	const char *t;
	int n0 = err->n;

	f->knobs[0] = '\0';
	db_meta_read_text(db, "policy_knobs", f->knobs, sizeof(f->knobs), err);
	if (err->n > n0)
		return -1;
	f->topo_nodes = f->topo_per_node = 0;
	f->remote_steals = -1;
	t = strstr(f->knobs, "topology=");
	if (t != NULL &&
	    (t == f->knobs || t[-1] == ',') &&
	    sscanf(t, "topology=%dx%d", &f->topo_nodes, &f->topo_per_node) == 2 &&
	    f->topo_nodes > 0 && f->topo_per_node > 0) {
		char sql[160];
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM steals WHERE thief / %d != victim / %d",
			 f->topo_per_node, f->topo_per_node);
		if (query_ints(db, "remote steals", sql, &f->remote_steals, 1, err) < 0)
			return -1;
	} else {
		f->topo_nodes = f->topo_per_node = 0;
	}
	/* Only the deque locks wait (a scan of events: skipped elsewhere). */
	char pol[32] = "";
	db_meta_read_text(db, "policy", pol, sizeof(pol), err);
	f->lock_waits = f->lock_wait_ns = -1;
	if (strcmp(pol, "locked") != 0 && strcmp(pol, "trylock") != 0)
		return err->n > n0 ? -1 : 0;
	if (query_ints(db, "lock waits",
		       "SELECT count(*), coalesce(sum(wait_ns), 0) FROM ev_steal_lock_wait", v, 2,
		       err) < 0)
		return -1;
	f->lock_waits = v[0];
	f->lock_wait_ns = v[1];
	return 0;
}

int metrics_lab_load(sqlite3 *db, struct lab_figures *f, struct wsr_err *err)
{
	int n0 = err->n;

	f->steal_attempts = meta_i(db, "steal_attempts", -1, err);
	if (lab_knob_figures(db, f, err) < 0)
		return -1;
	f->queued_runs = meta_i(db, "queued_runs", 0, err);
	f->local_runs = meta_i(db, "local_runs", 0, err);
	return err->n > n0 ? -1 : 0;
}

int metrics_schedtrace_interval(sqlite3 *db, int64_t *ns, struct wsr_err *err)
{
	int n0 = err->n;

	*ns = meta_i(db, "schedtrace_interval_ns", 1000000, err);
	if (*ns <= 0)
		*ns = 1000000;
	return err->n > n0 ? -1 : 0;
}

/* The figures kept in meta: names, times, event and discard counts, the run's record. */
static int load_meta(sqlite3 *db, const char *path, struct metrics *m, struct wsr_err *err)
{
	int n0 = err->n;

	db_meta_read_text(db, "procname", m->program, sizeof(m->program), err);
	if (m->program[0] == '\0') {
		char tp[512];
		db_meta_read_text(db, "trace_path", tp, sizeof(tp), err);
		size_t l = strlen(tp);
		while (l > 1 && tp[l - 1] == '/')
			tp[--l] = '\0';
		const char *b = strrchr(tp, '/');
		snprintf(m->program, sizeof(m->program), "%s", b != NULL ? b + 1 : tp);
	}
	db_meta_read_text(db, "hostname", m->hostname, sizeof(m->hostname), err);
	db_meta_read_text(db, "runtime_version", m->runtime_version, sizeof(m->runtime_version),
			  err);
	db_meta_read_text(db, "vpid", m->vpid, sizeof(m->vpid), err);
	db_meta_read_text(db, "policy", m->policy, sizeof(m->policy), err);
	db_meta_read_text(db, "policy_knobs", m->policy_knobs, sizeof(m->policy_knobs), err);
	m->start_ts = meta_i(db, "start_ts", 0, err);
	m->end_ts = meta_i(db, "end_ts", 0, err);
	m->duration_ns = meta_i(db, "duration_ns", 0, err);
	m->gomaxprocs = (int)meta_i(db, "gomaxprocs", 0, err);
	m->events = meta_i(db, "events", 0, err);
	m->wsr_events = meta_i(db, "wsr_events", 0, err);
	m->discarded_events = meta_i(db, "discarded_events", 0, err);
	m->discarded_packets = meta_i(db, "discarded_packets", 0, err);
	m->discarded_ranges = meta_i(db, "discarded_records", 0, err);
	m->gs = meta_i(db, "g_count", 0, err);
	m->idle_while_global_ns = meta_i(db, "idle_while_global_ns", 0, err);
	m->idle_while_runnable_ns = meta_i(db, "idle_while_runnable_ns", 0, err);
	m->spins_found = meta_i(db, "spins_found", 0, err);
	metrics_schedtrace_interval(db, &m->schedtrace_interval_ns, err);
	db_meta_read_text(db, "command", m->command, sizeof(m->command), err);
	m->exit_status = meta_i(db, "exit_status", -1, err);
	m->exit_signal = meta_i(db, "exit_signal", -1, err);
	/* A wsr-run.json from before exit_signal: 128 + N is how it said "signal N". */
	if (m->exit_signal < 0 && m->exit_status > 128 && m->exit_status < 128 + 65)
		m->exit_signal = m->exit_status - 128;
	else if (m->exit_signal < 0 && m->exit_status >= 0)
		m->exit_signal = 0;
	m->init_missing = meta_i(db, "init_missing", 0, err) != 0;
	m->unflushed = meta_i(db, "unflushed", 0, err) != 0;
	if (err->n > n0) {
		err_push(err, "reading meta of %s", path);
		return -1;
	}
	return 0;
}

/* Per-P runs and time in each state; np (needs gomaxprocs and duration_ns). */
static int load_ps(sqlite3 *db, struct metrics *m, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* runs: every g_run; schedticks: those with inherit = 0. */
	if (db_prepare(db, &st,
		       "SELECT p, schedticks, run_ns, runnext_runs, runs FROM p ORDER BY p",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0);
		if (p < 0 || p >= METRICS_MAX_P)
			continue;
		if (p + 1 > m->np)
			m->np = p + 1;
		m->p[p].schedticks = sqlite3_column_int64(st, 1);
		m->p[p].runs = sqlite3_column_int64(st, 4);
		m->p[p].running_ns = sqlite3_column_int64(st, 2);
		m->p[p].runnext_runs = sqlite3_column_int64(st, 3);
		m->runs += m->p[p].runs;
		m->runnext_runs += m->p[p].runnext_runs;
	}
	if (done(db, st, rc, err) < 0)
		return -1;
	if (m->gomaxprocs > 0 && m->np < m->gomaxprocs && m->gomaxprocs <= METRICS_MAX_P)
		m->np = m->gomaxprocs;

	if (db_prepare(db, &st,
		       "SELECT p, state, sum(end_ts - start_ts) FROM p_state GROUP BY p, state",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0);
		const char *s = (const char *)sqlite3_column_text(st, 1);
		int64_t ns = sqlite3_column_int64(st, 2);
		if (p < 0 || p >= METRICS_MAX_P || s == NULL)
			continue;
		if (strcmp(s, "idle") == 0)
			m->p[p].idle_ns += ns;
		else if (strcmp(s, "spinning") == 0)
			m->p[p].spinning_ns += ns;
		else if (strcmp(s, "syscall") == 0)
			m->p[p].syscall_ns += ns;
	}
	if (done(db, st, rc, err) < 0)
		return -1;
	for (int p = 0; p < m->np; p++) {
		struct p_metrics *pm = &m->p[p];
		pm->other_ns = m->duration_ns - pm->running_ns - pm->idle_ns - pm->spinning_ns -
			       pm->syscall_ns;
		if (pm->other_ns < 0)
			pm->other_ns = 0;
	}
	return 0;
}

/* Steals, spills, global gets: totals and per P. */
static int load_queues(sqlite3 *db, struct metrics *m, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_prepare(db, &st, METRICS_STEAL_PAIRS_SQL, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int t = sqlite3_column_int(st, 0), v = sqlite3_column_int(st, 1);
		int64_t c = sqlite3_column_int64(st, 2), n = sqlite3_column_int64(st, 3);
		m->steals += c;
		m->stolen += n;
		if (t >= 0 && t < METRICS_MAX_P) {
			m->p[t].steals_in += c;
			m->p[t].gs_in += n;
		}
		if (v >= 0 && v < METRICS_MAX_P) {
			m->p[v].steals_out += c;
			m->p[v].gs_out += n;
		}
	}
	if (done(db, st, rc, err) < 0)
		return -1;
	if (db_prepare(db, &st,
		       "SELECT p, count(*), sum(n), 0 FROM spills GROUP BY p UNION ALL "
		       "SELECT p, count(*), sum(n), 1 FROM global_gets GROUP BY p",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0);
		int64_t c = sqlite3_column_int64(st, 1), n = sqlite3_column_int64(st, 2);
		bool get = sqlite3_column_int(st, 3);
		if (get) {
			m->global_gets += c;
			m->global_gs += n;
		} else {
			m->spills += c;
			m->spilled += n;
		}
		if (p < 0 || p >= METRICS_MAX_P)
			continue;
		if (get) {
			m->p[p].global_gets += c;
			m->p[p].global_gs += n;
		} else {
			m->p[p].spills += c;
			m->p[p].spilled_gs += n;
		}
	}
	return done(db, st, rc, err);
}

/* Ms and spinning (needs spins_found from meta). */
static int load_ms(sqlite3 *db, struct metrics *m, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_prepare(
		    db, &st,
		    "SELECT (SELECT count(*) FROM m), (SELECT coalesce(sum(end_ts - start_ts), 0) "
		    "FROM m_state WHERE state = 'spinning'), (SELECT coalesce(sum(n), 0) FROM "
		    "event_counts WHERE name = 'spin_stop')",
		    err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		m->threads = sqlite3_column_int64(st, 0);
		m->spin_ns = sqlite3_column_int64(st, 1);
		m->spins = sqlite3_column_int64(st, 2);
		m->spins_empty = m->spins - m->spins_found;
		if (m->spins_empty < 0)
			m->spins_empty = 0;
		rc = SQLITE_DONE;
	}
	return done(db, st, rc, err);
}

/* Latency percentiles: nearest rank over the sorted samples, computed at
 * ingestion (meta.latency_*), or here for a database without them. */
static int load_latency(sqlite3 *db, struct metrics *m, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, n0 = err->n;

	rc = db_meta_read_int(db, "latency_n", &m->latency_n, err);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		m->latency_p50 = meta_i(db, "latency_p50_ns", 0, err);
		m->latency_p90 = meta_i(db, "latency_p90_ns", 0, err);
		m->latency_p99 = meta_i(db, "latency_p99_ns", 0, err);
		m->latency_max = meta_i(db, "latency_max_ns", 0, err);
		return err->n > n0 ? -1 : 0;
	}
	if (db_prepare(db, &st, "SELECT count(*), coalesce(max(latency_ns), 0) FROM sched_latency",
		       err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		m->latency_n = sqlite3_column_int64(st, 0);
		m->latency_max = sqlite3_column_int64(st, 1);
		rc = SQLITE_DONE;
	}
	if (done(db, st, rc, err) < 0)
		return -1;
	if (m->latency_n > 0) {
		int64_t r50 = (m->latency_n * 50 + 99) / 100, r90 = (m->latency_n * 90 + 99) / 100,
			r99 = (m->latency_n * 99 + 99) / 100;
		if (db_prepare(db, &st, "SELECT latency_ns FROM sched_latency ORDER BY 1", err) < 0)
			return -1;
		int64_t k = 0;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			k++;
			int64_t v = sqlite3_column_int64(st, 0);
			if (k == r50)
				m->latency_p50 = v;
			if (k == r90)
				m->latency_p90 = v;
			if (k == r99) {
				m->latency_p99 = v;
				rc = SQLITE_DONE;
				break;
			}
		}
		if (done(db, st, rc, err) < 0)
			return -1;
	}
	return 0;
}

int metrics_load(sqlite3 *db, const char *path, struct metrics *m, struct wsr_err *err)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	if (load_meta(db, path, m, err) < 0)
		return -1;
	dag_figures_load(db, &m->ws);
	if (load_ps(db, m, err) < 0 || load_queues(db, m, err) < 0 || load_ms(db, m, err) < 0)
		return -1;
	return load_latency(db, m, err);
}

const struct diag_rule diag_rules[] = {
	{"discarded", "no event was lost"},
	{"idle_while_global", "no P idles while the global queue holds work"},
	{"idle_while_runnable", "Ps do not idle while Gs are runnable"},
	{"spinning", "spinning pays for itself in steals"},
	{"latency", "p99 scheduling latency under 1 ms"},
	{"imbalance", "work spreads across the Ps"},
	{"spills", "local run queues do not overflow"},
};
const int diag_rule_count = (int)(sizeof(diag_rules) / sizeof(diag_rules[0]));

int metrics_diagnose(const struct metrics *m, struct diag *out, int max)
{
	int n = 0;
	double v;
	const char *id = NULL;

#define DIAG(...)                             \
 do {                                         \
  if (n < max) {                              \
   out[n].id = id;                            \
   snprintf(out[n++].text, 256, __VA_ARGS__); \
  }                                           \
 } while (0)

	id = "discarded";
	if (m->discarded_events + m->discarded_packets > 0)
		DIAG("%" PRId64 " events and %" PRId64 " packets were lost in %" PRId64
		     " places (LTTng discard mode): figures marked * may be off; record with "
		     "`wsr run --lossless`",
		     m->discarded_events, m->discarded_packets, m->discarded_ranges);
	id = "idle_while_global";
	metric_value(m, "idle_while_global_pct", &v);
	if (v >= 1.0)
		DIAG("Ps idle for %.1f%% of the run while the global queue held work", v);
	id = "idle_while_runnable";
	metric_value(m, "idle_while_runnable_pct", &v);
	if (v >= 5.0)
		DIAG("some P was idle for %.1f%% of the run while a G was runnable", v);
	double spin, per;
	id = "spinning";
	metric_value(m, "spin_cpu_pct", &spin);
	metric_value(m, "spin_per_steal_us", &per);
	if (spin >= 10.0 || (m->steals > 0 && per >= 100.0 && spin >= 1.0))
		DIAG("spinning burned %.0f%% of a CPU for %" PRId64 " steals (%.1f us per steal)",
		     spin, m->steals, per);
	id = "latency";
	if (m->latency_n > 0 && m->latency_p99 >= 1000000)
		DIAG("p99 scheduling latency is %.2f ms (max %.2f ms): Gs waited long to run",
		     (double)m->latency_p99 / 1e6, (double)m->latency_max / 1e6);
	id = "imbalance";
	if (m->np > 1) {
		int hi = 0, lo = 0;
		for (int p = 1; p < m->np; p++) {
			if (m->p[p].running_ns > m->p[hi].running_ns)
				hi = p;
			if (m->p[p].running_ns < m->p[lo].running_ns)
				lo = p;
		}
		double dh = p_running_pct(m, hi), dl = p_running_pct(m, lo);
		if (dh - dl >= 30.0)
			DIAG("P%d ran Gs %.0f%% of the time but P%d only %.0f%%: work did not spread "
			     "(%" PRId64 " steals)",
			     hi, dh, lo, dl, m->steals);
	}
	id = "spills";
	if (m->spills > 0)
		DIAG("local run queues overflowed %" PRId64 " times, moving %" PRId64
		     " Gs to the global queue",
		     m->spills, m->spilled);
#undef DIAG
	return n;
}

/* ---- per-P shares ---- */

void metrics_p_pcts(const struct metrics *m, int p, double out[5])
{
	const struct p_metrics *pm = &m->p[p];
	double d = m->duration_ns > 0 ? (double)m->duration_ns : 1;

	out[0] = 100.0 * (double)pm->running_ns / d;
	out[1] = 100.0 * (double)pm->idle_ns / d;
	out[2] = 100.0 * (double)pm->spinning_ns / d;
	out[3] = 100.0 * (double)pm->syscall_ns / d;
	out[4] = 100.0 * (double)pm->other_ns / d;
}

/* ---- latency histogram ---- */

const char *const latency_sources[LATENCY_SOURCES] = {"runnext", "local", "global", "steal",
						      "netpoll", "timer", "other"};

/* Counts one latency v of source s (a latency_sources index). */
static void hist_add(struct latency_hist *h, int64_t v, int s)
{
	int b = 0;

	if (h->n == 0 || v < h->min_ns)
		h->min_ns = v;
	if (h->n == 0 || v > h->max_ns)
		h->max_ns = v;
	h->n++;
	h->sum_ns += (double)v;
	while (b < LATENCY_BUCKETS - 1 && v >= ((int64_t)2 << b))
		b++;
	h->counts[b][s]++;
	if (b < h->lo)
		h->lo = b;
	if (b > h->hi)
		h->hi = b;
}

enum { HIST_MAX_SOURCE = 64 };

/*
 * The g_state code of 'runnable' into *runnable and, for each enum_g_source
 * id below HIST_MAX_SOURCE, its latency_sources index into by_id (the last,
 * "other", for a name not there): 0, or -1 with the cause.
 */
static int hist_codes(sqlite3 *db, int64_t *runnable, int *by_id, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*runnable = -1;
	for (int i = 0; i < HIST_MAX_SOURCE; i++)
		by_id[i] = LATENCY_SOURCES - 1;
	if (db_prepare(db, &st, "SELECT id FROM g_state_name WHERE name = 'runnable'", err) < 0)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*runnable = sqlite3_column_int64(st, 0);
	if (rc == SQLITE_ROW)
		rc = SQLITE_DONE;
	if (done(db, st, rc, err) < 0)
		return -1;
	if (db_prepare(db, &st, "SELECT id, name FROM enum_g_source", err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		if (id < 0 || id >= HIST_MAX_SOURCE) {
			sqlite3_finalize(st);
			err_input(err, "enum_g_source: id %" PRId64 " is outside 0..%d", id,
				  HIST_MAX_SOURCE - 1);
			return -1;
		}
		for (int i = 0; name != NULL && i < LATENCY_SOURCES - 1; i++)
			if (strcmp(name, latency_sources[i]) == 0)
				by_id[id] = i;
	}
	return done(db, st, rc, err);
}

/*
 * The sched_latency view's rows (g_state: runnable and not cut), read from
 * g_interval's blocks directly: through SQL each of its millions of rows was
 * a statement step, five column calls and the view's CASE decoding.
 */
int latency_hist_load(sqlite3 *db, struct latency_hist *h, int (*stop)(void *), void *arg,
		      struct wsr_err *err)
{
	static const char *const cols[] = {"state", "cut", "start_ts", "end_ts", "source"};
	struct blockread *br = NULL;
	struct blockread_block blk;
	int by_id[HIST_MAX_SOURCE], rc;
	int64_t runnable;

	memset(h, 0, sizeof(*h));
	h->lo = LATENCY_BUCKETS;
	h->hi = -1;
	if (hist_codes(db, &runnable, by_id, err) < 0 ||
	    blockread_open(db, "g_interval", cols, 5, &br, err) < 0)
		return -1;
	while ((rc = blockread_next(br, &blk, err)) > 0) {
		const int64_t *state = blk.v[0], *cut = blk.v[1], *src = blk.v[4];
		if (stop != NULL && stop(arg)) {
			err_push(err, "cancelled");
			rc = -1;
			break;
		}
		for (uint32_t r = 0; r < blk.nrows; r++) {
			if (blk.null[0][r] || state[r] != runnable || blk.null[1][r] || cut[r] != 0)
				continue;
			int s = blk.null[4][r] || src[r] < 0 || src[r] >= HIST_MAX_SOURCE
					? LATENCY_SOURCES - 1
					: by_id[src[r]];
			hist_add(h, blk.v[3][r] - blk.v[2][r], s);
		}
	}
	blockread_close(br);
	return rc < 0 ? -1 : 0;
}

/* ---- schedtrace reconstruction ---- */

/*
 * The rows of sql/schedtrace.sql over a schedtrace_ticks of our own: the
 * common table expression shadows the view of that name (views.sql), so
 * this is the view's own SELECT at another interval.
 */
static int st_prepare(sqlite3 *db, const char *ticks, sqlite3_stmt **q, struct wsr_err *err)
{
	char *sql = sqlite3_mprintf("WITH RECURSIVE schedtrace_ticks(k, ts) AS (%s)\n%s", ticks,
				    wsr_sql_schedtrace);
	int ret;

	if (sql == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	ret = db_prepare(db, q, sql, err);
	sqlite3_free(sql);
	return ret;
}

int schedtrace_prepare(sqlite3 *db, int64_t interval_ns, int64_t max_rows, sqlite3_stmt **q,
		       struct wsr_err *err)
{
	*q = NULL;
	if (interval_ns <= 0 || max_rows <= 0) {
		err_push(err, "the schedtrace interval and row count must be positive");
		return -1;
	}
	if (st_prepare(db,
		       "SELECT 1, start_ts + ?1 FROM trace_info WHERE start_ts + ?1 <= end_ts\n"
		       "  UNION ALL SELECT k + 1, st.ts + ?1 FROM schedtrace_ticks st, trace_info ti\n"
		       "  WHERE st.ts + ?1 <= ti.end_ts AND k < ?2",
		       q, err) < 0)
		return -1;
	sqlite3_bind_int64(*q, 1, interval_ns);
	sqlite3_bind_int64(*q, 2, max_rows);
	return 0;
}

int schedtrace_prepare_at(sqlite3 *db, int64_t ts, sqlite3_stmt **q, struct wsr_err *err)
{
	*q = NULL;
	if (st_prepare(db, "SELECT 1, ?1", q, err) < 0)
		return -1;
	sqlite3_bind_int64(*q, 1, ts);
	return 0;
}

/* A JSON array of integers (json_group_array's output) into v; returns the count. */
static int int_array(const unsigned char *s, int64_t *v, int max)
{
	const char *p = (const char *)s;
	int n = 0;

	if (p == NULL || *p++ != '[')
		return 0;
	while (n < max) {
		char *end;
		while (*p == ' ' || *p == ',')
			p++;
		int64_t x = strtoll(p, &end, 10);
		if (end == p)
			break;
		v[n++] = x;
		p = end;
	}
	return n;
}

int schedtrace_next(sqlite3 *db, sqlite3_stmt *q, struct schedtrace_row *r, struct wsr_err *err)
{
	/* The columns of sql/schedtrace.sql, in its order. */
	int rc = sqlite3_step(q);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW) {
		err_push(err, "sqlite: schedtrace: %s", sqlite3_errmsg(db));
		return -1;
	}
	r->t_ms = sqlite3_column_int64(q, 0);
	r->ts = sqlite3_column_int64(q, 1);
	r->gomaxprocs = sqlite3_column_int64(q, 2);
	r->idleprocs = sqlite3_column_int64(q, 3);
	r->threads = sqlite3_column_int64(q, 4);
	r->spinningthreads = sqlite3_column_int64(q, 5);
	r->needspinning = sqlite3_column_int64(q, 6);
	r->idlethreads = sqlite3_column_int64(q, 7);
	r->runqueue = sqlite3_column_int64(q, 8);
	r->np = int_array(sqlite3_column_text(q, 9), r->runq, METRICS_MAX_P);
	if (int_array(sqlite3_column_text(q, 10), r->schedticks, METRICS_MAX_P) != r->np) {
		err_push(err, "schedtrace: runq and schedticks have different lengths");
		return -1;
	}
	r->t = sqlite3_column_int64(q, 11);
	r->runnable_gs = sqlite3_column_int64(q, 12);
	r->running_gs = sqlite3_column_int64(q, 13);
	return 1;
}

#define OUT(...)                                          \
 do {                                                     \
  if (off < size) {                                       \
   int w_ = snprintf(buf + off, size - off, __VA_ARGS__); \
   off = w_ > 0 ? off + (size_t)w_ : off;                 \
  } else {                                                \
   off += (size_t)snprintf(NULL, 0, __VA_ARGS__);         \
  }                                                       \
 } while (0)

size_t schedtrace_format(const struct schedtrace_row *r, char *buf, size_t size)
{
	size_t off = 0;

	if (size > 0)
		buf[0] = '\0';
	OUT("SCHED %" PRId64 "ms: gomaxprocs=%" PRId64 " idleprocs=%" PRId64 " threads=%" PRId64
	    " spinningthreads=%" PRId64 " needspinning=%" PRId64 " idlethreads=%" PRId64
	    " runqueue=%" PRId64,
	    r->t_ms, r->gomaxprocs, r->idleprocs, r->threads, r->spinningthreads, r->needspinning,
	    r->idlethreads, r->runqueue);
	for (int p = 0; p < r->np; p++)
		OUT("%s%" PRId64 "%s", p == 0 ? " [ " : " ", r->runq[p], p == r->np - 1 ? " ]" : "");
	OUT(" schedticks=[ ");
	for (int p = 0; p < r->np; p++)
		OUT("%" PRId64 " ", r->schedticks[p]);
	OUT("]");
	return off;
}

static const char *const p_status_name[] = {"idle", "running", "syscall", "spinning"};

int schedtrace_detail(sqlite3 *db, const struct schedtrace_row *r, char *buf, size_t size,
		      struct wsr_err *err)
{
	sqlite3_stmt *ps = NULL, *ms = NULL, *cur = NULL;
	size_t off = size > 0 ? strlen(buf) : 0;
	int64_t ts = r->ts;
	int ret = -1, rc;

	if (db_prepare(
		    db, &ps,
		    "SELECT state, m FROM p_state WHERE p = ? AND start_ts <= ? ORDER BY start_ts DESC "
		    "LIMIT 1",
		    err) < 0 ||
	    db_prepare(
		    db, &ms,
		    "SELECT m.m, (SELECT state FROM m_state s WHERE s.m = m.m AND s.start_ts <= ?1 "
		    "ORDER BY s.start_ts DESC LIMIT 1), (SELECT p FROM m_state s WHERE s.m = m.m AND "
		    "s.start_ts <= ?1 ORDER BY s.start_ts DESC LIMIT 1) FROM m WHERE m.created_ts <= "
		    "?1 ORDER BY m.m",
		    err) < 0 ||
	    db_prepare(db, &cur,
		       "SELECT name, g FROM events WHERE ts <= ? AND m = ? AND name IN ('g_run', "
		       "'g_stop') ORDER BY ts DESC, id DESC LIMIT 1",
		       err) < 0)
		goto out;
	for (int p = 0; p < r->np; p++) {
		const char *state = "idle";
		int64_t holder = -1;
		sqlite3_reset(ps);
		sqlite3_bind_int(ps, 1, p);
		sqlite3_bind_int64(ps, 2, ts);
		if (sqlite3_step(ps) == SQLITE_ROW) {
			const char *s = (const char *)sqlite3_column_text(ps, 0);
			for (int k = 0; k < 4 && s != NULL; k++)
				if (strcmp(s, p_status_name[k]) == 0)
					state = p_status_name[k];
			if (sqlite3_column_type(ps, 1) != SQLITE_NULL)
				holder = sqlite3_column_int64(ps, 1);
		}
		/* Go's status numbers: _Pidle 0, _Prunning 1, _Psyscall 2. */
		int status = strcmp(state, "idle") == 0 ? 0 : strcmp(state, "syscall") == 0 ? 2 : 1;
		OUT("\n  P%d: status=%d schedtick=%" PRId64 " m=%" PRId64 " runqsize=%" PRId64
		    " state=%s",
		    p, status, r->schedticks[p], holder, r->runq[p], state);
	}
	sqlite3_bind_int64(ms, 1, ts);
	while ((rc = sqlite3_step(ms)) == SQLITE_ROW) {
		int64_t mid = sqlite3_column_int64(ms, 0);
		const char *s = (const char *)sqlite3_column_text(ms, 1);
		int64_t mp = sqlite3_column_type(ms, 2) == SQLITE_NULL
				     ? -1
				     : sqlite3_column_int64(ms, 2);
		int64_t curg = -1;
		sqlite3_reset(cur);
		sqlite3_bind_int64(cur, 1, ts);
		sqlite3_bind_int64(cur, 2, mid);
		if (sqlite3_step(cur) == SQLITE_ROW) {
			const char *n = (const char *)sqlite3_column_text(cur, 0);
			if (n != NULL && strcmp(n, "g_run") == 0)
				curg = sqlite3_column_int64(cur, 1);
		}
		OUT("\n  M%" PRId64 ": p=%" PRId64 " curg=%" PRId64
		    " spinning=%s blocked=%s state=%s",
		    mid, mp, curg, s != NULL && strcmp(s, "spinning") == 0 ? "true" : "false",
		    s != NULL && strcmp(s, "parked") == 0 ? "true" : "false", s != NULL ? s : "?");
	}
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(ps);
	sqlite3_finalize(ms);
	sqlite3_finalize(cur);
	return ret;
}

#undef OUT

int schedtrace_line(sqlite3 *db, const struct metrics *m, int64_t ts, bool detail, char *buf,
		    size_t size, struct wsr_err *err)
{
	struct schedtrace_row *r = malloc(sizeof(*r));
	sqlite3_stmt *q = NULL;
	int ret = -1, rc;

	(void)m;
	if (r == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (schedtrace_prepare_at(db, ts, &q, err) < 0)
		goto out;
	rc = schedtrace_next(db, q, r, err);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		err_push(err, "schedtrace: no row at %" PRId64, ts);
		goto out;
	}
	schedtrace_format(r, buf, size);
	if (detail && schedtrace_detail(db, r, buf, size, err) < 0)
		goto out;
	ret = 0;
out:
	sqlite3_finalize(q);
	free(r);
	return ret;
}
