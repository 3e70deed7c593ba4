/*
 * dag.h - the computation DAG of a trace (strands and dependency edges),
 * its work, span and burdened span, and the greedy bounds
 * (docs/workspan.md, tables dag_strand and dag_edge of sql/schema.sql).
 *
 * Invariants:
 *   - dag_build() runs once, at the end of ingestion, after g and g_state
 *     are complete; it reads g, g_state and the g_create/g_ready events and
 *     writes dag_strand, dag_edge and the meta figures (work_ms, span_ms,
 *     parallelism, burdened_span_ms, burdened_parallelism, observed_ms,
 *     lower_bound_ms, greedy_bound_ms, ...). It does not commit.
 *   - Memory follows the number of strands and edges (one per g_run plus
 *     one per g_create/g_ready emitted by a G), not the number of events.
 * Concurrency: one thread, the ingesting connection (its rows go through
 *   rows.c's writer thread and are flushed before dag_build() returns).
 */
#ifndef WSR_ANALYZER_DAG_H
#define WSR_ANALYZER_DAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "err.h"

struct rows;

/* db: the ingesting connection, idle (rows flushed); rw: its rows writer
 * (rows.h), through which dag_strand and dag_edge are written. */
int dag_build(sqlite3 *db, struct rows *rw, struct wsr_err *err);

/* The figures dag_build() leaves in meta, as reports read them back. */
struct dag_figures {
	bool present; /* false: a database without a DAG (no G ever ran) */
	int procs;    /* P: meta.gomaxprocs */
	double work_ms, span_ms, parallelism, burdened_span_ms, burdened_parallelism;
	double observed_ms, lower_bound_ms, greedy_bound_ms, burdened_bound_ms;
	double external_wait_ms; /* waits the DAG has no edge for (dag.c) */
	double bound_position;   /* (T_P - lower) / (greedy - lower) */
	double span_strands;     /* span in mean strands: span * strands / work */
	int64_t strands, edges, spawn_edges, wake_edges, critical_strands;
	int64_t wakes_parent, wakes_ancestor, wakes_other, wakes_runtime, unplaced, roots;
	int64_t steal_attempts;   /* sum of steal_scan.probed */
	int64_t peak_live_stacks; /* most Gs started and not exited at once */
	bool fully_strict, strict;
};

/* Reads the figures from meta (read-only); f->present = false if absent. */
void dag_figures_load(sqlite3 *db, struct dag_figures *f);

/* The one-line statement the report makes about the bounds: which theorem
 * applies to this DAG and where T_P falls (no trailing newline). */
void dag_verdict(const struct dag_figures *f, char *buf, size_t size);

/* The report's "work and span" section: text (md: markdown) and the value
 * of its "work_span" JSON member. steals: successful steals of the trace;
 * lossy: events were discarded (the text says the figures are approximate). */
void dag_print_text(FILE *f, const struct dag_figures *w, int64_t steals, bool lossy, bool md);
void dag_print_json(FILE *f, const struct dag_figures *w, int64_t steals);

#endif /* WSR_ANALYZER_DAG_H */
