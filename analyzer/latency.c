/*
 * latency.c - sched_latency's percentiles without sorting the view (latency.h).
 *
 * meta.latency_* are sched_latency's nearest-rank percentiles. Sorting the
 * whole view at the end cost a sort of one row per runnable interval; instead
 * the intervals are counted by latency bucket as they close (16 exact
 * buckets below 16 ns, then 8 per power of two), which says which bucket
 * holds each rank and the rank within it; one scan of the intervals then
 * keeps the values of those (up to three) buckets and sorts each. Exact;
 * memory is the values of those buckets (8 bytes each: an eighth of an
 * octave of latencies), not the trace's. Three queries, one per rank (the
 * scan each time), took 1.5-3 s of a 10M-event ingestion's end.
 *
 * Invariants: bucket b holds the latencies in [lat_bounds(b)]; the buckets
 *   are ordered and disjoint, so the rank-th value is in the first bucket
 *   whose cumulative count reaches rank.
 * Concurrency: one thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "db.h"
#include "gtable.h"
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

/* A percentile's rank: its bucket, the value's rank within the bucket
 * (from 0), and the values of the bucket read by the scan. */
struct lat_target {
	uint64_t rank;
	int b;
	uint64_t within;
	int64_t lo, last;
	int64_t *v;
	uint64_t n;
	int64_t out;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The bucket of the rank-th latency and its rank within it. */
static void lat_target_find(const struct latency *l, struct lat_target *t)
{
	uint64_t before = 0;
	int b = 0;

	while (b < LAT_BUCKETS - 1 && before + l->hist[b] < t->rank)
		before += l->hist[b++];
	t->b = b;
	t->within = t->rank - before - 1;
	lat_bounds(b, &t->lo, &t->last);
}

/*
 * The three ranks' values in one scan of sched_latency's rows (read from
 * its table: g_interval runnable, not cut; latency = dur; the view's CASE
 * on every row cost 40% more), keeping only the values of the buckets that
 * hold them, then sorting each bucket's. A bucket whose rows are not the
 * ones latency_count() counted is an internal error, so this reading of
 * the view cannot drift from it unseen.
 */
#define LAT_RANKS 3 /* p50, p90, p99: the query's three ranges */
static int lat_scan(const struct latency *l, sqlite3 *db, struct lat_target t[LAT_RANKS],
		    struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	for (int i = 0; i < LAT_RANKS; i++) {
		lat_target_find(l, &t[i]);
		t[i].v = malloc((size_t)l->hist[t[i].b] * sizeof(*t[i].v) + 1);
		if (t[i].v == NULL) {
			err_push(err, "out of memory");
			goto out;
		}
	}
	if (db_prepare(db, &st,
		       "SELECT dur FROM g_interval WHERE state = ?1 AND cut = 0 AND "
		       "((dur >= ?2 AND dur <= ?3) OR (dur >= ?4 AND dur <= ?5) OR "
		       "(dur >= ?6 AND dur <= ?7))",
		       err) < 0)
		goto out;
	sqlite3_bind_int(st, 1, GS_RUNNABLE);
	for (int i = 0; i < LAT_RANKS; i++) {
		sqlite3_bind_int64(st, 2 + 2 * i, t[i].lo);
		sqlite3_bind_int64(st, 3 + 2 * i, t[i].last);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(st, 0);
		for (int i = 0; i < LAT_RANKS; i++) {
			if (v < t[i].lo || v > t[i].last)
				continue;
			/* more than counted: the rows are not the ones counted */
			if (t[i].n == l->hist[t[i].b]) {
				err_push(err, "internal error: latency bucket %d holds more than its "
					 "%" PRIu64 " values", t[i].b, l->hist[t[i].b]);
				goto out;
			}
			t[i].v[t[i].n++] = v;
			break; /* a bucket shared by two ranks is read once */
		}
	}
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: latency percentiles: %s", sqlite3_errmsg(db));
		goto out;
	}
	for (int i = 0; i < LAT_RANKS; i++) {
		const struct lat_target *o = &t[i]; /* the first target of this bucket */
		for (int j = i - 1; j >= 0; j--)
			if (t[j].b == t[i].b)
				o = &t[j];
		if (o->n != l->hist[o->b] || t[i].within >= o->n) {
			err_push(err, "internal error: latency rank %" PRIu64 ": not in its bucket",
				 t[i].rank);
			goto out;
		}
		if (o == &t[i])
			qsort(t[i].v, t[i].n, sizeof(*t[i].v), cmp_i64);
		t[i].out = o->v[t[i].within];
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	for (int i = 0; i < LAT_RANKS; i++) {
		free(t[i].v);
		t[i].v = NULL;
	}
	return ret;
}

int latency_meta(const struct latency *l, sqlite3 *db, struct wsr_err *err)
{
	uint64_t n = l->n;
	struct lat_target t[LAT_RANKS] = {
		{.rank = (n * 50 + 99) / 100}, {.rank = (n * 90 + 99) / 100}, {.rank = (n * 99 + 99) / 100}};

	if (n > 0 && lat_scan(l, db, t, err) < 0)
		return -1;
	if (db_meta_int(db, "latency_n", (int64_t)n, err) < 0 ||
	    db_meta_int(db, "latency_p50_ns", t[0].out, err) < 0 ||
	    db_meta_int(db, "latency_p90_ns", t[1].out, err) < 0 ||
	    db_meta_int(db, "latency_p99_ns", t[2].out, err) < 0 ||
	    db_meta_int(db, "latency_max_ns", n > 0 ? l->max : 0, err) < 0)
		return -1;
	return 0;
}
