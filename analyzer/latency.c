/*
 * latency.c - sched_latency's percentiles without sorting the view (latency.h).
 *
 * meta.latency_* are sched_latency's nearest-rank percentiles. Sorting the
 * whole view at the end cost a sort of one row per runnable interval; instead
 * the intervals are counted by latency bucket as they close (16 exact
 * buckets below 16 ns, then 8 per power of two), which says which bucket
 * holds each rank and the rank within it; one pass over the values then
 * keeps those of the (up to three) buckets and sorts each. Exact; memory is
 * the values of those buckets (8 bytes each: an eighth of an octave of
 * latencies), not the trace's.
 *
 * The values. They are sched_latency's rows: gstate.c g_close() counts the
 * dur of each g_interval row it writes with state runnable and cut 0.
 * latency_count() appends each to a spill file (8 bytes, LAT_SPILL at a
 * time; a file with no name beside the database), which the pass reads back
 * in order. Reading them back from g_interval's column blocks instead (an
 * SQL scan of the table) cost the deriver 712 M instructions of a
 * 1.46M-event ingestion's 4.13 G, for 364k values; three queries, one per
 * rank, had taken 1.5-3 s of a 10M-event ingestion's end.
 *
 * Invariants: bucket b holds the latencies in [lat_bounds(b)]; the buckets
 *   are ordered and disjoint, so the rank-th value is in the first bucket
 *   whose cumulative count reaches rank. The spill file holds exactly the
 *   values counted, in order: a pass that reads another number, or finds a
 *   bucket holding other than its count, is an internal error.
 * Concurrency: one thread.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A file with no name in the directory of path (O_TMPFILE: nothing is left
 * behind whatever kills this process), or, where the file system cannot,
 * one created and unlinked at once; -1 with errno. */
static int nameless_file_beside(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd = -1;

	if (dir == NULL)
		return -1;
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	free(dir);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.latXXXXXX", path) < 0)
		return -1;
	fd = mkstemp(tmp);
	if (fd >= 0)
		unlink(tmp);
	free(tmp);
	return fd;
}

int latency_open(struct latency *l, sqlite3 *db, struct wsr_err *err)
{
	const char *path = sqlite3_db_filename(db, "main");

	if (path != NULL && path[0] != '\0') {
		int fd = nameless_file_beside(path);
		if (fd >= 0 && (l->spill = fdopen(fd, "w+b")) == NULL)
			close(fd);
	} else {
		l->spill = tmpfile();
	}
	if (l->spill == NULL)
		err_push(err, "latency: cannot create a temporary file beside %s: %s",
			 path != NULL && path[0] != '\0' ? path : "the database", strerror(errno));
	return l->spill != NULL ? 0 : -1;
}

void latency_close(struct latency *l)
{
	if (l->spill != NULL)
		fclose(l->spill);
	l->spill = NULL;
}

/* The buffered values go to the spill file. */
static void lat_spill(struct latency *l)
{
	if (l->nbuf > 0 && l->spill_errno == 0 &&
	    fwrite(l->buf, sizeof(l->buf[0]), (size_t)l->nbuf, l->spill) != (size_t)l->nbuf)
		l->spill_errno = errno != 0 ? errno : EIO;
	l->nbuf = 0;
}

void latency_count(struct latency *l, int64_t v)
{
	l->hist[lat_bucket(v)]++;
	if (l->n == 0 || v > l->max)
		l->max = v;
	l->n++;
	l->buf[l->nbuf++] = v;
	if (l->nbuf == LAT_SPILL)
		lat_spill(l);
}

/* A percentile's rank: its bucket, the value's rank within the bucket
 * (from 0), and the values of the bucket read by the pass. */
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

#define LAT_RANKS 3 /* p50, p90, p99 */

/* Value v of the pass: kept if its bucket holds a rank (once: a bucket
 * shared by two ranks is kept by the first); more values in a bucket than
 * counted is an internal error. */
static int lat_keep(const struct latency *l, struct lat_target t[LAT_RANKS], int64_t v,
		    struct wsr_err *err)
{
	for (int i = 0; i < LAT_RANKS; i++) {
		if (v < t[i].lo || v > t[i].last)
			continue;
		if (t[i].n == l->hist[t[i].b]) {
			err_push(err,
				 "internal error: latency bucket %d holds more than its "
				 "%" PRIu64 " values",
				 t[i].b, l->hist[t[i].b]);
			return -1;
		}
		t[i].v[t[i].n++] = v;
		break;
	}
	return 0;
}

/*
 * The three ranks' values in one pass over the spill file, keeping only
 * the values of the buckets that hold them, then sorting each bucket's.
 */
static int lat_scan(struct latency *l, struct lat_target t[LAT_RANKS], struct wsr_err *err)
{
	uint64_t seen = 0;
	int ret = -1;

	for (int i = 0; i < LAT_RANKS; i++) {
		lat_target_find(l, &t[i]);
		t[i].v = malloc((size_t)l->hist[t[i].b] * sizeof(*t[i].v) + 1);
		if (t[i].v == NULL) {
			err_push(err, "out of memory");
			goto out;
		}
	}
	lat_spill(l);
	if (l->spill_errno == 0 && (fflush(l->spill) != 0 || fseek(l->spill, 0, SEEK_SET) != 0))
		l->spill_errno = errno != 0 ? errno : EIO;
	for (size_t got; l->spill_errno == 0 &&
			 (got = fread(l->buf, sizeof(l->buf[0]), LAT_SPILL, l->spill)) > 0;) {
		for (size_t k = 0; k < got; k++)
			if (lat_keep(l, t, l->buf[k], err) < 0)
				goto out;
		seen += got;
	}
	if (l->spill_errno == 0 && ferror(l->spill))
		l->spill_errno = errno != 0 ? errno : EIO;
	if (l->spill_errno != 0) {
		err_push(err, "latency percentiles: the spill file: %s", strerror(l->spill_errno));
		goto out;
	}
	if (seen != l->n) {
		err_push(err,
			 "internal error: %" PRIu64 " latencies read back, %" PRIu64 " counted",
			 seen, l->n);
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
	for (int i = 0; i < LAT_RANKS; i++) {
		free(t[i].v);
		t[i].v = NULL;
	}
	return ret;
}

int latency_meta(struct latency *l, sqlite3 *db, struct wsr_err *err)
{
	uint64_t n = l->n;
	struct lat_target t[LAT_RANKS] = {{.rank = (n * 50 + 99) / 100},
					  {.rank = (n * 90 + 99) / 100},
					  {.rank = (n * 99 + 99) / 100}};

	if (n > 0 && lat_scan(l, t, err) < 0)
		return -1;
	if (db_meta_int(db, "latency_n", (int64_t)n, err) < 0 ||
	    db_meta_int(db, "latency_p50_ns", t[0].out, err) < 0 ||
	    db_meta_int(db, "latency_p90_ns", t[1].out, err) < 0 ||
	    db_meta_int(db, "latency_p99_ns", t[2].out, err) < 0 ||
	    db_meta_int(db, "latency_max_ns", n > 0 ? l->max : 0, err) < 0)
		return -1;
	return 0;
}
