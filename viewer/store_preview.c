/*
 * store_preview.c - the sampled overview of the store (store_load_preview,
 * store_finish_preview; see store.h).
 *
 *
 * The full lanes need a scan of g_state (seconds on a 10M-event trace); the
 * first picture must not wait for it. The trace is cut into ncells cells
 * and, at each cell's midpoint t, the indexes say which G runs on each P,
 * and the state of each P and M:
 *   - P and M states: p_state_p / m_state_m, the last row of the lane
 *     starting at or before t (one seek).
 *   - G runs: the running rows ending after t in end order: g_interval's
 *     rowid order is the order in which the intervals end (schema.sql), and
 *     its end_ts is the module's order column (schema 7), so one seek finds
 *     the first row ending after t and they follow it in rowid order, with
 *     no index. Runs of one P do not overlap, so the first one met for a P either
 *     covers t (start <= t) or starts after it (no G runs on P at t, nor
 *     until that start). A P left unresolved after a few rows, whose state
 *     at t is running, is in a run longer than the others' activity: its
 *     start is found through p_counters (keyed by p, ts: runs goes up
 *     at each g_run on the P), the G through the g_run event at that instant
 *     (events is keyed by ts), the run's end through g_interval by G (the set
 *     filters of its blocks, schema 7; before, the index g_interval_g); that reads
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
 *
 * Invariants:
 *   - A preview lane holds the same ids, in the same order, as the full
 *     lanes would (store_init's gomaxprocs Ps, then the p and m tables), so
 *     two parts built from the same initialised store append lane by lane.
 *   - A carry (struct pv_carry) is only trusted for the cells whose
 *     midpoint it covers; a span is pushed as itself once, and a shorter
 *     one once per cell.
 *   - The long-run fallback never takes more than PV_LONG_QUERY_MS per
 *     query and PV_LONG_TOTAL_MS in all (the progress handler interrupts it).
 * Concurrency: store_load_preview() may run on two threads at once, each
 *   into its own copy of the initialised store, on its own connection and
 *   over its own range of cells; nothing here is shared between them.
 *   store_finish_preview() runs once both are done (the caller joins).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "store.h"
#include "store_impl.h"

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
		return store_lane_push(l, c->s, c->e, c->v);
	}
	return store_lane_push(l, c0, c1, c->v);
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
	return store_step(db, q, err, row);
}

/* The state row of lane id at or before abs (relative times into c). */
static int pv_state(const struct store *st, sqlite3 *db, sqlite3_stmt *q, int64_t id,
		    int64_t abs, struct pv_carry *c, struct wsr_err *err)
{
	int row;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int64(q, 2, abs);
	if (store_step(db, q, err, &row) < 0)
		return -1;
	memset(c, 0, sizeof(*c));
	if (row && sqlite3_column_int64(q, 2) > abs) {
		c->valid = 1;
		c->v = (int32_t)store_state_code(sqlite3_column_text(q, 0));
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

static const char *const pv_sql[] = {
	/* end_ts is g_interval's order column (schema 7): the module seeks the
	 * first row ending after t and reads on in storage (rowid) order */
	"SELECT p, g, start_ts, end_ts FROM g_interval WHERE end_ts > ?1 AND p IS NOT NULL "
	"AND state = (SELECT id FROM g_state_name WHERE name = 'running') ORDER BY rowid",
	"SELECT p, g, start_ts, end_ts FROM g_interval WHERE end_ts > ?1 AND p = ?2 "
	"AND state = (SELECT id FROM g_state_name WHERE name = 'running') ORDER BY rowid LIMIT 1",
	"SELECT state, start_ts, end_ts FROM p_state WHERE p = ?1 AND start_ts <= ?2 "
	"ORDER BY start_ts DESC LIMIT 1",
	"SELECT state, start_ts, end_ts FROM m_state WHERE m = ?1 AND start_ts <= ?2 "
	"ORDER BY start_ts DESC LIMIT 1",
	"SELECT g FROM events WHERE ts = ?1 AND p = ?2 AND name = 'g_run' LIMIT 1",
	/* a G's intervals do not overlap, so its rows' end order (rowid) is
	 * their start order: the module reads them in that order and stops at
	 * the first, where ORDER BY start_ts read them all (a long-lived G's
	 * thousands of blocks) to sort them */
	"SELECT p, g, start_ts, end_ts FROM g_interval WHERE g = ?1 AND start_ts >= ?2 "
	"AND state = (SELECT id FROM g_state_name WHERE name = 'running') ORDER BY rowid LIMIT 1",
	"SELECT ts, runs FROM p_counters WHERE p = ?1 AND ts <= ?2 "
	"ORDER BY ts DESC LIMIT 1",
	"SELECT ts FROM p_counters WHERE p = ?1 AND ts <= ?2 AND runs < ?3 "
	"ORDER BY ts DESC LIMIT 1",
	"SELECT ts FROM p_counters WHERE p = ?1 AND ts > ?2 ORDER BY ts LIMIT 1",
};
enum {
	Q_RUNS,
	Q_LONG,
	Q_PST,
	Q_MST,
	Q_START,
	Q_RUNOF,
	Q_TICKS,
	Q_BEFORE,
	Q_AFTER,
	NQ
};

/* An overview being built: its statements and what it carries from cell to cell. */
struct pv {
	struct store *st;
	sqlite3 *db;
	sqlite3_stmt *q[NQ];
	struct pv_carry *run, *pst, *mst; /* per P: its G run, its state; per M: its state */
	int64_t *known; /* per P: no run starts on it after the last lookup, before known */
	struct pv_budget budget;
	int64_t long_ms; /* time spent in the long-run fallback so far */
};

/* One cell [c0, c1) of the trace, sampled at its midpoint t (abs: t as a timestamp). */
struct pv_cell {
	int64_t c0, c1, cell, t, abs;
};

#define PV_OOM (-2) /* returned when out of memory: the caller says so */

/* The states of n lanes at the cell's midpoint, looked up with q where the
 * carry does not cover it. 0, -1 (err says why) or PV_OOM. */
static int pv_lane_states(struct pv *pv, struct store_lane *lanes, struct pv_carry *carry,
			  size_t n, sqlite3_stmt *q, const struct pv_cell *c, struct wsr_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct pv_carry *k = &carry[i];

		if (!(k->valid && k->s <= c->t && c->t < k->e) &&
		    pv_state(pv->st, pv->db, q, lanes[i].id, c->abs, k, err) < 0)
			return -1;
		if (pv_push(&lanes[i], k, c->c0, c->c1, c->cell) < 0)
			return PV_OOM;
	}
	return 0;
}

/* The P and M states at the cell's midpoint. 0, -1 (err says why) or PV_OOM. */
static int pv_states(struct pv *pv, const struct pv_cell *c, struct wsr_err *err)
{
	struct store *st = pv->st;
	int rc = pv_lane_states(pv, st->p_states, pv->pst, st->nps, pv->q[Q_PST], c, err);

	if (rc < 0)
		return rc;
	return pv_lane_states(pv, st->m_states, pv->mst, st->nms, pv->q[Q_MST], c, err);
}

/*
 * Drops the run carries that do not cover the midpoint, then reads the runs
 * ending after it until every P is resolved or a few rows went by. Sets
 * *unresolved to the Ps still unknown; 0 or -1.
 */
static int pv_runs_by_end(struct pv *pv, const struct pv_cell *c, size_t *unresolved,
			  struct wsr_err *err)
{
	struct store *st = pv->st;
	struct pv_carry *run = pv->run;
	sqlite3_stmt *q = pv->q[Q_RUNS];
	size_t rows = 0;
	int row;

	*unresolved = 0;
	for (size_t i = 0; i < st->nps; i++) {
		if (!(run[i].valid && run[i].s <= c->t && c->t < run[i].e)) {
			/*
			 * What the last lookup knew: no run starts on the P
			 * after it and before e (the end of its run, the start
			 * of the next one, or just past the instant it saw).
			 */
			if (run[i].valid && run[i].e > pv->known[i])
				pv->known[i] = run[i].e;
			run[i].valid = 0;
			(*unresolved)++;
		}
	}
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, c->abs);
	row = 1;
	while (*unresolved > 0 && rows < 8 * st->nps + 16) {
		size_t i;

		if (store_step(pv->db, q, err, &row) < 0)
			return -1;
		if (!row)
			break;
		rows++;
		i = lane_index(st->p_runs, st->nps, sqlite3_column_int64(q, 0));
		if (i == st->nps || run[i].valid)
			continue;
		pv_run(st, &run[i], c->abs, sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
		       sqlite3_column_int64(q, 3));
		(*unresolved)--;
	}
	if (!row && *unresolved > 0) {
		/* No run of these Ps ends after t: none runs from t to the end. */
		for (size_t i = 0; i < st->nps; i++) {
			if (!run[i].valid)
				run[i] = (struct pv_carry){1, c->t, st->duration_ns + 1, -1, 0};
		}
		*unresolved = 0;
	}
	return 0;
}

