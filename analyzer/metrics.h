/*
 * metrics.h - the figures of a trace database, as `wsr report`, `wsr check`
 * and `wsr diff` (and the viewer) use them.
 *
 * Invariants:
 *   - metrics_load() fills every field from SQL over the tables of
 *     sql/schema.sql; it only reads (the database may be read-only).
 *   - Each named metric (metric_names) has a fixed meaning and unit, given
 *     in its name (_pct, _us, _ms) and in docs/report.md; figures that the
 *     discarded events may have touched are flagged `lossy` in metric_info.
 *   - Percentiles are exact (nearest-rank over all samples).
 *   - One place per figure: the report, `wsr check`, `wsr diff`, the viewer
 *     and the HTML report all read the figures from here (struct metrics,
 *     latency_hist, schedtrace_row); none recomputes one itself.
 * Concurrency: one thread per struct metrics / connection.
 */
#ifndef WSR_ANALYZER_METRICS_H
#define WSR_ANALYZER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "dag.h"
#include "err.h"

#define METRICS_MAX_P 256

struct p_metrics {
	int64_t running_ns, idle_ns, spinning_ns, syscall_ns, other_ns;
	int64_t steals_in, steals_out, gs_in, gs_out;
	int64_t spills, spilled_gs, global_gets, global_gs;
	int64_t runs, runnext_runs, schedticks;
};

struct metrics {
	char path[512];
	char program[256], hostname[256], runtime_version[128], vpid[32];
	char policy[32]; /* meta policy (init.policy): "" for traces of older runtimes */
	char policy_knobs[256]; /* meta policy_knobs (the knobs event): "" when absent */
	int64_t start_ts, end_ts, duration_ns;
	int gomaxprocs, np;
	int64_t events, wsr_events, discarded_events, discarded_packets, discarded_ranges;
	int64_t threads, gs;
	int64_t steals, stolen, spills, spilled, global_gets, global_gs;
	int64_t runs, runnext_runs;
	int64_t latency_n, latency_p50, latency_p90, latency_p99, latency_max; /* ns */
	int64_t spin_ns, spins, spins_found, spins_empty;
	int64_t idle_while_global_ns, idle_while_runnable_ns;
	int64_t schedtrace_interval_ns;
	/* From `wsr run`'s record (meta.command, exit_status, exit_signal): empty
	 * and -1 when the trace was recorded otherwise; init_missing: the trace
	 * has no init event, gomaxprocs is unknown. */
	char command[4096];
	int64_t exit_status, exit_signal;
	bool init_missing;
	bool unflushed; /* meta.unflushed: the trace may miss its last, uncounted events */
	struct dag_figures ws; /* work, span and the bounds (dag.h) */
	struct p_metrics p[METRICS_MAX_P];
};

int metrics_load(sqlite3 *db, const char *path, struct metrics *m, struct wsr_err *err);

/* The figures `wsr lab` reads beyond struct metrics (docs/lab.md, where the
 * SQL of each is written out). steal_attempts: meta steal_attempts (the sum of
 * steal_scan.probed), -1 when the database has none. Locality: of the
 * runnable intervals spent in a P's local queue (g_state runnable, p not
 * NULL, not cut) that ended in a run, local_runs ran on that same P. */
struct lab_figures {
	int64_t steal_attempts;
	int64_t queued_runs, local_runs;
	/* meta policy_knobs ("" when absent: a trace of an older runtime);
	 * topo_nodes, topo_per_node: its topology=NxM (0 without one). */
	char knobs[256];
	int topo_nodes, topo_per_node;
	/* Steals whose thief and victim are on different nodes of that
	 * topology (-1 without one); the steal_lock_wait events and the sum of
	 * their wait_ns (-1 unless meta policy is locked or trylock). */
	int64_t remote_steals, lock_waits, lock_wait_ns;
};

/* Fills F from meta (queued_runs and local_runs are counted by the deriver
 * at each run: gstate.c g_to). Returns 0, or -1 (pushed). */
int metrics_lab_load(sqlite3 *db, struct lab_figures *f, struct wsr_err *err);

/* The steal pairs (the view steal_graph, sql/views.sql): metrics_load()'s
 * per-P steals and totals, the report's matrix, JSON and DOT, and the
 * viewer's graph all read these rows. */
#define METRICS_STEAL_PAIRS_SQL                                                                    \
	"SELECT thief, victim, steals, gs FROM steal_graph ORDER BY thief, victim"

