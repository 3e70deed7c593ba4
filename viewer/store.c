/*
 * store.c - level-of-detail index for the viewer (see store.h): its lanes
 * and loading the full index. The sampled overview is store_preview.c, the
 * window answers store_query.c; the three share store_impl.h.
 *
 * Why in memory: a window of a big trace may cover millions of intervals,
 * and drawing it needs every one of them looked at once (to merge the ones
 * narrower than a pixel). Reading them from SQLite on each pan or zoom costs
 * seconds at full zoom-out; a sorted array walks a million spans in about a
 * millisecond. Spans take 24 bytes, so a 10-million-event trace (about
 * 2.5 million G slices and as many P and M intervals) holds ~150 MB.
 * Counters change at nearly every event, so they are not copied: a bucket
 * summary (min, max, last per counter) answers coarse windows and the
 * counters view (by ts: the events table's key) answers fine ones.
 * The G runs and the buckets are read from the column blocks directly
 * (blockread.h): through SQL, a statement step and a call per value cost
 * 2.5 times the CPU of decoding the blocks (docs/performance.md, "The
 * HTML report").
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
 *   beside all of these. api_load.c publishes each part
 *   with a release store once it is complete; readers never touch a part
 *   before seeing its flag, and a complete part is never written again.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blockread.h"
#include "db.h"
#include "store.h"
#include "store_impl.h"

#define STORE_BUCKETS 262144

const char *const store_state_names[ST_NSTATES] = {
	"idle", "running", "spinning", "syscall", "parked", "no_p", "other",
};

const char *const store_counter_names[STORE_NCOUNTERS] = {
	"idle_ps", "spinning_ms", "runnable_gs", "global_len", "running_gs",
};

enum store_state store_state_code(const unsigned char *s)
{
	if (s == NULL)
		return ST_OTHER;
	for (int i = 0; i < ST_OTHER; i++)
		if (strcmp((const char *)s, store_state_names[i]) == 0)
			return (enum store_state)i;
	return ST_OTHER;
}

/* The lane with this id in a sorted array of lanes, inserted if new. */
struct store_lane *store_lane_get(struct store_lane **lanes, size_t *n, int64_t id)
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

int store_lane_push(struct store_lane *l, int64_t s, int64_t e, int32_t v)
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
void store_lane_finish(struct store_lane *l)
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

int store_cancelled(const struct store *st, struct wsr_err *err)
{
	if (st->cancel != NULL && atomic_load_explicit(st->cancel, memory_order_relaxed)) {
		err_push(err, "cancelled");
		return 1;
	}
	return 0;
}