/*
 * The start of P i's current run: p_counters (keyed by p, ts) has a row at
 * each g_run on the P, where runs goes up; the first row with the runs held
 * at t is the run's start, and the g_run event at that instant names the G.
 * This reads only the P's own rows since the start (a few where long runs
 * are), unlike g_state in end_ts order, which holds every other P's rows
 * until the run ends. 0 (run[i] is set), 1 (not found this way) or -1.
 */
static int pv_run_start(struct pv *pv, size_t i, const struct pv_cell *c, struct wsr_err *err)
{
	struct store *st = pv->st;
	sqlite3_stmt *const *q = pv->q;
	int64_t id = st->p_runs[i].id, ts0, rs, re, g;
	int row;

	if (pv_one(pv->db, q[Q_TICKS], id, c->abs, 0, err, &row) < 0)
		return -1;
	if (!row)
		return 1;
	if (sqlite3_column_int64(q[Q_TICKS], 0) - st->start_ts < pv->known[i]) {
		/* No g_run on the P in [known, t]: no G started since. */
		pv->run[i] = (struct pv_carry){1, c->t, c->t + 1, -1, 0};
		return 0;
	}
	if (pv_one(pv->db, q[Q_BEFORE], id, c->abs, sqlite3_column_int64(q[Q_TICKS], 1), err,
		   &row) < 0)
		return -1;
	if (pv_one(pv->db, q[Q_AFTER], id, row ? sqlite3_column_int64(q[Q_BEFORE], 0) : INT64_MIN,
		   0, err, &row) < 0)
		return -1;
	if (!row)
		return 1;
	ts0 = sqlite3_column_int64(q[Q_AFTER], 0);
	if (pv_one(pv->db, q[Q_START], ts0, id, 0, err, &row) < 0)
		return -1;
	if (!row)
		return 1;
	g = sqlite3_column_int64(q[Q_START], 0);
	if (pv_one(pv->db, q[Q_RUNOF], g, ts0, 0, err, &row) < 0)
		return -1;
	rs = row ? sqlite3_column_int64(q[Q_RUNOF], 2) : 0;
	re = row ? sqlite3_column_int64(q[Q_RUNOF], 3) : 0;
	if (!row || rs != ts0 || sqlite3_column_int64(q[Q_RUNOF], 0) != id)
		return 1;
	if (re > c->abs)
		pv_run(st, &pv->run[i], c->abs, g, rs, re);
	else
		pv->run[i] = (struct pv_carry){1, c->t, c->t + 1, -1, 0};
	return 0;
}