struct metric_info {
	const char *name;
	const char *what;
	bool lossy; /* may be off when events were discarded */
};

extern const struct metric_info metric_list[];
extern const int metric_count;

/* Value of a named metric; returns 0, or -1 for an unknown name. */
int metric_value(const struct metrics *m, const char *name, double *value);

/* Diagnostics: one rule each (id, title); metrics_diagnose() fills one
 * struct diag per rule that fired, with a plain sentence, and returns the
 * count. */
struct diag_rule {
	const char *id;
	const char *title; /* what holds when the rule does not fire */
};

struct diag {
	const char *id;
	char text[256];
};

extern const struct diag_rule diag_rules[];
extern const int diag_rule_count;

int metrics_diagnose(const struct metrics *m, struct diag *out, int max);

/* A P's share of the run by state, % of duration_ns: running Gs, idle,
 * spinning, syscall, and the rest (scheduling: held with no G running). */
void metrics_p_pcts(const struct metrics *m, int p, double out[5]);

/*
 * The scheduling-latency histogram of sched_latency (the viewer's picture):
 * bucket b holds [2^b, 2^(b+1)) ns (bucket 0 also 0 and 1), split by where
 * the G was taken from (latency_sources; the last one, "other", takes the
 * rest). count, percentiles and max are struct metrics' (meta.latency_*);
 * these are the figures only the histogram has.
 */
enum { LATENCY_BUCKETS = 48, LATENCY_SOURCES = 7 };
extern const char *const latency_sources[LATENCY_SOURCES];
struct latency_hist {
	int64_t n, min_ns, max_ns;
	double sum_ns;
	int lo, hi; /* the first and last bucket used; lo > hi when n == 0 */
	int64_t counts[LATENCY_BUCKETS][LATENCY_SOURCES];
};
/* stop(arg), if not NULL, is polled now and then: when it returns non-zero
 * the scan ends with an error ("cancelled"). */
int latency_hist_load(sqlite3 *db, struct latency_hist *h, int (*stop)(void *), void *arg,
		      struct wsr_err *err);

/*
 * The reconstructed schedtrace (sql/schedtrace.sql, the body of the view
 * `schedtrace`): the rows at start_ts + k * interval_ns for k = 1, 2, ...
 * up to end_ts (at most max_rows), or the one row at ts. The view, `wsr
 * report` and the viewer all read these rows.
 */
struct schedtrace_row {
	int64_t t_ms, ts, t; /* t_ms: the "SCHED Nms" label; t: ns after start_ts */
	int64_t gomaxprocs, idleprocs, threads, spinningthreads, needspinning, idlethreads;
	int64_t runqueue, runnable_gs, running_gs;
	int np; /* entries of runq and schedticks (the rows of table p) */
	int64_t runq[METRICS_MAX_P], schedticks[METRICS_MAX_P];
};

/* The default schedtrace interval (meta.schedtrace_interval_ns, else 1 ms): the
 * report's, the HTML report's and the viewer's. 0, or -1 on an SQLite error. */
int metrics_schedtrace_interval(sqlite3 *db, int64_t *ns, struct wsr_err *err);
int schedtrace_prepare(sqlite3 *db, int64_t interval_ns, int64_t max_rows, sqlite3_stmt **q,
		       struct wsr_err *err);
int schedtrace_prepare_at(sqlite3 *db, int64_t ts, sqlite3_stmt **q, struct wsr_err *err);
/* Steps q: 1 with the row in *r, 0 at the end, -1 on error. */
int schedtrace_next(sqlite3 *db, sqlite3_stmt *q, struct schedtrace_row *r, struct wsr_err *err);
/* Go's SCHED line of a row (no newline); returns the length it needed. */
size_t schedtrace_format(const struct schedtrace_row *r, char *buf, size_t size);
/* Appends the P and M lines of Go's scheddetail at r->ts to the string in
 * buf (size bytes in all; the text is cut there). */
int schedtrace_detail(sqlite3 *db, const struct schedtrace_row *r, char *buf, size_t size,
		      struct wsr_err *err);

/* The runtime's Go-format schedtrace at ts (one line, no newline), and with
 * detail the P and M lines after it (Go's scheddetail shape). */
int schedtrace_line(sqlite3 *db, const struct metrics *m, int64_t ts, bool detail, char *buf,
		    size_t size, struct wsr_err *err);

#endif /* WSR_ANALYZER_METRICS_H */