int store_step(sqlite3 *db, sqlite3_stmt *q, struct wsr_err *err, int *row)
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
		if (store_step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		if ((st->spans & 0xffff) == 0 && store_cancelled(st, err))
			goto out;
		int64_t id = sqlite3_column_int64(q, 0);
		int32_t v = is_state ? (int32_t)store_state_code(sqlite3_column_text(q, 1))
				     : (int32_t)sqlite3_column_int64(q, 1);
		int64_t s = sqlite3_column_int64(q, 2) - st->start_ts;
		int64_t e = sqlite3_column_int64(q, 3) - st->start_ts;
		struct store_lane *l = store_lane_get(lanes, n, id);
		if (l == NULL || store_lane_push(l, s, e, v) < 0) {
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

int store_load_ids(sqlite3 *db, const char *sql, struct store_lane **lanes, size_t *n,
		    struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int ret = -1, row;

	if (db_prepare(db, &q, sql, err) < 0) {
		goto out;
	}
	for (;;) {
		if (store_step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		if (store_lane_get(lanes, n, sqlite3_column_int64(q, 0)) == NULL) {
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

/* Folds the counters v (after an event at t, from the trace's start) into the buckets. */
static void counters_add(struct store *st, size_t *cur, int32_t *carry, int64_t t,
			 const int32_t *v)
{
	size_t b = t <= 0 ? 0 : (size_t)(t / st->bucket_ns);

	if (b >= st->nbuckets)
		b = st->nbuckets - 1;
	if (b >= *cur) {
		/* Buckets with no change hold the carried value; b opens with it. */
		for (; *cur <= b; (*cur)++)
			bucket_set(&st->cb[*cur], carry);
	}
	for (int k = 0; k < STORE_NCOUNTERS; k++) {
		struct store_cbucket *cb = &st->cb[b];
		if (v[k] < cb->min[k])
			cb->min[k] = v[k];
		if (v[k] > cb->max[k])
			cb->max[k] = v[k];
		cb->last[k] = v[k];
	}
	memcpy(carry, v, STORE_NCOUNTERS * sizeof(*v));
}

/*
 * The counters view's rows (events whose running_gs is not NULL, in ts order:
 * the events' storage order), read from the events blocks directly: through
 * SQL this was a statement step and six column calls for each of 10 M events,
 * most of the viewer's start-up.
 */
static int load_counters(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	const char *cols[1 + STORE_NCOUNTERS] = {"ts"};
	struct blockread *br = NULL;
	struct blockread_block blk;
	int ret = -1, rc, have_first = 0;
	size_t cur = 0; /* buckets below cur are final */
	int32_t carry[STORE_NCOUNTERS] = {0};

	st->bucket_ns = st->duration_ns / STORE_BUCKETS + 1;
	st->nbuckets = (size_t)(st->duration_ns / st->bucket_ns) + 1;
	st->cb = calloc(st->nbuckets, sizeof(*st->cb));
	if (st->cb == NULL) {
		err_push(err, "out of memory for %zu counter buckets", st->nbuckets);
		goto out;
	}
	for (int k = 0; k < STORE_NCOUNTERS; k++)
		cols[1 + k] = store_counter_names[k];
	if (blockread_open(db, "events", cols, 1 + STORE_NCOUNTERS, &br, err) < 0)
		goto out;
	while ((rc = blockread_next(br, &blk, err)) > 0) {
		const int64_t *ts = blk.v[0];
		/* the view's rows: running_gs (store_counter_names' last) not NULL */
		const uint8_t *none = blk.null[STORE_NCOUNTERS];
		if (store_cancelled(st, err))
			goto out;
		for (uint32_t r = 0; r < blk.nrows; r++) {
			int32_t v[STORE_NCOUNTERS];
			if (none[r])
				continue;
			for (int k = 0; k < STORE_NCOUNTERS; k++)
				v[k] = (int32_t)blk.v[1 + k][r];
			if (!have_first) {
				memcpy(st->first, v, sizeof(v));
				memcpy(carry, v, sizeof(v));
				have_first = 1;
			}
			counters_add(st, &cur, carry, ts[r] - st->start_ts, v);
		}
	}
	if (rc < 0)
		goto out;
	for (; cur < st->nbuckets; cur++)
		bucket_set(&st->cb[cur], carry);
	ret = 0;
out:
	blockread_close(br);
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
	if (store_step(db, q, err, &row) < 0)
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

int store_running_code(sqlite3 *db, int64_t *id, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int row, ret = -1;

	if (db_prepare(db, &q, "SELECT id FROM g_state_name WHERE name = 'running'", err) < 0)
		return -1;
	if (store_step(db, q, err, &row) == 0) {
		if (row) {
			*id = sqlite3_column_int64(q, 0);
			ret = 0;
		} else {
			err_push(err, "g_state_name has no state 'running'");
		}
	}
	sqlite3_finalize(q);
	return ret;
}

static const char *const run_cols[] = {"p", "g", "start_ts", "end_ts", "state"};

int store_run_blocks(sqlite3 *db, uint32_t *n, struct wsr_err *err)
{
	struct blockread *br = NULL;

	if (blockread_open(db, "g_interval", run_cols, 5, &br, err) < 0)
		return -1;
	*n = blockread_nblocks(br);
	blockread_close(br);
	return 0;
}

int store_scan_runs(struct store *st, sqlite3 *db, uint32_t b0, uint32_t b1, store_run_fn fn,
		    void *arg, struct wsr_err *err)
{
	/*
	 * g_interval's running rows with a P, in storage order (the order in
	 * which they end): the rows of one P come out nearly sorted. Read from
	 * the blocks directly, not through SQL (a step and four column calls a
	 * row).
	 */
	struct blockread *br = NULL;
	struct blockread_block blk;
	int64_t running;
	int ret = -1, rc;

	if (store_running_code(db, &running, err) < 0 ||
	    blockread_open(db, "g_interval", run_cols, 5, &br, err) < 0)
		goto out;
	blockread_range(br, b0, b1);
	while ((rc = blockread_next(br, &blk, err)) > 0) {
		const int64_t *p = blk.v[0], *g = blk.v[1], *s = blk.v[2], *e = blk.v[3];
		const int64_t *state = blk.v[4];
		if (store_cancelled(st, err))
			goto out;
		for (uint32_t r = 0; r < blk.nrows; r++) {
			if (blk.null[0][r] || blk.null[4][r] || state[r] != running)
				continue;
			int v = fn(arg, p[r], (int32_t)g[r], s[r] - st->start_ts, e[r] - st->start_ts);
			if (v != 0) {
				ret = v;
				goto out;
			}
		}
	}
	ret = rc < 0 ? -1 : 0;
out:
	blockread_close(br);
	return ret;
}

/* store_load_runs' store_run_fn: the run pushed on its P's lane. */
struct runs_into {
	struct store *st;
	struct store_lane *l; /* the lane of the last run */
	struct wsr_err *err;
};

static int run_into(void *arg, int64_t p, int32_t g, int64_t s, int64_t e)
{
	struct runs_into *ri = arg;

	if (ri->l == NULL || ri->l->id != p)
		ri->l = store_lane_get(&ri->st->p_runs, &ri->st->nps, p);
	if (ri->l == NULL || store_lane_push(ri->l, s, e, g) < 0) {
		err_push(ri->err, "out of memory loading lanes");
		return -1;
	}
	ri->st->spans++;
	return 0;
}

int store_load_runs(struct store *st, sqlite3 *db, uint32_t b0, uint32_t b1, struct wsr_err *err)
{
	struct runs_into ri = {st, NULL, err};

	return store_scan_runs(st, db, b0, b1, run_into, &ri, err);
}

int store_merge_runs(struct store *st, struct store *part, struct wsr_err *err)
{
	int ret = 0;

	for (size_t i = 0; i < part->nps && ret == 0; i++) {
		const struct store_lane *src = &part->p_runs[i];
		struct store_lane *l = store_lane_get(&st->p_runs, &st->nps, src->id);
		for (size_t k = 0; l != NULL && k < src->n; k++)
			if (store_lane_push(l, src->v[k].s, src->v[k].e, src->v[k].v) < 0)
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
		if (store_lane_get(&st->p_runs, &st->nps, p) == NULL) {
			err_push(err, "out of memory");
			return -1;
		}
	}
	if (store_load_ids(db, "SELECT p FROM p ORDER BY p", &st->p_runs, &st->nps, err) < 0 ||
	    store_load_ids(db, "SELECT m FROM m ORDER BY m", &st->m_states, &st->nms, err) < 0)
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
		store_lane_finish(&st->p_runs[i]);
		store_lane_finish(&st->p_states[i]);
	}
	for (size_t i = 0; i < st->nms; i++)
		store_lane_finish(&st->m_states[i]);
	return 0;
}

int store_load_counters(struct store *st, sqlite3 *db, struct wsr_err *err)
{
	return load_counters(st, db, err);
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