/* Not found by pv_run_start (a database from another deriver?): search
 * g_interval by end, under the time budget. 0 (run[i] may still be unknown) or -1. */
static int pv_run_long(struct pv *pv, size_t i, const struct pv_cell *c, struct wsr_err *err)
{
	struct store *st = pv->st;
	sqlite3_stmt *q = pv->q[Q_LONG];
	int64_t t_q;
	int rc;

	if (!pv->pst[i].valid || pv->pst[i].v != ST_RUNNING || pv->long_ms >= PV_LONG_TOTAL_MS)
		return 0;
	t_q = pv_now_ms();
	pv->budget.deadline_ms = t_q + PV_LONG_QUERY_MS;
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, c->abs);
	sqlite3_bind_int64(q, 2, st->p_runs[i].id);
	rc = sqlite3_step(q);
	pv->budget.deadline_ms = 0;
	pv->long_ms += pv_now_ms() - t_q;
	if (rc == SQLITE_ROW)
		pv_run(st, &pv->run[i], c->abs, sqlite3_column_int64(q, 1),
		       sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3));
	else if (rc == SQLITE_DONE)
		pv->run[i] = (struct pv_carry){1, c->t, st->duration_ns + 1, -1, 0};
	else if (rc != SQLITE_INTERRUPT) {
		err_push(err, "reading g_interval: %s", sqlite3_errmsg(pv->db));
		return -1;
	}
	sqlite3_reset(q);
	return 0;
}

