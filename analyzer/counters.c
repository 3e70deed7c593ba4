/*
 * counters.c - the counters tracker: the scheduler's global counters and
 * each P's ring, runnext, schedtick and run counts, and the step-function
 * rows they write (counters, p_counters, steals, spills, global_gets).
 *
 * The counters come from the events' own counts (npidle, nmspinning,
 * nmidle, global_len) where the catalog carries them, and from the G state
 * machine (running_gs, runnable_gs) otherwise; one row is written per
 * timestamp at which any changed. Per-P ring lengths are counted from the
 * queue operations (sums commute, so a count is exact once every event
 * before an instant is in, whatever their order); runqput.qlen, a load
 * racing with thieves, only sets a ring the count cannot know (no init
 * event, or events lost):
 *   runqput:      +1 (the G, or the one kicked from runnext), 0 right
 *                 after a runq_spill (both went to the global queue)
 *   steal:        thief += n-1, victim -= n (runnext: victim's slot cleared)
 *   globrunq_get: P += n-1;  runq_spill: P -= n-1
 *   g_run:        nothing if it is the G run at once after a steal or
 *                 global get; runnext slot cleared if it held the G;
 *                 else ring -= 1 when the G came from the local ring.
 *
 * Invariants:
 *   - A counters row holds the values after every event at its ts: rows
 *     are written when the time moves on (counters_flush(previous ts)), as
 *     columns of the last event at ts (derive.c holds that event's row
 *     until then; the counters view of sql/views.sql reads them back).
 *   - A P is on the dirty list (dirty_ps) at most once; its p_counters row
 *     is written at the flush only if one of its four counts changed.
 * Concurrency: one thread.
 * Rejected: storing the counters as a JSON column per row (4x the size).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "derive_int.h"

void p_dirty(struct derive *dv, int p)
{
	if (!dv->ps[p].dirty) {
		dv->ps[p].dirty = true;
		dv->dirty_ps[dv->n_dirty++] = p;
	}
}

/* ---- P runs ----
 *
 * p_counters is keyed by (p, ts), and its rows come in time order, P after
 * P. Inserted in that order, each row lands at another P's end of the
 * B-tree, and a row costs twice as much as an append (1.0-1.1 us against
 * 0.55-0.6 us: a C program inserting 4M rows of 2 Ps into an empty table
 * with the analyzer's pragmas). So each P's rows are buffered and
 * inserted as one run, which costs about what an append costs once the run
 * spans a few pages (runs of 2,048 rows: 0.8 us, 16,384: 0.6 us). The
 * buffers share a budget of PC_BUDGET rows (2 MiB) split among gomaxprocs.
 */
#define PC_BUDGET  65536
#define PC_RUN_MIN 256
#define PC_RUN_MAX 16384

static int pc_flush(struct derive *dv, int p, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];

	for (int i = 0; i < P->pc_n; i++) {
		const struct pcrow *c = &P->pc[i];
		struct row_p_counters row = {
			.p = p,
			.ts = c->ts,
			.runq = c->runq,
			.runnext = c->runnext,
			.schedticks = c->ticks,
			.runs = c->runs,
		};
		if (rows_add(dv->rows, ROWS_P_COUNTERS, &row, err) < 0)
			return -1;
	}
	P->pc_n = 0;
	return 0;
}

static int pc_add(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];

	if (P->pc == NULL) {
		int n = dv->gomaxprocs > 0 ? PC_BUDGET / dv->gomaxprocs : PC_RUN_MIN;
		n = n < PC_RUN_MIN ? PC_RUN_MIN : n > PC_RUN_MAX ? PC_RUN_MAX : n;
		P->pc = malloc((size_t)n * sizeof(*P->pc));
		if (P->pc == NULL) {
			err_push(err, "out of memory");
			return -1;
		}
		P->pc_cap = n;
	}
	if (P->pc_n == P->pc_cap && pc_flush(dv, p, err) < 0)
		return -1;
	/* A ring count is below 0 only while a removal's event precedes its
	 * addition's (a thief's steal from a ring whose owner has not yet
	 * announced the Gs it stole into it); the table shows 0. */
	P->pc[P->pc_n++] =
		(struct pcrow){ts, P->ring > 0 ? P->ring : 0, P->runnext, P->schedticks, P->runs};
	return 0;
}

