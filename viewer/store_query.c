/*
 * store_query.c - the window answers of the store (store_timeline_json,
 * store_counters_json; see store.h): what one pan or zoom of the viewer
 * costs.
 *
 * Invariants:
 *   - An answer is bounded by the pixels, not the trace: a lane writes at
 *     most about two items per pixel (spans narrower than a pixel merge into
 *     blocks, STORE_BLOCK summaries skip dense runs of them), and counters
 *     write min, max and last per pixel.
 *   - Counters come from the buckets when a pixel spans two buckets or more,
 *     else from the counters table through its primary key (ts); either way
 *     a spike narrower than a pixel shows in min or max.
 * Concurrency: reads a complete (published) store only, so any number of
 *   threads may answer at once; the SQLite handle is the caller's, used
 *   under the caller's lock.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "store.h"
#include "store_impl.h"

void store_fold_flush(struct sbuf *out, struct store_fold *a, int is_state)
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

void store_fold_span(struct sbuf *out, struct store_fold *a, const struct store_span *sp,
		     int64_t t0, int64_t t1, int64_t nspp, int is_state)
{
	int64_t cs = sp->s > t0 ? sp->s : t0;
	int64_t ce = sp->e < t1 ? sp->e : t1;
	int64_t w = ce - cs;

	if (w >= nspp) {
		store_fold_flush(out, a, is_state);
		sb_printf(out, "[%" PRId64 ",%" PRId64 ",%d,1,%" PRId64 "],", sp->s, sp->e, (int)sp->v,
			  w);
		return;
	}
	if (a->active && cs - a->e < nspp && a->e - a->s < nspp) {
		a->e = ce;
		a->n++;
		a->busy += w;
		if (is_state && sp->v >= 0 && sp->v < ST_NSTATES)
			a->st_t[sp->v] += w;
		if (w > a->vlen) {
			a->vlen = w;
			a->v = sp->v;
		}
		return;
	}
	store_fold_flush(out, a, is_state);
	memset(a, 0, sizeof(*a));
	a->active = 1;
	a->s = cs;
	a->e = ce;
	a->n = 1;
	a->busy = w;
	a->v = sp->v;
	a->vlen = w;
	if (is_state && sp->v >= 0 && sp->v < ST_NSTATES)
		a->st_t[sp->v] = w;
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
 * Writes the spans of l meeting [t0, t1) as [s, e, v, n, busy] items, by
 * store_fold_span's rule (store_impl.h), with a fast path for dense runs.
 */
static void lane_json(struct sbuf *out, const struct store_lane *l, int64_t t0, int64_t t1,
		      int64_t nspp, int is_state)
{
	struct store_fold a = {0};

	sb_putc(out, '[');
	for (size_t i = lane_first_after(l, t0); i < l->n && l->v[i].s < t1; i++) {
		/*
		 * Fast path for dense windows: a whole block of spans that are all
		 * narrower than a pixel, with gaps under a pixel, starting inside
		 * the open block's pixel and ending inside the window, joins the
		 * block at once (the rule of store_fold_span, applied 64 spans at
		 * a time). A whole-trace window then costs O(pixels), not O(spans).
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
		store_fold_span(out, &a, &l->v[i], t0, t1, nspp, is_state);
	}
	store_fold_flush(out, &a, is_state);
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
	if (store_step(db, q, err, &row) < 0)
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
		if (store_step(db, q, err, &row) < 0)
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
