/*
 * latency.h - the distribution of sched_latency (ready -> run), counted as
 * the runnable intervals close, for meta.latency_* (latency.c).
 *
 * Invariants: latency_count() is called once per runnable interval that is
 *   not cut, with its length; latency_meta() then writes the exact
 *   nearest-rank p50/p90/p99 and the max, from one pass over the values
 *   counted (spilled to a file with no name as they come) that keeps only the
 *   buckets holding those ranks.
 * Concurrency: one thread.
 */
#ifndef WSR_ANALYZER_LATENCY_H
#define WSR_ANALYZER_LATENCY_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "err.h"

#define LAT_BUCKETS 512
#define LAT_SPILL   8192 /* values buffered per write to the spill file */

struct latency {
	uint64_t hist[LAT_BUCKETS];
	uint64_t n;
	int64_t max;
	FILE *spill;            /* every value counted, in order (no name) */
	int64_t buf[LAT_SPILL]; /* the values not yet in it */
	int nbuf;
	int spill_errno; /* the first write to it that failed (0: none) */
};

/* Opens the spill file in the database file's directory, with no name
 * (a temporary file when the database has none). */
int latency_open(struct latency *l, sqlite3 *db, struct wsr_err *err);
void latency_close(struct latency *l);
void latency_count(struct latency *l, int64_t v);
int latency_meta(struct latency *l, sqlite3 *db, struct wsr_err *err);

#endif /* WSR_ANALYZER_LATENCY_H */