/* The previous counters row held on [written_ts, ts). */
static void integrate(struct derive *dv, int64_t ts)
{
	int64_t dt = ts - dv->written_ts;
	const struct counters *w = &dv->written;

	if (w->idle_ps > 0 && w->global_len > 0)
		dv->idle_global_ns += dt;
	if (w->idle_ps > 0 && w->runnable_gs > 0)
		dv->idle_runnable_ns += dt;
}

int counters_flush(struct derive *dv, int64_t ts, struct wsr_err *err)
{
	if (!dv->written_any || memcmp(&dv->cur, &dv->written, sizeof(dv->cur)) != 0) {
		if (dv->written_any)
			integrate(dv, ts);
		dv->written_ts = ts;
		/* The counters view's row: columns of the last event at ts. */
		struct row_event *ev = &dv->ev_pend;
		ev->idle_ps = dv->cur.idle_ps;
		ev->spinning_ms = dv->cur.spinning_ms;
		ev->idle_ms = dv->cur.idle_ms;
		ev->threads = dv->cur.threads;
		ev->running_gs = dv->cur.running_gs;
		ev->runnable_gs = dv->cur.runnable_gs;
		ev->global_len = dv->cur.global_len;
		dag_counters(dv, ts, dv->cur.running_gs);
		dv->written = dv->cur;
		dv->written_any = true;
	}
	for (int i = 0; i < dv->n_dirty; i++) {
		int p = dv->dirty_ps[i];
		struct ps *P = &dv->ps[p];
		P->dirty = false;
		if (P->written && P->w_ring == P->ring && P->w_runnext == P->runnext &&
		    P->w_ticks == P->schedticks && P->w_runs == P->runs)
			continue;
		if (pc_add(dv, p, ts, err) < 0)
			return -1;
		P->written = true;
		P->w_ring = P->ring;
		P->w_runnext = P->runnext;
		P->w_ticks = P->schedticks;
		P->w_runs = P->runs;
	}
	dv->n_dirty = 0;
	return 0;
}

/* The rows at the last event, the integrals up to it, and every P's
 * buffered p_counters rows. */
int counters_finish(struct derive *dv, int64_t end, struct wsr_err *err)
{
	if (dv->val.any_ts && counters_flush(dv, end, err) < 0)
		return -1;
	if (dv->written_any)
		integrate(dv, end);
	for (int p = 0; p < dv->np; p++)
		if (pc_flush(dv, p, err) < 0)
			return -1;
	return 0;
}

/* ---- queue events ---- */

static void ring_runqput(struct derive *dv, const struct wsr_rec *r)
{
	struct ps *P = &dv->ps[r->p];

	/* The ring is counted, not read from qlen: qlen is loaded before
	 * the event's timestamp, and a thief's steal may land between the
	 * two. The G put (next = 0) or the one kicked out of runnext goes
	 * to the ring, except right after a runq_spill, which sent it to
	 * the global queue with the 128 it counts (runq.c). */
	int64_t to_ring = r->a1 ? r->a2 > 0 : 1;
	if (P->spilled)
		to_ring = 0;
	P->spilled = false;
	if (r->a1) {
		if (r->a2 <= 0 && P->runnext != 0) {
			/* The owner found runnext empty, yet no steal of it is
			 * in yet: a thief took it and its steal event follows. */
			P->rn_inflight++;
		}
		P->runnext = r->g;
	}
	P->ring += to_ring;
	if (P->ring_unsynced) {
		P->ring = r->a3;
		P->ring_unsynced = false;
	}
	p_dirty(dv, r->p);
}

