/*
 * latency.h - the distribution of sched_latency (ready -> run), counted as
 * the runnable intervals close, for meta.latency_* (latency.c).
 *
 * Invariants: latency_count() is called once per runnable interval that is
 *   not cut, with its length; latency_meta() then writes the exact
 *   nearest-rank p50/p90/p99 and the max, from one scan of
 *   sched_latency's rows that keeps only the buckets holding those ranks.
 * Concurrency: one thread; latency_meta() needs the g_state rows flushed.
 */
#ifndef WSR_ANALYZER_LATENCY_H
#define WSR_ANALYZER_LATENCY_H

#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

#define LAT_BUCKETS 512

struct latency {
	uint64_t hist[LAT_BUCKETS];
	uint64_t n;
	int64_t max;
};

void latency_count(struct latency *l, int64_t v);
int latency_meta(const struct latency *l, sqlite3 *db, struct wsr_err *err);

#endif /* WSR_ANALYZER_LATENCY_H */
