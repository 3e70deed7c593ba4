/*
 * rows.h - the rows of the trace database as the trackers produce them, and
 * the one place that writes them (rows.c): every INSERT of ingestion is
 * generated there from a column table, so a column is named once, beside
 * the struct field it comes from.
 *
 * Invariants:
 *   - A row is a plain struct below; rows_add() copies it (texts included)
 *     into the table's current batch, so the caller's strings need not
 *     outlive the call. Integers marked "opt" are NULL when ROW_NULL; "id"
 *     columns are NULL when negative (no P / no M); texts are NULL when the
 *     pointer is NULL. Every other integer is stored as given.
 *   - Rows of one table reach the database in the order they were added;
 *     nothing reads the tables before rows_flush() has returned.
 *   - Every sqlite3_step is checked; a failure pushes sqlite3_errmsg().
 * Concurrency: one thread adds rows (the deriver); a writer thread of
 *   rows.c steps the INSERTs on the connection given to rows_create(). The
 *   caller may use that connection only after rows_flush() has returned
 *   and until its next rows_add() (SQLite runs single-threaded: the two
 *   threads never use the connection at once).
 */
#ifndef WSR_ANALYZER_ROWS_H
#define WSR_ANALYZER_ROWS_H

#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

#define ROW_NULL INT64_MIN

enum rows_table {
	ROWS_EVENTS,
	ROWS_G_INTERVAL,
	ROWS_P_STATE,
	ROWS_M_STATE,
	ROWS_P_COUNTERS,
	ROWS_STEALS,
	ROWS_SPILLS,
	ROWS_GLOBAL_GETS,
	ROWS_G,
	ROWS_DISCARDED,
	ROWS_P,
	ROWS_M,
	ROWS_EVENT_COUNTS,
	ROWS_SCHED_FIELDS,
	ROWS_DAG_STRAND,
	ROWS_DAG_EDGE,
	ROWS_TABLES
};

/* events: cpu, tid, vpid, p, m, g, a1..a3 opt; extra NULL-able. */
/* events: every integer but id and ts opt. The counters (the counters
 * view) are set on the last event of a timestamp at which one changed. */
struct row_event {
	int64_t id, ts;
	const char *name;
	int64_t cpu, tid, vpid, p, m, g, a1, a2, a3;
	const char *extra;
	int64_t idle_ps, spinning_ms, idle_ms, threads, running_gs, runnable_gs, global_len;
};

/* g_interval (the g_state view): state a g_state_name id; p, m, reason (a
 * g_reason id) and source (an enum_g_source id) id, NULL when negative. */
struct row_g_interval {
	int64_t g, state, start_ts, dur, p, m, reason, source, cut, end_ts;
};

/* p_state (m: id) and m_state (p: id). */
struct row_p_state {
	int64_t p;
	const char *state;
	int64_t start_ts, end_ts, m, cut;
};

struct row_m_state {
	int64_t m;
	const char *state;
	int64_t start_ts, end_ts, p, cut;
};

struct row_p_counters {
	int64_t p, ts, runq, runnext, schedticks, runs;
};

struct row_steal {
	int64_t ts, thief, victim, m, n, runnext;
};

/* spills and global_gets */
struct row_queue_op {
	int64_t ts, p, m, n, global_len;
};

/* g_info (the g view): parent, first_run, ended (ns after created_ts) opt;
 * create_p id. */
struct row_g {
	int64_t g, parent, created_ts, first_run, ended, create_p, runs, stolen, run_ns,
		runnable_ns, waiting_ns, syscall_ns;
};

/* discarded: cpu id; begin_ts, end_ts, count opt. */
struct row_discarded {
	const char *kind, *stream;
	int64_t cpu, begin_ts, end_ts, count;
};

struct row_p {
	int64_t p, schedticks, syscalls, run_ns, runnext_runs, runs;
};

/* m: tid, creator opt. */
struct row_m {
	int64_t m, tid, created_ts, creator;
};

/* event_counts: added to the count already there for that name. */
struct row_event_count {
	const char *name;
	int64_t n;
};

/* schedtrace_fields: p and explained opt. */
struct row_sched_field {
	int64_t snap_id, snap_ts;
	const char *field;
	int64_t p, rt, recon, read_b, read_e;
	const char *racing;
	int64_t explained;
};

/* dag_strand: pred opt. */
struct row_dag_strand {
	int64_t id, g, seg, start_ts, end_ts;
	const char *ends;
	int64_t span_ns, burdened_ns, pred, critical;
};

/* dag_edge: relation NULL-able. */
struct row_dag_edge {
	int64_t src, dst;
	const char *kind;
	int64_t ts, delay_ns, burden_ns, stolen;
	const char *relation;
};

struct rows;

struct rows *rows_create(sqlite3 *db, struct wsr_err *err);
void rows_destroy(struct rows *rw);
/* Adds one row of table t (row: the struct of that table, above). */
int rows_add(struct rows *rw, enum rows_table t, const void *row, struct wsr_err *err);
/* Writes every row added so far. */
int rows_flush(struct rows *rw, struct wsr_err *err);
/* Rewrites event_counts from the events table (when names overflowed the
 * deriver's own count). */
int rows_recount_events(struct rows *rw, struct wsr_err *err);

#endif /* WSR_ANALYZER_ROWS_H */