static int queue_op_row(struct derive *dv, enum rows_table t, const struct wsr_rec *r,
			struct wsr_err *err)
{
	struct row_queue_op row = {
		.ts = r->ts,
		.p = r->p,
		.m = r->m,
		.n = r->a1,
		.global_len = r->a2,
	};

	return rows_add(dv->rows, t, &row, err);
}

static int ring_steal(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int p = r->p, v = (int)r->a1;

	/* p_known() may grow (realloc) dv->ps: take the pointers after it. */
	if (p_known(dv, v, r->ts, err) < 0)
		return -1;
	struct ps *T = &dv->ps[p];
	struct ps *V = &dv->ps[v];
	int64_t from_ring = r->a2;
	if (r->a3) {
		/* The G the owner found gone at its last put (see runqput),
		 * or the one in runnext now. */
		if (V->rn_inflight > 0)
			V->rn_inflight--;
		else
			V->runnext = 0;
		from_ring--;
	}
	V->ring -= from_ring;
	T->ring += r->a2 - 1;
	T->pending_once = true;
	p_dirty(dv, p);
	p_dirty(dv, v);
	struct row_steal row = {
		.ts = r->ts,
		.thief = p,
		.victim = v,
		.m = r->m,
		.n = r->a2,
		.runnext = r->a3,
	};
	return rows_add(dv->rows, ROWS_STEALS, &row, err);
}

/* runqput (the ring part; ev_g_queued has the G's), runq_spill,
 * globrunq_put, globrunq_get, steal. */
int ev_queue(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	struct ps *P;

	switch (r->ev) {
	case EV_RUNQPUT:
		ring_runqput(dv, r);
		return 0;
	case EV_RUNQ_SPILL:
		P = &dv->ps[r->p];
		/* 128 from the ring plus the G being put (or kicked from runnext),
		 * whose runqput follows (runq.c). */
		P->ring -= r->a1 - 1;
		P->spilled = true;
		p_dirty(dv, r->p);
		dv->cur.global_len = r->a2;
		return queue_op_row(dv, ROWS_SPILLS, r, err);
	case EV_GLOBRUNQ_PUT:
		dv->cur.global_len = r->a2;
		return 0;
	case EV_GLOBRUNQ_GET:
		P = &dv->ps[r->p];
		if (r->a1 > 0) {
			P->ring += r->a1 - 1;
			P->pending_once = true;
		}
		p_dirty(dv, r->p);
		dv->cur.global_len = r->a2;
		return queue_op_row(dv, ROWS_GLOBAL_GETS, r, err);
	case EV_STEAL:
		return ring_steal(dv, r, err);
	default:
		return 0;
	}
}

/* g_run of G e (before its queue fields are cleared): the ring it left. */
void ring_g_run(struct derive *dv, const struct wsr_rec *r, const struct gs *e)
{
	struct ps *P = &dv->ps[r->p];

	if (P->pending_once) {
		P->pending_once = false;
	} else if (P->runnext == r->g) {
		P->runnext = 0;
	} else if (r->a1 == WSR_SOURCE_LOCAL ||
		   ((r->a1 == WSR_SOURCE_NETPOLL || r->a1 == WSR_SOURCE_TIMER) && e->q != Q_NONE)) {
		/* A G readied by a timer or the poller keeps that source
		 * wherever it was queued: not the one run at once (above),
		 * not runnext, so from this ring, where a global get or a
		 * steal may have moved it (q still says where it was put).
		 * Q_NONE: the poller ran it directly, from no queue. */
		P->ring--;
	}
	if (P->runnext == r->g)
		P->runnext = 0;
	/* The runtime's schedtick: runs that do not inherit the slice. */
	if (!r->a2)
		P->schedticks++;
	P->runs++;
	if (r->a1 == WSR_SOURCE_RUNNEXT)
		P->runnext_runs++;
	p_dirty(dv, r->p);
}
