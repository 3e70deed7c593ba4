/*
 * store.c - level-of-detail index for the viewer (see store.h).
 *
 * Why in memory: a window of a big trace may cover millions of intervals,
 * and drawing it needs every one of them looked at once (to merge the ones
 * narrower than a pixel). Reading them from SQLite on each pan or zoom costs
 * seconds at full zoom-out; a sorted array walks a million spans in about a
 * millisecond. Spans take 24 bytes, so a 10-million-event trace (about
 * 2.5 million G slices and as many P and M intervals) holds ~150 MB.
 * Counters change at nearly every event, so they are not copied: a bucket
 * summary (min, max, last per counter) answers coarse windows and the
 * counters table (rowid = ts) answers fine ones.
 * Rejected: a per-window SQL scan with merging in C (linear in the window's
 * rows: fine zoomed in, seconds zoomed out); point sampling of counters
 * (drops spikes narrower than a pixel, which is exactly what one looks for).
 *
 * Invariants:
 *   - After loading, spans of a lane are sorted by start; a span that would
 *     start before the previous one ends is clipped to it (the database
 *     invariants say this never happens) and empty spans are dropped.
 *   - bucket b covers [b * bucket_ns, (b + 1) * bucket_ns); its min and max
 *     include the value held at its start.
 * Concurrency: store_init() runs first. store_load_runs() may then run on
 *   several threads at once, each into its own struct store (a copy of the
 *   initialised one) over its own rowid range and connection; the parts are
 *   merged with store_merge_runs() and completed by store_load_states().
 *   store_load_counters() writes only the counter fields, so it may run
 *   beside all of these. api.c publishes each part
 *   with a release store once it is complete; readers never touch a part
 *   before seeing its flag, and a complete part is never written again.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "store.h"

#define STORE_BUCKETS 262144

const char *const store_state_names[ST_NSTATES] = {
	"idle", "running", "spinning", "syscall", "parked", "no_p", "other",
};

const char *const store_counter_names[STORE_NCOUNTERS] = {
	"idle_ps", "spinning_ms", "runnable_gs", "global_len", "running_gs",
};

static enum store_state state_code(const unsigned char *s)
{
	if (s == NULL)
		return ST_OTHER;
	for (int i = 0; i < ST_OTHER; i++)
		if (strcmp((const char *)s, store_state_names[i]) == 0)
			return (enum store_state)i;
	return ST_OTHER;
}

/* The lane with this id in a sorted array of lanes, inserted if new. */
static struct store_lane *lane_get(struct store_lane **lanes, size_t *n, int64_t id)
{
	size_t lo = 0, hi = *n;
	struct store_lane *a;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((*lanes)[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < *n && (*lanes)[lo].id == id)
		return &(*lanes)[lo];
	a = realloc(*lanes, (*n + 1) * sizeof(*a));
	if (a == NULL)
		return NULL;
	memmove(&a[lo + 1], &a[lo], (*n - lo) * sizeof(*a));
	memset(&a[lo], 0, sizeof(*a));
	a[lo].id = id;
	*lanes = a;
	(*n)++;
	return &a[lo];
}

static int lane_push(struct store_lane *l, int64_t s, int64_t e, int32_t v)
{
	if (e < s)
		e = s;
	if (l->n == l->cap) {
		size_t cap = l->cap != 0 ? l->cap * 2 : 1024;
		struct store_span *a = realloc(l->v, cap * sizeof(*a));
		if (a == NULL)
			return -1;
		l->v = a;
		l->cap = cap;
	}
	l->v[l->n++] = (struct store_span){s, e, v};
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct store_span *x = a, *y = b;

	return (x->s > y->s) - (x->s < y->s);
}

/* Sorts a lane by start if the rows came out of order, then clips overlaps. */
static void lane_finish(struct store_lane *l)
{
	size_t w = 0;

	for (size_t i = 1; i < l->n; i++) {
		if (l->v[i].s < l->v[i - 1].s) {
			qsort(l->v, l->n, sizeof(*l->v), span_cmp);
			break;
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		struct store_span sp = l->v[i];
		if (w > 0 && sp.s < l->v[w - 1].e)
			sp.s = l->v[w - 1].e;
		if (sp.e <= sp.s)
			continue;
		l->v[w++] = sp;
	}
	l->n = w;
	free(l->blk);
	l->blk = NULL;
	if (l->n >= STORE_BLOCK)
		l->blk = calloc(l->n / STORE_BLOCK, sizeof(*l->blk));
	for (size_t b = 0; l->blk != NULL && b < l->n / STORE_BLOCK; b++) {
		struct store_block *bk = &l->blk[b];
		for (size_t i = b * STORE_BLOCK; i < (b + 1) * STORE_BLOCK; i++) {
			int64_t len = l->v[i].e - l->v[i].s;
			int64_t gap = i > 0 ? l->v[i].s - l->v[i - 1].e : 0;
			bk->busy += len;
			if (len > bk->maxw) {
				bk->maxw = len;
				bk->maxv = l->v[i].v;
			}
			if (gap > bk->maxgap)
				bk->maxgap = gap;
		}
	}
}

static int cancelled(const struct store *st, struct wsr_err *err)
{
	if (st->cancel != NULL && atomic_load_explicit(st->cancel, memory_order_relaxed)) {
		err_push(err, "cancelled");
		return 1;
	}
	return 0;
}

static int step(sqlite3 *db, sqlite3_stmt *q, struct wsr_err *err, int *row)
{
	int rc = sqlite3_step(q);

	if (rc == SQLITE_ROW) {
		*row = 1;
		return 0;
	}
	*row = 0;
	if (rc == SQLITE_DONE)
		return 0;
	err_push(err, "reading the database: %s", sqlite3_errmsg(db));
	return -1;
}

/* Loads (owner, state-or-g, start, end) rows into lanes; ?1, ?2 (if any) get lo, hi. */
static int load_lanes(struct store *st, sqlite3 *db, const char *sql, struct store_lane **lanes,
		      size_t *n, int is_state, int64_t lo, int64_t hi, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row;

	if (db_prepare(db, &q, sql, err) < 0) {
		goto out;
	}
	if (sqlite3_bind_parameter_count(q) == 2) {
		sqlite3_bind_int64(q, 1, lo);
		sqlite3_bind_int64(q, 2, hi);
	}
	for (;;) {
		if (step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		if ((st->spans & 0xffff) == 0 && cancelled(st, err))
			goto out;
		int64_t id = sqlite3_column_int64(q, 0);
		int32_t v = is_state ? (int32_t)state_code(sqlite3_column_text(q, 1))
				     : (int32_t)sqlite3_column_int64(q, 1);
		int64_t s = sqlite3_column_int64(q, 2) - st->start_ts;
		int64_t e = sqlite3_column_int64(q, 3) - st->start_ts;
		struct store_lane *l = lane_get(lanes, n, id);
		if (l == NULL || lane_push(l, s, e, v) < 0) {
			err_push(err, "out of memory loading lanes");
			goto out;
		}
		st->spans++;
	}
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

static int load_ids(sqlite3 *db, const char *sql, struct store_lane **lanes, size_t *n,
		    struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row;

	if (db_prepare(db, &q, sql, err) < 0) {
		goto out;
	}
	for (;;) {
		if (step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		if (lane_get(lanes, n, sqlite3_column_int64(q, 0)) == NULL) {
			err_push(err, "out of memory");
			goto out;
		}
	}
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

static void bucket_set(struct store_cbucket *b, const int32_t *v)
{
	for (int k = 0; k < STORE_NCOUNTERS; k++)
		b->min[k] = b->max[k] = b->last[k] = v[k];
}

static int load_counters(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row, have_first = 0;
	size_t cur = 0; /* buckets below cur are final */
	uint64_t rows = 0;
	int32_t carry[STORE_NCOUNTERS] = {0};
	const char *sql = "SELECT ts, idle_ps, spinning_ms, runnable_gs, global_len, running_gs "
			  "FROM counters ORDER BY ts";

	st->bucket_ns = st->duration_ns / STORE_BUCKETS + 1;
	st->nbuckets = (size_t)(st->duration_ns / st->bucket_ns) + 1;
	st->cb = calloc(st->nbuckets, sizeof(*st->cb));
	if (st->cb == NULL) {
		err_push(err, "out of memory for %zu counter buckets", st->nbuckets);
		goto out;
	}
	if (db_prepare(db, &q, sql, err) < 0) {
		goto out;
	}
	for (;;) {
		int32_t v[STORE_NCOUNTERS];
		int64_t t;
		size_t b;

		if (step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		t = sqlite3_column_int64(q, 0) - st->start_ts;
		if ((++rows & 0xffff) == 0 && cancelled(st, err))
			goto out;
		for (int k = 0; k < STORE_NCOUNTERS; k++)
			v[k] = (int32_t)sqlite3_column_int64(q, k + 1);
		if (!have_first) {
			memcpy(st->first, v, sizeof(v));
			memcpy(carry, v, sizeof(v));
			have_first = 1;
		}
		b = t <= 0 ? 0 : (size_t)(t / st->bucket_ns);
		if (b >= st->nbuckets)
			b = st->nbuckets - 1;
		if (b >= cur) {
			/* Buckets with no change hold the carried value; b opens with it. */
			for (; cur <= b; cur++)
				bucket_set(&st->cb[cur], carry);
		}
		for (int k = 0; k < STORE_NCOUNTERS; k++) {
			struct store_cbucket *cb = &st->cb[b];
			if (v[k] < cb->min[k])
				cb->min[k] = v[k];
			if (v[k] > cb->max[k])
				cb->max[k] = v[k];
			cb->last[k] = v[k];
		}
		memcpy(carry, v, sizeof(v));
	}
	for (; cur < st->nbuckets; cur++)
		bucket_set(&st->cb[cur], carry);
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

int store_init(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row;

	memset(st, 0, sizeof(*st));
	if (db_prepare(db, &q, "SELECT start_ts, end_ts, gomaxprocs FROM trace_info", err) < 0) {
		goto out;
	}
	if (step(db, q, err, &row) < 0)
		goto out;
	if (!row || sqlite3_column_type(q, 0) == SQLITE_NULL) {
		err_push(err, "the database has no start_ts in meta (empty trace?)");
		goto out;
	}
	st->start_ts = sqlite3_column_int64(q, 0);
	st->end_ts = sqlite3_column_int64(q, 1);
	st->gomaxprocs = sqlite3_column_int(q, 2);
	st->duration_ns = st->end_ts > st->start_ts ? st->end_ts - st->start_ts : 1;
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

int store_load_runs(struct store *st, sqlite3 *db, int64_t lo, int64_t hi, struct wsr_err *err)
{
	/*
	 * A sequential scan of g_state (by rowid range) is about twice as fast
	 * as walking the (state, start_ts) index, which needs a table lookup per
	 * row; the rows of one P come out nearly sorted and store_finish() sorts.
	 */
	return load_lanes(st, db,
			  "SELECT p, g, start_ts, end_ts FROM g_state NOT INDEXED "
			  "WHERE rowid >= ?1 AND rowid < ?2 AND state = 'running' AND p IS NOT NULL",
			  &st->p_runs, &st->nps, 0, lo, hi, err);
}

int store_merge_runs(struct store *st, struct store *part, struct wsr_err *err)
{
	int ret = 0;

	for (size_t i = 0; i < part->nps && ret == 0; i++) {
		const struct store_lane *src = &part->p_runs[i];
		struct store_lane *l = lane_get(&st->p_runs, &st->nps, src->id);
		for (size_t k = 0; l != NULL && k < src->n; k++)
			if (lane_push(l, src->v[k].s, src->v[k].e, src->v[k].v) < 0)
				l = NULL;
		if (l == NULL) {
			err_push(err, "out of memory merging lanes");
			ret = -1;
		}
	}
	st->spans += part->spans;
	store_free(part);
	return ret;
}

int store_load_states(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	for (int p = 0; p < st->gomaxprocs; p++) {
		if (lane_get(&st->p_runs, &st->nps, p) == NULL) {
			err_push(err, "out of memory");
			return -1;
		}
	}
	if (load_ids(db, "SELECT p FROM p ORDER BY p", &st->p_runs, &st->nps, err) < 0 ||
	    load_ids(db, "SELECT m FROM m ORDER BY m", &st->m_states, &st->nms, err) < 0)
		return -1;
	/* P state lanes get exactly the Ps of the run lanes, in the same order. */
	st->p_states = calloc(st->nps != 0 ? st->nps : 1, sizeof(*st->p_states));
	if (st->p_states == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < st->nps; i++)
		st->p_states[i].id = st->p_runs[i].id;
	{
		size_t n = st->nps;
		if (load_lanes(st, db,
			       "SELECT p, state, start_ts, end_ts FROM p_state ORDER BY p, start_ts",
			       &st->p_states, &n, 1, 0, 0, err) < 0)
			return -1;
		if (n != st->nps) {
			err_push(err, "p_state names a P that neither p nor g_state knows");
			return -1;
		}
	}
	if (load_lanes(st, db, "SELECT m, state, start_ts, end_ts FROM m_state ORDER BY m, start_ts",
		       &st->m_states, &st->nms, 1, 0, 0, err) < 0)
		return -1;
	for (size_t i = 0; i < st->nps; i++) {
		lane_finish(&st->p_runs[i]);
		lane_finish(&st->p_states[i]);
	}
	for (size_t i = 0; i < st->nms; i++)
		lane_finish(&st->m_states[i]);
	return 0;
}

int store_load_counters(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	return load_counters(st, db, err);
}

/*
 * The sampled overview (store_load_preview).
 *
 * The full lanes need a scan of g_state (seconds on a 10M-event trace); the
 * first picture must not wait for it. The trace is cut into ncells cells
 * and, at each cell's midpoint t, the indexes say which G runs on each P,
 * and the state of each P and M:
 *   - P and M states: p_state_p / m_state_m, the last row of the lane
 *     starting at or before t (one seek).
 *   - G runs: g_state_end, the running rows ending after t in end_ts order.
 *     Runs of one P do not overlap, so the first one met for a P either
 *     covers t (start <= t) or starts after it (no G runs on P at t, nor
 *     until that start). A P left unresolved after a few rows, whose state
 *     at t is running, is in a run longer than the others' activity: its
 *     start is found through p_counters (keyed by p, ts: runs goes up
 *     at each g_run on the P), the G through the g_run event at that instant
 *     (events is keyed by ts), the run's end through g_state_g; that reads
 *     the P's own rows since the run began, few on long runs. Searching
 *     g_state by end instead reads every other P's rows until the run ends
 *     (about 3 ms per long run here, 2 s for the 715 runs over 1 ms of the
 *     10M-event trace); it stays as a fallback under a time budget.
 * What a lookup finds is carried to the next cells (a run until its end, a
 * known gap until the next run), so a long span costs one lookup, however
 * many cells it covers.
 * A span at least a cell wide is kept as itself (real bounds, real G); a
 * shorter one stands for its whole cell, so a merged block's busy time is an
 * estimate of the real one (the fraction of the cells whose midpoint falls
 * in a run), not the sum of the sampled spans' lengths, which would shrink
 * with the sampling rate. Spans between two midpoints are not seen.
 * Rejected: per-pixel SQL aggregates (sum of run lengths per cell): any sum
 * visits every row, which is the full scan again; a rowid-stride sample of
 * g_state (rows are in end_ts order, but a rowid says nothing about which
 * P runs what at a time).
 */

/* What the overview knows about a lane from a lookup: v holds on [s, e). */
struct pv_carry {
	int valid;   /* [s, e) is known */
	int64_t s, e;
	int32_t v;   /* a G, a state, or -1: no G runs on the P there */
	int pushed;  /* the span was pushed as itself */
};

/* Budget of the per-P long-run queries, in total and per query. */
#define PV_LONG_TOTAL_MS 300
#define PV_LONG_QUERY_MS 20

struct pv_budget {
	int64_t deadline_ms;
};

static int64_t pv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Progress handler of the preview's connection: interrupts past the deadline. */
static int pv_progress(void *ud)
{
	const struct pv_budget *b = ud;

	return b->deadline_ms != 0 && pv_now_ms() > b->deadline_ms;
}

/* Pushes what the carry says about cell [c0, c1) into the lane. */
static int pv_push(struct store_lane *l, struct pv_carry *c, int64_t c0, int64_t c1, int64_t cell)
{
	if (!c->valid || c->v < 0)
		return 0;
	if (c->e - c->s >= cell) {
		if (c->pushed)
			return 0;
		c->pushed = 1;
		return lane_push(l, c->s, c->e, c->v);
	}
	return lane_push(l, c0, c1, c->v);
}

static size_t lane_index(const struct store_lane *lanes, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (lanes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && lanes[lo].id == id ? lo : n;
}

/* Runs q with ?1..?3 bound to a, b, c (as many as q has) and steps it once. */
static int pv_one(sqlite3 *db, sqlite3_stmt *q, int64_t a, int64_t b, int64_t c,
		  struct wsr_err *err, int *row)
{
	int n = sqlite3_bind_parameter_count(q);

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, a);
	if (n >= 2)
		sqlite3_bind_int64(q, 2, b);
	if (n >= 3)
		sqlite3_bind_int64(q, 3, c);
	return step(db, q, err, row);
}

/* The state row of lane id at or before abs (relative times into c). */
static int pv_state(const struct store *st, sqlite3 *db, sqlite3_stmt *q, int64_t id,
		    int64_t abs, struct pv_carry *c, struct wsr_err *err)
{
	int row;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int64(q, 2, abs);
	if (step(db, q, err, &row) < 0)
		return -1;
	memset(c, 0, sizeof(*c));
	if (row && sqlite3_column_int64(q, 2) > abs) {
		c->valid = 1;
		c->v = (int32_t)state_code(sqlite3_column_text(q, 0));
		c->s = sqlite3_column_int64(q, 1) - st->start_ts;
		c->e = sqlite3_column_int64(q, 2) - st->start_ts;
	}
	return 0;
}

/* Records in c what the first run of a P ending after abs says about t. */
static void pv_run(const struct store *st, struct pv_carry *c, int64_t abs, int64_t g, int64_t s,
		   int64_t e)
{
	memset(c, 0, sizeof(*c));
	c->valid = 1;
	if (s <= abs) {
		c->s = s - st->start_ts;
		c->e = e - st->start_ts;
		c->v = (int32_t)g;
	} else {
		c->s = abs - st->start_ts;
		c->e = s - st->start_ts;
		c->v = -1;
	}
}

int store_load_preview(struct store *st, sqlite3 *db, int ncells, int k0, int k1,
		       struct wsr_err *err)
{
	static const char *const sql[] = {
		"SELECT p, g, start_ts, end_ts FROM g_state WHERE end_ts > ?1 AND state = 'running' "
		"AND p IS NOT NULL ORDER BY end_ts",
		"SELECT p, g, start_ts, end_ts FROM g_state WHERE end_ts > ?1 AND state = 'running' "
		"AND p = ?2 ORDER BY end_ts LIMIT 1",
		"SELECT state, start_ts, end_ts FROM p_state WHERE p = ?1 AND start_ts <= ?2 "
		"ORDER BY start_ts DESC LIMIT 1",
		"SELECT state, start_ts, end_ts FROM m_state WHERE m = ?1 AND start_ts <= ?2 "
		"ORDER BY start_ts DESC LIMIT 1",
		"SELECT g FROM events WHERE ts = ?1 AND p = ?2 AND name = 'g_run' LIMIT 1",
		"SELECT p, g, start_ts, end_ts FROM g_state WHERE g = ?1 AND start_ts >= ?2 "
		"AND state = 'running' ORDER BY start_ts LIMIT 1",
		"SELECT ts, runs FROM p_counters WHERE p = ?1 AND ts <= ?2 "
		"ORDER BY ts DESC LIMIT 1",
		"SELECT ts FROM p_counters WHERE p = ?1 AND ts <= ?2 AND runs < ?3 "
		"ORDER BY ts DESC LIMIT 1",
		"SELECT ts FROM p_counters WHERE p = ?1 AND ts > ?2 ORDER BY ts LIMIT 1",
	};
	enum { Q_RUNS, Q_LONG, Q_PST, Q_MST, Q_START, Q_RUNOF, Q_TICKS, Q_BEFORE, Q_AFTER, NQ };
	sqlite3_stmt *q[NQ] = {NULL};
	struct pv_carry *run = NULL, *pst = NULL, *mst = NULL;
	int64_t *known = NULL; /* per P: no run starts on it after the last lookup, before known */
	struct pv_budget budget = {0};
	int64_t long_ms = 0;
	int ret = -1, row;

	if (ncells < 1)
		ncells = 1;
	st->preview = 1;
	for (int p = 0; p < st->gomaxprocs; p++)
		if (lane_get(&st->p_runs, &st->nps, p) == NULL)
			goto oom;
	if (load_ids(db, "SELECT p FROM p ORDER BY p", &st->p_runs, &st->nps, err) < 0 ||
	    load_ids(db, "SELECT m FROM m ORDER BY m", &st->m_states, &st->nms, err) < 0)
		goto out;
	st->p_states = calloc(st->nps != 0 ? st->nps : 1, sizeof(*st->p_states));
	run = calloc(st->nps + 1, sizeof(*run));
	pst = calloc(st->nps + 1, sizeof(*pst));
	mst = calloc(st->nms + 1, sizeof(*mst));
	known = calloc(st->nps + 1, sizeof(*known));
	if (st->p_states == NULL || run == NULL || pst == NULL || mst == NULL || known == NULL)
		goto oom;
	for (size_t i = 0; i < st->nps; i++)
		st->p_states[i].id = st->p_runs[i].id;
	for (int i = 0; i < NQ; i++) {
		if (db_prepare(db, &q[i], sql[i], err) < 0) {
			goto out;
		}
	}
	sqlite3_progress_handler(db, 1000, pv_progress, &budget);
	for (int k = k0; k < k1 && k < ncells; k++) {
		int64_t c0 = st->duration_ns * k / ncells, c1 = st->duration_ns * (k + 1) / ncells;
		int64_t cell = c1 - c0, t = c0 + cell / 2, abs = st->start_ts + t;
		size_t unresolved = 0, rows = 0;

		if ((k & 63) == 0 && cancelled(st, err))
			goto out;
		for (size_t i = 0; i < st->nps; i++) {
			if (!(pst[i].valid && pst[i].s <= t && t < pst[i].e) &&
			    pv_state(st, db, q[Q_PST], st->p_states[i].id, abs, &pst[i], err) < 0)
				goto out;
			if (pv_push(&st->p_states[i], &pst[i], c0, c1, cell) < 0)
				goto oom;
		}
		for (size_t i = 0; i < st->nms; i++) {
			if (!(mst[i].valid && mst[i].s <= t && t < mst[i].e) &&
			    pv_state(st, db, q[Q_MST], st->m_states[i].id, abs, &mst[i], err) < 0)
				goto out;
			if (pv_push(&st->m_states[i], &mst[i], c0, c1, cell) < 0)
				goto oom;
		}
		for (size_t i = 0; i < st->nps; i++) {
			if (!(run[i].valid && run[i].s <= t && t < run[i].e)) {
				/*
				 * What the last lookup knew: no run starts on the P
				 * after it and before e (the end of its run, the start
				 * of the next one, or just past the instant it saw).
				 */
				if (run[i].valid && run[i].e > known[i])
					known[i] = run[i].e;
				run[i].valid = 0;
				unresolved++;
			}
		}
		/* Runs ending after t, until every P is resolved or a few rows went by. */
		sqlite3_reset(q[Q_RUNS]);
		sqlite3_bind_int64(q[Q_RUNS], 1, abs);
		row = 1;
		while (unresolved > 0 && rows < 8 * st->nps + 16) {
			size_t i;

			if (step(db, q[Q_RUNS], err, &row) < 0)
				goto out;
			if (!row)
				break;
			rows++;
			i = lane_index(st->p_runs, st->nps, sqlite3_column_int64(q[Q_RUNS], 0));
			if (i == st->nps || run[i].valid)
				continue;
			pv_run(st, &run[i], abs, sqlite3_column_int64(q[Q_RUNS], 1),
			       sqlite3_column_int64(q[Q_RUNS], 2), sqlite3_column_int64(q[Q_RUNS], 3));
			unresolved--;
		}
		if (!row && unresolved > 0) {
			/* No run of these Ps ends after t: none runs from t to the end. */
			for (size_t i = 0; i < st->nps; i++) {
				if (!run[i].valid)
					run[i] = (struct pv_carry){1, t, st->duration_ns + 1, -1, 0};
			}
			unresolved = 0;
		}
		for (size_t i = 0; i < st->nps && unresolved > 0; i++) {
			int64_t t_q;
			int rc;

			if (run[i].valid)
				continue;
			/* A P not running Gs at t (idle, spinning, in a syscall) needs no search. */
			if (!pst[i].valid || pst[i].v != ST_RUNNING)
				continue;
			/*
			 * The start of the P's current run: p_counters (keyed by p, ts)
			 * has a row at each g_run on the P, where runs goes up;
			 * the first row with the runs held at t is the run's
			 * start, and the g_run event at that instant names the G. This
			 * reads only the P's own rows since the start (a few where long
			 * runs are), unlike g_state in end_ts order, which holds every
			 * other P's rows until the run ends.
			 */
			{
				int64_t ts0, rs, re, g;

				if (pv_one(db, q[Q_TICKS], st->p_runs[i].id, abs, 0, err, &row) < 0)
					goto out;
				if (!row)
					goto long_query;
				if (sqlite3_column_int64(q[Q_TICKS], 0) - st->start_ts < known[i]) {
					/* No g_run on the P in [known, t]: no G started since. */
					run[i] = (struct pv_carry){1, t, t + 1, -1, 0};
					continue;
				}
				if (pv_one(db, q[Q_BEFORE], st->p_runs[i].id, abs,
					   sqlite3_column_int64(q[Q_TICKS], 1), err, &row) < 0)
					goto out;
				if (pv_one(db, q[Q_AFTER], st->p_runs[i].id,
					   row ? sqlite3_column_int64(q[Q_BEFORE], 0) : INT64_MIN, 0, err,
					   &row) < 0)
					goto out;
				if (!row)
					goto long_query;
				ts0 = sqlite3_column_int64(q[Q_AFTER], 0);
				if (pv_one(db, q[Q_START], ts0, st->p_runs[i].id, 0, err, &row) < 0)
					goto out;
				if (!row)
					goto long_query;
				g = sqlite3_column_int64(q[Q_START], 0);
				if (pv_one(db, q[Q_RUNOF], g, ts0, 0, err, &row) < 0)
					goto out;
				rs = row ? sqlite3_column_int64(q[Q_RUNOF], 2) : 0;
				re = row ? sqlite3_column_int64(q[Q_RUNOF], 3) : 0;
				if (!row || rs != ts0 ||
				    sqlite3_column_int64(q[Q_RUNOF], 0) != st->p_runs[i].id)
					goto long_query;
				if (re > abs)
					pv_run(st, &run[i], abs, g, rs, re);
				else
					run[i] = (struct pv_carry){1, t, t + 1, -1, 0};
				continue;
			}
long_query:
			/* Not found that way (a database from another deriver?): search by end. */
			if (!pst[i].valid || pst[i].v != ST_RUNNING || long_ms >= PV_LONG_TOTAL_MS)
				continue;
			t_q = pv_now_ms();
			budget.deadline_ms = t_q + PV_LONG_QUERY_MS;
			sqlite3_reset(q[Q_LONG]);
			sqlite3_bind_int64(q[Q_LONG], 1, abs);
			sqlite3_bind_int64(q[Q_LONG], 2, st->p_runs[i].id);
			rc = sqlite3_step(q[Q_LONG]);
			budget.deadline_ms = 0;
			long_ms += pv_now_ms() - t_q;
			if (rc == SQLITE_ROW)
				pv_run(st, &run[i], abs, sqlite3_column_int64(q[Q_LONG], 1),
				       sqlite3_column_int64(q[Q_LONG], 2),
				       sqlite3_column_int64(q[Q_LONG], 3));
			else if (rc == SQLITE_DONE)
				run[i] = (struct pv_carry){1, t, st->duration_ns + 1, -1, 0};
			else if (rc != SQLITE_INTERRUPT) {
				err_push(err, "reading g_state: %s", sqlite3_errmsg(db));
				goto out;
			}
			sqlite3_reset(q[Q_LONG]);
		}
		for (size_t i = 0; i < st->nps; i++)
			if (pv_push(&st->p_runs[i], &run[i], c0, c1, cell) < 0)
				goto oom;
	}
	ret = 0;
	goto out;
oom:
	err_push(err, "out of memory building the overview");
out:
	sqlite3_progress_handler(db, 0, NULL, NULL);
	for (int i = 0; i < NQ; i++)
		sqlite3_finalize(q[i]);
	free(run);
	free(known);
	free(pst);
	free(mst);
	return ret;
}

static int lanes_append(struct store_lane *dst, const struct store_lane *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < src[i].n; k++)
			if (lane_push(&dst[i], src[i].v[k].s, src[i].v[k].e, src[i].v[k].v) < 0)
				return -1;
	return 0;
}

int store_finish_preview(struct store *st, struct store *part, struct wsr_err *err)
{
	int ret = 0;

	if (part != NULL) {
		/* Both built their lanes from the same ids, in the same order. */
		if (part->nps != st->nps || part->nms != st->nms) {
			err_push(err, "the overview's parts disagree on the Ps and Ms");
			ret = -1;
		} else if (lanes_append(st->p_runs, part->p_runs, st->nps) < 0 ||
			   lanes_append(st->p_states, part->p_states, st->nps) < 0 ||
			   lanes_append(st->m_states, part->m_states, st->nms) < 0) {
			err_push(err, "out of memory merging the overview");
			ret = -1;
		}
		store_free(part);
	}
	/* A span found by both parts is clipped to nothing by lane_finish. */
	for (size_t i = 0; i < st->nps; i++) {
		lane_finish(&st->p_runs[i]);
		lane_finish(&st->p_states[i]);
		st->spans += st->p_runs[i].n + st->p_states[i].n;
	}
	for (size_t i = 0; i < st->nms; i++) {
		lane_finish(&st->m_states[i]);
		st->spans += st->m_states[i].n;
	}
	return ret;
}

static void lanes_free(struct store_lane *l, size_t n)
{
	for (size_t i = 0; l != NULL && i < n; i++) {
		free(l[i].v);
		free(l[i].blk);
	}
	free(l);
}

void store_free(struct store *st)
{
	lanes_free(st->p_runs, st->nps);
	lanes_free(st->p_states, st->nps);
	lanes_free(st->m_states, st->nms);
	free(st->cb);
	memset(st, 0, sizeof(*st));
}

/* A block of merged spans being built. */
struct acc {
	int active;
	int64_t s, e, busy, vlen;
	int32_t v;
	uint32_t n;
	int64_t st_t[ST_NSTATES];
};

static void acc_flush(struct sbuf *out, struct acc *a, int is_state)
{
	if (!a->active)
		return;
	if (is_state && a->n > 1) {
		int best = 0;
		for (int i = 1; i < ST_NSTATES; i++)
			if (a->st_t[i] > a->st_t[best])
				best = i;
		a->v = best;
	}
	sb_printf(out, "[%" PRId64 ",%" PRId64 ",%d,%u,%" PRId64 "],", a->s, a->e, (int)a->v, a->n,
		  a->busy);
	a->active = 0;
}

/* Index of the first span ending after t (spans' ends are non-decreasing). */
static size_t lane_first_after(const struct store_lane *l, int64_t t)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->v[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Writes the spans of l meeting [t0, t1) as [s, e, v, n, busy] items. A span
 * at least a pixel wide is written as itself (n = 1, real bounds); narrower
 * ones are merged with their neighbours into blocks of at most about a pixel
 * while the gaps between them are under a pixel: n counts them, busy sums
 * their time, v is the G of the longest (run lanes) or the state that takes
 * most time (state lanes).
 */
static void lane_json(struct sbuf *out, const struct store_lane *l, int64_t t0, int64_t t1,
		      int64_t nspp, int is_state)
{
	struct acc a = {0};

	sb_putc(out, '[');
	for (size_t i = lane_first_after(l, t0); i < l->n && l->v[i].s < t1; i++) {
		const struct store_span *sp = &l->v[i];

		/*
		 * Fast path for dense windows: a whole block of spans that are all
		 * narrower than a pixel, with gaps under a pixel, starting inside
		 * the open block's pixel and ending inside the window, joins the
		 * block at once (the rule below, applied 64 spans at a time). A
		 * whole-trace window then costs O(pixels), not O(spans).
		 */
		while (!is_state && a.active && l->blk != NULL && i % STORE_BLOCK == 0 &&
		       i + STORE_BLOCK <= l->n) {
			const struct store_block *bk = &l->blk[i / STORE_BLOCK];
			const struct store_span *last = &l->v[i + STORE_BLOCK - 1];
			if (bk->maxw >= nspp || bk->maxgap >= nspp || l->v[i].s - a.e >= nspp ||
			    last->s - a.s >= nspp || last->e > t1 || l->v[i].s < t0)
				break;
			a.e = last->e;
			a.n += STORE_BLOCK;
			a.busy += bk->busy;
			if (bk->maxw > a.vlen) {
				a.vlen = bk->maxw;
				a.v = bk->maxv;
			}
			i += STORE_BLOCK;
		}
		if (i >= l->n || l->v[i].s >= t1)
			break;
		sp = &l->v[i];
		int64_t cs = sp->s > t0 ? sp->s : t0;
		int64_t ce = sp->e < t1 ? sp->e : t1;
		int64_t w = ce - cs;

		if (w >= nspp) {
			acc_flush(out, &a, is_state);
			sb_printf(out, "[%" PRId64 ",%" PRId64 ",%d,1,%" PRId64 "],", sp->s, sp->e,
				  (int)sp->v, w);
			continue;
		}
		if (a.active && cs - a.e < nspp && a.e - a.s < nspp) {
			a.e = ce;
			a.n++;
			a.busy += w;
			if (is_state && sp->v >= 0 && sp->v < ST_NSTATES)
				a.st_t[sp->v] += w;
			if (w > a.vlen) {
				a.vlen = w;
				a.v = sp->v;
			}
			continue;
		}
		acc_flush(out, &a, is_state);
		memset(&a, 0, sizeof(a));
		a.active = 1;
		a.s = cs;
		a.e = ce;
		a.n = 1;
		a.busy = w;
		a.v = sp->v;
		a.vlen = w;
		if (is_state && sp->v >= 0 && sp->v < ST_NSTATES)
			a.st_t[sp->v] = w;
	}
	acc_flush(out, &a, is_state);
	sb_uncomma(out);
	sb_putc(out, ']');
}

void store_timeline_json(const struct store *st, int64_t t0, int64_t t1, int px, struct sbuf *out)
{
	int64_t nspp = (t1 - t0) / px;

	if (nspp < 1)
		nspp = 1;
	sb_printf(out, "{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"nspp\":%" PRId64 "%s,\"p\":[", t0,
		  t1, nspp, st->preview ? ",\"preview\":true" : "");
	for (size_t i = 0; i < st->nps; i++) {
		sb_printf(out, "{\"p\":%" PRId64 ",\"runs\":", st->p_runs[i].id);
		lane_json(out, &st->p_runs[i], t0, t1, nspp, 0);
		sb_puts(out, ",\"states\":");
		lane_json(out, &st->p_states[i], t0, t1, nspp, 1);
		sb_puts(out, "},");
	}
	sb_uncomma(out);
	sb_puts(out, "],\"m\":[");
	for (size_t i = 0; i < st->nms; i++) {
		sb_printf(out, "{\"m\":%" PRId64 ",\"states\":", st->m_states[i].id);
		lane_json(out, &st->m_states[i], t0, t1, nspp, 1);
		sb_puts(out, "},");
	}
	sb_uncomma(out);
	sb_puts(out, "]}");
}

/* Per-pixel min, max and last of each counter. */
struct cpix {
	int px;
	int32_t *mn, *mx, *ls; /* [k * px + j] */
};

static void cpix_write(struct cpix *c, int j, const int32_t *mn, const int32_t *mx,
		       const int32_t *ls)
{
	for (int k = 0; k < STORE_NCOUNTERS; k++) {
		c->mn[k * c->px + j] = mn[k];
		c->mx[k * c->px + j] = mx[k];
		c->ls[k * c->px + j] = ls[k];
	}
}

static void from_buckets(const struct store *st, struct cpix *c, int64_t t0, double nspp)
{
	for (int j = 0; j < c->px; j++) {
		int64_t a = t0 + (int64_t)(j * nspp), b = t0 + (int64_t)((j + 1) * nspp);
		int32_t mn[STORE_NCOUNTERS], mx[STORE_NCOUNTERS], ls[STORE_NCOUNTERS];
		int64_t ba, bb;

		if (b <= 0) {
			cpix_write(c, j, st->first, st->first, st->first);
			continue;
		}
		ba = a <= 0 ? 0 : a / st->bucket_ns;
		bb = (b - 1) / st->bucket_ns;
		if (ba >= (int64_t)st->nbuckets)
			ba = (int64_t)st->nbuckets - 1;
		if (bb >= (int64_t)st->nbuckets)
			bb = (int64_t)st->nbuckets - 1;
		for (int k = 0; k < STORE_NCOUNTERS; k++) {
			mn[k] = st->cb[ba].min[k];
			mx[k] = st->cb[ba].max[k];
			ls[k] = st->cb[bb].last[k];
		}
		for (int64_t i = ba + 1; i <= bb; i++) {
			for (int k = 0; k < STORE_NCOUNTERS; k++) {
				if (st->cb[i].min[k] < mn[k])
					mn[k] = st->cb[i].min[k];
				if (st->cb[i].max[k] > mx[k])
					mx[k] = st->cb[i].max[k];
			}
		}
		cpix_write(c, j, mn, mx, ls);
	}
}

static int from_table(const struct store *st, sqlite3 *db, struct cpix *c, int64_t t0, int64_t t1,
		      double nspp, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row, j = 0;
	int32_t carry[STORE_NCOUNTERS], mn[STORE_NCOUNTERS], mx[STORE_NCOUNTERS];
	const char *cols = "ts, idle_ps, spinning_ms, runnable_gs, global_len, running_gs";
	char sql[256];

	memcpy(carry, st->first, sizeof(carry));
	snprintf(sql, sizeof(sql), "SELECT %s FROM counters WHERE ts <= ? ORDER BY ts DESC LIMIT 1",
		 cols);
	if (db_prepare(db, &q, sql, err) < 0)
		goto out;
	sqlite3_bind_int64(q, 1, st->start_ts + t0);
	if (step(db, q, err, &row) < 0)
		goto out;
	if (row)
		for (int k = 0; k < STORE_NCOUNTERS; k++)
			carry[k] = (int32_t)sqlite3_column_int64(q, k + 1);
	sqlite3_finalize(q);
	q = NULL;
	snprintf(sql, sizeof(sql), "SELECT %s FROM counters WHERE ts > ? AND ts < ? ORDER BY ts",
		 cols);
	if (db_prepare(db, &q, sql, err) < 0)
		goto out;
	sqlite3_bind_int64(q, 1, st->start_ts + t0);
	sqlite3_bind_int64(q, 2, st->start_ts + t1);
	memcpy(mn, carry, sizeof(mn));
	memcpy(mx, carry, sizeof(mx));
	for (;;) {
		if (step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		int pj = (int)((double)(sqlite3_column_int64(q, 0) - st->start_ts - t0) / nspp);
		if (pj >= c->px)
			pj = c->px - 1;
		for (; j < pj; j++) {
			cpix_write(c, j, mn, mx, carry);
			memcpy(mn, carry, sizeof(mn));
			memcpy(mx, carry, sizeof(mx));
		}
		for (int k = 0; k < STORE_NCOUNTERS; k++) {
			int32_t v = (int32_t)sqlite3_column_int64(q, k + 1);
			if (v < mn[k])
				mn[k] = v;
			if (v > mx[k])
				mx[k] = v;
			carry[k] = v;
		}
	}
	for (; j < c->px; j++) {
		cpix_write(c, j, mn, mx, carry);
		memcpy(mn, carry, sizeof(mn));
		memcpy(mx, carry, sizeof(mx));
	}
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

static void int_array(struct sbuf *out, const int32_t *v, int n)
{
	sb_putc(out, '[');
	for (int j = 0; j < n; j++)
		sb_printf(out, "%s%d", j != 0 ? "," : "", (int)v[j]);
	sb_putc(out, ']');
}

int store_counters_json(const struct store *st, sqlite3 *db, int64_t t0, int64_t t1, int px,
			struct sbuf *out, struct wsr_err *err)
{
	struct cpix c = {.px = px};
	double nspp = (double)(t1 - t0) / px;
	int ret = -1;

	c.mn = calloc((size_t)px * STORE_NCOUNTERS, sizeof(int32_t));
	c.mx = calloc((size_t)px * STORE_NCOUNTERS, sizeof(int32_t));
	c.ls = calloc((size_t)px * STORE_NCOUNTERS, sizeof(int32_t));
	if (c.mn == NULL || c.mx == NULL || c.ls == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (nspp >= 2.0 * (double)st->bucket_ns)
		from_buckets(st, &c, t0, nspp);
	else if (from_table(st, db, &c, t0, t1, nspp, err) < 0)
		goto out;
	sb_printf(out, "{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"px\":%d,\"series\":{", t0, t1, px);
	for (int k = 0; k < STORE_NCOUNTERS; k++) {
		sb_printf(out, "%s\"%s\":{\"min\":", k != 0 ? "," : "", store_counter_names[k]);
		int_array(out, c.mn + k * px, px);
		sb_puts(out, ",\"max\":");
		int_array(out, c.mx + k * px, px);
		sb_puts(out, ",\"last\":");
		int_array(out, c.ls + k * px, px);
		sb_putc(out, '}');
	}
	sb_puts(out, "}}");
	ret = 0;
out:
	free(c.mn);
	free(c.mx);
	free(c.ls);
	return ret;
}
