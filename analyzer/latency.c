/*
 * latency.c - sched_latency's percentiles without sorting the view (latency.h).
 *
 * meta.latency_* are sched_latency's nearest-rank percentiles. Sorting the
 * whole view at the end cost a sort of one row per runnable interval; instead
 * the intervals are counted by latency bucket as they close (16 exact
 * buckets below 16 ns, then 8 per power of two), which says which bucket
 * holds each rank and the rank within it, and a query sorts only the rows of
 * that bucket. Exact, and memory does not depend on the trace.
 *
 * Invariants: bucket b holds the latencies in [lat_bounds(b)]; the buckets
 *   are ordered and disjoint, so the rank-th value is in the first bucket
 *   whose cumulative count reaches rank.
 * Concurrency: one thread.
 */
#include "config.h"

#include <inttypes.h>

#include <sqlite3.h>

#include "db.h"
#include "latency.h"

static int lat_bucket(int64_t v)
{
	if (v < 16)
		return v < 0 ? 0 : (int)v;
	int e = 63 - __builtin_clzll((unsigned long long)v);
	return 16 + (e - 4) * 8 + (int)((v >> (e - 3)) & 7);
}

/* Bucket b holds the latencies in [lo, last]. */
static void lat_bounds(int b, int64_t *lo, int64_t *last)
{
	if (b < 16) {
		*lo = *last = b;
		return;
	}
	int e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
	*lo = (int64_t)(8 + sub) << (e - 3);
	*last = *lo + (((int64_t)1 << (e - 3)) - 1);
}

void latency_count(struct latency *l, int64_t v)
{
	l->hist[lat_bucket(v)]++;
	if (l->n == 0 || v > l->max)
		l->max = v;
	l->n++;
}

static int lat_rank(const struct latency *l, sqlite3 *db, uint64_t rank, int64_t *out,
		    struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	uint64_t before = 0;
	int b = 0, ret = -1;
	int64_t lo, last;

	*out = 0;
	if (rank == 0)
		return 0;
	while (b < LAT_BUCKETS - 1 && before + l->hist[b] < rank)
		before += l->hist[b++];
	lat_bounds(b, &lo, &last);
	if (db_prepare(db, &st,
		       "SELECT latency_ns FROM sched_latency WHERE latency_ns >= ?1 AND "
		       "latency_ns <= ?2 ORDER BY 1 LIMIT 1 OFFSET ?3",
		       err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, last);
	sqlite3_bind_int64(st, 3, (int64_t)(rank - before - 1));
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
	} else {
		err_push(err, "sqlite: latency rank %" PRIu64 ": %s", rank,
			 rc == SQLITE_DONE ? "not in its bucket" : sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int latency_meta(const struct latency *l, sqlite3 *db, struct wsr_err *err)
{
	uint64_t n = l->n;
	int64_t p50 = 0, p90 = 0, p99 = 0;

	if (lat_rank(l, db, (n * 50 + 99) / 100, &p50, err) < 0 ||
	    lat_rank(l, db, (n * 90 + 99) / 100, &p90, err) < 0 ||
	    lat_rank(l, db, (n * 99 + 99) / 100, &p99, err) < 0)
		return -1;
	if (db_meta_int(db, "latency_n", (int64_t)n, err) < 0 ||
	    db_meta_int(db, "latency_p50_ns", p50, err) < 0 ||
	    db_meta_int(db, "latency_p90_ns", p90, err) < 0 ||
	    db_meta_int(db, "latency_p99_ns", p99, err) < 0 ||
	    db_meta_int(db, "latency_max_ns", n > 0 ? l->max : 0, err) < 0)
		return -1;
	return 0;
}
