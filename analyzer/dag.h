/*
 * dag.h - the work/span figures of a trace's computation DAG (strands and
 * dependency edges; docs/workspan.md, meta keys and tables dag_strand and
 * dag_edge of sql/schema.sql), as reports read them back from meta.
 *
 * Invariants:
 *   - The DAG tracker (dag.c, derive_int.h) computes them during ingestion,
 *     as the strands end, and writes them to meta in derive_finish():
 *     work_ms, span_ms, parallelism, burdened_span_ms, burdened_parallelism,
 *     observed_ms, lower_bound_ms, greedy_bound_ms, ...; meta.dag_tables
 *     says what dag_strand and dag_edge hold ('critical': the critical
 *     path's strands and no edge; 'all': every strand and edge).
 *   - Its memory follows the live Gs and the strands their longest paths
 *     hold, not the number of strands.
 * Concurrency: dag_figures_load() and the printers: any thread, on its own
 *   connection.
 */
#ifndef WSR_ANALYZER_DAG_H
#define WSR_ANALYZER_DAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "err.h"

/* The figures the DAG tracker leaves in meta, as reports read them back. */
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
