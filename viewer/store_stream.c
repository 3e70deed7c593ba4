/*
 * store_stream.c - the whole trace's timeline in one pass over the
 * database (store_timeline_stream, see store.h), for the HTML report: the
 * answer store_timeline_json() gives over the full store for [0, duration),
 * without holding the spans.
 *
 * The full store keeps every span (24 bytes each: ~60 MB at 10 M events)
 * because the viewer answers any window at any zoom. A report draws one
 * window, so each lane's spans go through store_fold_span() as they are
 * read, and what stays is each lane's items: at most about two per pixel.
 * Memory is then bounded by the lanes and the pixels, not the trace.
 *
 * Invariants:
 *   - The same lanes, items and bytes as the full store's answer: the lanes
 *     are those of store_load_runs() and store_load_states() (the Ps from
 *     0 to gomaxprocs - 1, the p and m tables, the Ps of the G runs, the Ms
 *     of m_state), in id order; each span is clamped (an end before its
 *     start is the start: store_lane_push), clipped to the end of the span
 *     kept before it and dropped when empty (store_lane_finish), as the
 *     store does.
 *   - The store sorts a lane whose spans come out of order; a pass cannot,
 *     so on a start before the one before it in the same lane it stops,
 *     loads the full store into st and answers from it (returning 1). The database's
 *     invariants say that this does not happen: g_interval's runs of a P
 *     end in storage order and do not overlap, p_state and m_state are read
 *     ORDER BY start_ts.
 * Concurrency: the store and the connection are the caller's alone during
 *   the call.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "store.h"
#include "store_impl.h"

/* A lane of the pass: its items so far and what it needs to clip the next span. */
struct sfold {
	int64_t id;
	struct store_fold a;
	struct sbuf out;
	int have;	      /* a span was pushed */
	int64_t last_s;	      /* the start of the last span pushed */
	int kept;	      /* a span was kept */
	int64_t kept_e;	      /* the end of the last span kept */
};

struct slanes {
	struct sfold *v;
	size_t n;
};

/* The lane with this id, inserted (in id order) if new; NULL when out of memory. */
static struct sfold *slane_get(struct slanes *ls, int64_t id)
{
	size_t lo = 0, hi = ls->n;
	struct sfold *a;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ls->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ls->n && ls->v[lo].id == id)
		return &ls->v[lo];
	a = realloc(ls->v, (ls->n + 1) * sizeof(*a));
	if (a == NULL)
		return NULL;
	memmove(&a[lo + 1], &a[lo], (ls->n - lo) * sizeof(*a));
	memset(&a[lo], 0, sizeof(*a));
	a[lo].id = id;
	sb_init(&a[lo].out);
	ls->v = a;
	ls->n++;
	return &a[lo];
}