/* Samples cell k of ncells into the lanes. 0, -1 (err says why) or PV_OOM. */
static int pv_sample(struct pv *pv, int k, int ncells, struct wsr_err *err)
{
	struct store *st = pv->st;
	struct pv_cell c;
	size_t unresolved;
	int rc;

	c.c0 = st->duration_ns * k / ncells;
	c.c1 = st->duration_ns * (k + 1) / ncells;
	c.cell = c.c1 - c.c0;
	c.t = c.c0 + c.cell / 2;
	c.abs = st->start_ts + c.t;
	if ((k & 63) == 0 && store_cancelled(st, err))
		return -1;
	if ((rc = pv_states(pv, &c, err)) < 0)
		return rc;
	if (pv_runs_by_end(pv, &c, &unresolved, err) < 0)
		return -1;
	for (size_t i = 0; i < st->nps && unresolved > 0; i++) {
		if (pv->run[i].valid)
			continue;
		/* A P not running Gs at t (idle, spinning, in a syscall) needs no search. */
		if (!pv->pst[i].valid || pv->pst[i].v != ST_RUNNING)
			continue;
		rc = pv_run_start(pv, i, &c, err);
		if (rc == 1)
			rc = pv_run_long(pv, i, &c, err);
		if (rc < 0)
			return -1;
	}
	for (size_t i = 0; i < st->nps; i++)
		if (pv_push(&st->p_runs[i], &pv->run[i], c.c0, c.c1, c.cell) < 0)
			return PV_OOM;
	return 0;
}

int store_load_preview(struct store *st, sqlite3 *db, int ncells, int k0, int k1,
		       struct wsr_err *err)
{
	struct pv pv = {.st = st, .db = db};
	int ret = -1;

	if (ncells < 1)
		ncells = 1;
	st->preview = 1;
	for (int p = 0; p < st->gomaxprocs; p++)
		if (store_lane_get(&st->p_runs, &st->nps, p) == NULL)
			goto oom;
	if (store_load_ids(db, "SELECT p FROM p ORDER BY p", &st->p_runs, &st->nps, err) < 0 ||
	    store_load_ids(db, "SELECT m FROM m ORDER BY m", &st->m_states, &st->nms, err) < 0)
		goto out;
	st->p_states = calloc(st->nps != 0 ? st->nps : 1, sizeof(*st->p_states));
	pv.run = calloc(st->nps + 1, sizeof(*pv.run));
	pv.pst = calloc(st->nps + 1, sizeof(*pv.pst));
	pv.mst = calloc(st->nms + 1, sizeof(*pv.mst));
	pv.known = calloc(st->nps + 1, sizeof(*pv.known));
	if (st->p_states == NULL || pv.run == NULL || pv.pst == NULL || pv.mst == NULL ||
	    pv.known == NULL)
		goto oom;
	for (size_t i = 0; i < st->nps; i++)
		st->p_states[i].id = st->p_runs[i].id;
	for (int i = 0; i < NQ; i++) {
		if (db_prepare(db, &pv.q[i], pv_sql[i], err) < 0)
			goto out;
	}
	sqlite3_progress_handler(db, 1000, pv_progress, &pv.budget);
	for (int k = k0; k < k1 && k < ncells; k++) {
		int rc = pv_sample(&pv, k, ncells, err);

		if (rc == PV_OOM)
			goto oom;
		if (rc < 0)
			goto out;
	}
	ret = 0;
	goto out;
oom:
	err_push(err, "out of memory building the overview");
out:
	sqlite3_progress_handler(db, 0, NULL, NULL);
	for (int i = 0; i < NQ; i++)
		sqlite3_finalize(pv.q[i]);
	free(pv.run);
	free(pv.known);
	free(pv.pst);
	free(pv.mst);
	return ret;
}

static int lanes_append(struct store_lane *dst, const struct store_lane *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < src[i].n; k++)
			if (store_lane_push(&dst[i], src[i].v[k].s, src[i].v[k].e, src[i].v[k].v) < 0)
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
	/* A span found by both parts is clipped to nothing by store_lane_finish. */
	for (size_t i = 0; i < st->nps; i++) {
		store_lane_finish(&st->p_runs[i]);
		store_lane_finish(&st->p_states[i]);
		st->spans += st->p_runs[i].n + st->p_states[i].n;
	}
	for (size_t i = 0; i < st->nms; i++) {
		store_lane_finish(&st->m_states[i]);
		st->spans += st->m_states[i].n;
	}
	return ret;
}
