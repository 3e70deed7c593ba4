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
	struct dag_figures ws; /* work, span and the bounds (dag.h) */
	struct p_metrics p[METRICS_MAX_P];
};

int metrics_load(sqlite3 *db, const char *path, struct metrics *m, struct wsr_err *err);

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

/* The runtime's Go-format schedtrace at ts (one line, no newline), and with
 * detail the P and M lines after it (Go's scheddetail shape). */
int schedtrace_line(sqlite3 *db, const struct metrics *m, int64_t ts, bool detail, char *buf,
		    size_t size, struct wsr_err *err);

#endif /* WSR_ANALYZER_METRICS_H */