static void slanes_free(struct slanes *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		sb_free(&ls->v[i].out);
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

/* The pass's window: the whole trace at px pixels, as store_timeline_json. */
struct swin {
	int64_t t1, nspp;
};

/*
 * Pushes [s, e) holding v (from the trace's start) on lane f; 0, or 1 when
 * it starts before the span pushed before it.
 */
static int sfold_push(struct sfold *f, const struct swin *w, int64_t s, int64_t e, int32_t v,
		      int is_state)
{
	struct store_span sp;

	if (e < s)
		e = s;
	if (f->have && s < f->last_s)
		return 1;
	f->have = 1;
	f->last_s = s;
	if (f->kept && s < f->kept_e)
		s = f->kept_e;
	if (e <= s)
		return 0;
	f->kept = 1;
	f->kept_e = e;
	/* the window [0, t1): spans ending by 0 or starting at t1 are out of it */
	if (e <= 0 || s >= w->t1)
		return 0;
	sp = (struct store_span){s, e, v};
	store_fold_span(&f->out, &f->a, &sp, 0, w->t1, w->nspp, is_state);
	return 0;
}

/* pass_runs' store_run_fn: the run folded into its P's lane. */
struct runs_fold {
	struct slanes *runs;
	const struct swin *w;
	struct sfold *f; /* the lane of the last run */
	struct wsr_err *err;
};

static int run_fold(void *arg, int64_t p, int32_t g, int64_t s, int64_t e)
{
	struct runs_fold *rf = arg;

	if (rf->f == NULL || rf->f->id != p)
		rf->f = slane_get(rf->runs, p);
	if (rf->f == NULL) {
		err_push(rf->err, "out of memory");
		return -1;
	}
	return sfold_push(rf->f, rf->w, s, e, g, 0);
}

/* g_interval's running rows with a P into the run lanes: 0, 1 (out of order), -1. */
static int pass_runs(struct store *st, sqlite3 *db, const struct swin *w, struct slanes *runs,
		     struct wsr_err *err)
{
	struct runs_fold rf = {runs, w, NULL, err};

	return store_scan_runs(st, db, 0, UINT32_MAX, run_fold, &rf, err);
}

/* The (owner, state name, start, end) rows of sql into lanes; when !add, an owner
 * not in lanes is an error. 0, 1 (out of order), -1. */
static int pass_states(struct store *st, sqlite3 *db, const char *sql, const struct swin *w,
		       struct slanes *lanes, int add, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	struct sfold *f = NULL;
	int ret = -1, row;
	uint64_t rows = 0;

	if (db_prepare(db, &q, sql, err) < 0)
		return -1;
	for (;;) {
		if (store_step(db, q, err, &row) < 0)
			goto out;
		if (!row)
			break;
		if ((++rows & 0xffff) == 0 && store_cancelled(st, err))
			goto out;
		int64_t id = sqlite3_column_int64(q, 0);
		if (f == NULL || f->id != id) {
			size_t n = lanes->n;
			f = slane_get(lanes, id);
			if (f == NULL) {
				err_push(err, "out of memory");
				goto out;
			}
			if (!add && lanes->n != n) {
				err_push(err, "p_state names a P that neither p nor g_state knows");
				goto out;
			}
		}
		if (sfold_push(f, w, sqlite3_column_int64(q, 2) - st->start_ts,
			       sqlite3_column_int64(q, 3) - st->start_ts,
			       (int32_t)store_state_code(sqlite3_column_text(q, 1)), 1)) {
			ret = 1;
			goto out;
		}
	}
	ret = 0;
out:
	sqlite3_finalize(q);
	return ret;
}

/* The ids sql returns (one column) as lanes (store_load_ids' reading). */
static int add_ids(sqlite3 *db, const char *sql, struct slanes *lanes, struct wsr_err *err)
{
	struct store_lane *ids = NULL;
	size_t n = 0;
	int ret = store_load_ids(db, sql, &ids, &n, err);

	for (size_t i = 0; i < n && ret == 0; i++)
		if (slane_get(lanes, ids[i].id) == NULL) {
			err_push(err, "out of memory");
			ret = -1;
		}
	free(ids);
	return ret;
}

/* Ends lane f's items and writes them as a JSON array. */
static void lane_out(struct sbuf *out, struct sfold *f, int is_state)
{
	store_fold_flush(&f->out, &f->a, is_state);
	sb_uncomma(&f->out);
	sb_putc(out, '[');
	sb_add(out, f->out.buf, f->out.len);
	sb_putc(out, ']');
}

/* The lane ids of lanes into *ids (id order); 0 or -1 when out of memory. */
static int keep_ids(const struct slanes *lanes, struct store_lane **ids, size_t *n)
{
	*ids = calloc(lanes->n != 0 ? lanes->n : 1, sizeof(**ids));
	if (*ids == NULL)
		return -1;
	for (size_t i = 0; i < lanes->n; i++)
		(*ids)[i].id = lanes->v[i].id;
	*n = lanes->n;
	return 0;
}

/* The pass; 1 when a lane's rows came out of order (out and st untouched). */
static int stream(struct store *st, sqlite3 *db, int px, struct sbuf *out, struct wsr_err *err)
{
	struct slanes runs = {0}, pst = {0}, mst = {0};
	struct swin w = {st->duration_ns, st->duration_ns / px};
	int rc;

	if (w.nspp < 1)
		w.nspp = 1;
	rc = pass_runs(st, db, &w, &runs, err);
	for (int p = 0; p < st->gomaxprocs && rc == 0; p++)
		if (slane_get(&runs, p) == NULL) {
			err_push(err, "out of memory");
			rc = -1;
		}
	if (rc == 0)
		rc = add_ids(db, "SELECT p FROM p ORDER BY p", &runs, err);
	/* the P state lanes: exactly the Ps of the run lanes */
	for (size_t i = 0; i < runs.n && rc == 0; i++)
		if (slane_get(&pst, runs.v[i].id) == NULL) {
			err_push(err, "out of memory");
			rc = -1;
		}
	if (rc == 0)
		rc = add_ids(db, "SELECT m FROM m ORDER BY m", &mst, err);
	if (rc == 0)
		rc = pass_states(st, db,
				 "SELECT p, state, start_ts, end_ts FROM p_state ORDER BY p, start_ts",
				 &w, &pst, 0, err);
	if (rc == 0)
		rc = pass_states(st, db,
				 "SELECT m, state, start_ts, end_ts FROM m_state ORDER BY m, start_ts",
				 &w, &mst, 1, err);
	if (rc == 0 && (keep_ids(&runs, &st->p_runs, &st->nps) < 0 ||
			keep_ids(&mst, &st->m_states, &st->nms) < 0)) {
		err_push(err, "out of memory");
		rc = -1;
	}
	if (rc == 0) {
		sb_printf(out, "{\"t0\":0,\"t1\":%" PRId64 ",\"nspp\":%" PRId64 ",\"p\":[", w.t1,
			  w.nspp);
		for (size_t i = 0; i < runs.n; i++) {
			sb_printf(out, "{\"p\":%" PRId64 ",\"runs\":", runs.v[i].id);
			lane_out(out, &runs.v[i], 0);
			sb_puts(out, ",\"states\":");
			lane_out(out, &pst.v[i], 1);
			sb_puts(out, "},");
		}
		sb_uncomma(out);
		sb_puts(out, "],\"m\":[");
		for (size_t i = 0; i < mst.n; i++) {
			sb_printf(out, "{\"m\":%" PRId64 ",\"states\":", mst.v[i].id);
			lane_out(out, &mst.v[i], 1);
			sb_puts(out, "},");
		}
		sb_uncomma(out);
		sb_puts(out, "]}");
		for (size_t i = 0; i < runs.n + pst.n + mst.n && rc == 0; i++) {
			const struct sfold *f = i < runs.n	     ? &runs.v[i]
						: i < runs.n + pst.n ? &pst.v[i - runs.n]
								     : &mst.v[i - runs.n - pst.n];
			if (f->out.oom) {
				err_push(err, "out of memory");
				rc = -1;
			}
		}
	}
	slanes_free(&runs);
	slanes_free(&pst);
	slanes_free(&mst);
	return rc;
}

int store_timeline_stream(struct store *st, sqlite3 *db, int px, struct sbuf *out,
			  struct wsr_err *err)
{
	uint32_t nblocks;
	int rc = stream(st, db, px, out, err);

	if (rc != 1)
		return rc;
	/* the full store, which sorts each lane (store_lane_finish) */
	if (store_run_blocks(db, &nblocks, err) < 0 ||
	    store_load_runs(st, db, 0, nblocks, err) < 0 || store_load_states(st, db, err) < 0)
		return -1;
	store_timeline_json(st, 0, st->duration_ns, px, out);
	return 1;
}
