/*
 * gstate.c - the G tracker: each G's state machine and the g_state and g
 * rows it writes (derive_int.h, docs/schema.md "States").
 *
 *   runnable -> running -> waiting / syscall / runnable ... -> exit.
 * A G's current interval is open in its struct gs (gtable.c); a transition
 * closes it into g_state. The running time of each interval is added to
 * its P (p.run_ns) and each runnable interval that is not cut to the
 * latency distribution (latency.c).
 *
 * Invariants:
 *   - A G interval is [start, ts) of its open state; zero-length G
 *     intervals are kept (a G run the instant it is readied has latency 0).
 *   - Per G the intervals tile [created_ts, end]; running_gs and
 *     runnable_gs (counters) follow every state change (g_count_state).
 *   - Intervals close in time order (each at the event that ends it, the
 *     open ones at the end), so g_interval's rowid order is end order: the
 *     viewer finds "the intervals ending after t" by a binary search on
 *     rowid instead of an index. g_close checks it.
 *   - The losses: a lossless trace never has a P or an M running two Gs,
 *     but a lost g_stop would leave its G "running" until the end. So the
 *     state machines hold the physical bounds themselves: when an event
 *     shows that a G cannot be running any more (another G runs on its P
 *     or M, its P goes idle, its M parks or spins), its interval is closed
 *     as cut (cut = 1) and the G is `unknown` until its next event; a G
 *     that is run again while "running" has its interval cut too. In a
 *     lossless trace none of this happens (meta.loss_repairs counts the
 *     times it did).
 * Concurrency: one thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "derive_int.h"

const char *g_reason_name(int reason)
{
	if (reason == GR_CREATE)
		return "create";
	if (reason == GR_READY)
		return "ready";
	if (reason >= 0 && reason < WSR_G_REASON_COUNT)
		return wsr_g_reason_names[reason];
	return NULL;
}

void g_count_state(struct derive *dv, uint8_t state, int delta)
{
	if (state == GS_RUNNING)
		dv->cur.running_gs += delta;
	else if (state == GS_RUNNABLE)
		dv->cur.runnable_gs += delta;
}

int g_close(struct derive *dv, struct gs *e, int64_t ts, int source, int cut,
	    struct wsr_err *err)
{
	struct row_g_interval row = {
		.g = e->g,
		.state = e->state,
		.start_ts = e->start,
		.dur = ts - e->start,
		.end_ts = ts,
		.p = e->p,
		.m = e->m,
		.reason = e->reason,
		.source = source,
		.cut = cut,
	};

	if (ts < dv->gt.last_end) {
		err_push(err, "internal error: G %" PRId64 "'s interval ends at %" PRId64
			 " ns, before the one written last (%" PRId64 " ns)", e->g, ts,
			 dv->gt.last_end);
		return -1;
	}
	dv->gt.last_end = ts;
	e->ns[e->state] += ts - e->start;
	if (e->state == GS_RUNNABLE && !cut)
		latency_count(&dv->lat, ts - e->start);
	if (e->state == GS_RUNNING && e->p >= 0 && e->p < dv->np)
		dv->ps[e->p].run_ns += ts - e->start;
	if (dag_interval(dv, e, ts, source, cut, err) < 0)
		return -1;
	return rows_add(dv->rows, ROWS_G_INTERVAL, &row, err);
}

/* Closes the open interval and opens `state` at ts. */
static int g_to(struct derive *dv, struct gs *e, uint8_t state, int64_t ts, int32_t p, int32_t m,
		int reason, int source, struct wsr_err *err)
{
	if (g_close(dv, e, ts, source, 0, err) < 0)
		return -1;
	if (state == GS_RUNNING && e->state == GS_RUNNABLE && e->p >= 0) {
		dv->queued_runs++;
		dv->local_runs += p == e->p;
	}
	g_count_state(dv, e->state, -1);
	e->state = state;
	e->start = ts;
	e->p = p;
	e->m = m;
	e->reason = (int8_t)reason;
	g_count_state(dv, state, +1);
	return 0;
}

int g_write_row(struct derive *dv, struct gs *e, int64_t end_ts, struct wsr_err *err)
{
	struct row_g row = {
		.g = e->g,
		.parent = e->has_parent ? e->parent : ROW_NULL,
		.created_ts = e->created_ts,
		.first_run = e->first_run_ts != TS_NONE ? e->first_run_ts - e->created_ts : ROW_NULL,
		.ended = end_ts != TS_NONE ? end_ts - e->created_ts : ROW_NULL,
		.create_p = e->create_p,
		.runs = e->runs,
		.stolen = e->stolen,
		.run_ns = e->ns[GS_RUNNING],
		.runnable_ns = e->ns[GS_RUNNABLE],
		.waiting_ns = e->ns[GS_WAITING],
		.syscall_ns = e->ns[GS_SYSCALL],
	};

	return rows_add(dv->rows, ROWS_G, &row, err);
}

/* A G seen for the first time at ts, in `state`. */
static struct gs *g_new(struct derive *dv, int64_t g, int64_t ts, uint8_t state, int reason,
			struct wsr_err *err)
{
	struct gs *e = gtable_find(&dv->gt, g);
	struct dagg *carry = NULL;

	if (e != NULL) {
		/* The id is reused without an exit: close the old G as cut. Its
		 * DAG goes on under the id (the DAG's Gs are ids). */
		if (g_close(dv, e, ts, -1, 1, err) < 0 || g_write_row(dv, e, TS_NONE, err) < 0)
			return NULL;
		g_count_state(dv, e->state, -1);
		carry = e->dag;
		e->dag = NULL;
		gtable_delete(&dv->gt, e);
	}
	e = gtable_insert(&dv->gt, g, err);
	if (e == NULL) {
		dag_state_free(carry);
		return NULL;
	}
	e->created_ts = ts;
	e->start = ts;
	e->state = state;
	e->reason = (int8_t)reason;
	g_count_state(dv, state, +1);
	if (dag_g_new(dv, e, carry, err) < 0)
		return NULL;
	return e;
}

static struct gs *g_get(struct derive *dv, int64_t g, int64_t ts, struct wsr_err *err)
{
	struct gs *e = gtable_find(&dv->gt, g);

	if (e == NULL)
		e = g_new(dv, g, ts, GS_WAITING, GR_NONE, err);
	return e;
}

/* ---- losses ----
 *
 * A lossless trace never has a P or an M running two Gs, but a lost g_stop
 * would leave its G "running" until the end. So the state machines hold
 * the physical bounds themselves: when an event shows that a G cannot be
 * running any more (another G runs on its P or M, its P goes idle, its M
 * parks or spins), its interval is closed as cut (cut = 1) and the G is
 * `unknown` until its next event; a G that is run again while "running"
 * has its interval cut too. Likewise a P that an M holds is not idle (a
 * lost p_busy), and an M that runs a G neither spins nor is in a call (a
 * lost spin_stop or syscall_exit). In a lossless trace none of this
 * happens (meta.loss_repairs counts the times it did). */

/* G e's open interval ends at ts as cut by a loss; e is `unknown` after it. */
int g_lose(struct derive *dv, struct gs *e, int64_t ts, struct wsr_err *err)
{
	if (g_close(dv, e, ts, -1, 1, err) < 0)
		return -1;
	g_count_state(dv, e->state, -1);
	if (e->p >= 0 && e->p < dv->np && dv->ps[e->p].curg == e->g)
		dv->ps[e->p].curg = 0;
	if (e->m >= 0 && e->m < dv->nm && dv->ms[e->m].curg == e->g)
		dv->ms[e->m].curg = 0;
	e->state = GS_UNKNOWN;
	e->start = ts;
	e->p = e->m = -1;
	e->reason = GR_NONE;
	e->pending_ready = false;
	dv->loss_repairs++;
	return 0;
}

/* The G that P p (or M m) runs, unless it is g: it cannot run any more. */
int p_evict(struct derive *dv, int p, int64_t g, int64_t ts, struct wsr_err *err)
{
	int64_t cur = dv->ps[p].curg;
	struct gs *o;

	if (cur == 0 || cur == g)
		return 0;
	dv->ps[p].curg = 0;
	o = gtable_find(&dv->gt, cur);
	if (o != NULL && o->state == GS_RUNNING && o->p == p)
		return g_lose(dv, o, ts, err);
	return 0;
}

int m_evict(struct derive *dv, int m, int64_t g, int64_t ts, struct wsr_err *err)
{
	int64_t cur = dv->ms[m].curg;
	struct gs *o;

	if (cur == 0 || cur == g)
		return 0;
	dv->ms[m].curg = 0;
	o = gtable_find(&dv->gt, cur);
	if (o != NULL && (o->state == GS_RUNNING || o->state == GS_SYSCALL) && o->m == m)
		return g_lose(dv, o, ts, err);
	return 0;
}

/* The emitter M m holds P p (-1: none) at ts: a G still "running" on M m
 * elsewhere, or on P p with another M, lost its g_stop. (Losing the first
 * changes neither P p's G nor the table.) */
int held_repair(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	int64_t mg = m < dv->nm ? dv->ms[m].curg : 0;
	int64_t pg = p >= 0 && p < dv->np ? dv->ps[p].curg : 0;
	struct gs *o = NULL;

	if (mg != 0) {
		o = gtable_find(&dv->gt, mg);
		if (o != NULL && o->state == GS_RUNNING && o->m == m && o->p != p &&
		    g_lose(dv, o, ts, err) < 0)
			return -1;
	}
	/* P p's G: mostly M m's, found once */
	if (pg != 0 && pg != mg)
		o = gtable_find(&dv->gt, pg);
	if (pg != 0 && o != NULL && o->state == GS_RUNNING && o->p == p && o->m != m)
		return g_lose(dv, o, ts, err);
	return 0;
}

/* A G still "running" on M m's P p when M m loses p lost its g_stop (an
 * M gives up its P only after its G stopped or entered a call). */
int m_loses_p(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	struct gs *o;

	if (m < 0 || dv->ms[m].curg == 0)
		return 0;
	o = gtable_find(&dv->gt, dv->ms[m].curg);
	if (o != NULL && o->state == GS_RUNNING && o->m == m && o->p == p)
		return g_lose(dv, o, ts, err);
	return 0;
}

/* ---- G events ---- */

int ev_g_create(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	struct gs *e = g_new(dv, r->g, r->ts, GS_RUNNABLE, GR_CREATE, err);

	if (e == NULL)
		return -1;
	e->has_parent = true;
	e->parent = r->a1;
	e->create_p = r->p;
	return 0;
}

/* runqput (on P p's ring or runnext) and globrunq_put: G r->g is queued.
 * The ring counts are the counters tracker's (counters.c). */
int ev_g_queued(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	bool global = r->ev == EV_GLOBRUNQ_PUT;
	int p = global ? -1 : r->p;
	struct gs *e = gtable_find(&dv->gt, r->g);

	if (e == NULL) {
		e = g_new(dv, r->g, r->ts, GS_RUNNABLE, GR_READY, err);
		if (e == NULL)
			return -1;
	}
	if (e->state == GS_WAITING || e->state == GS_SYSCALL || e->state == GS_UNKNOWN) {
		if (g_to(dv, e, GS_RUNNABLE, r->ts, p, -1,
			 e->state == GS_SYSCALL ? WSR_REASON_SYSCALL : GR_READY, -1, err) < 0)
			return -1;
	} else if (e->state == GS_RUNNING) {
		e->pending_ready = true;
	} else if (!global && e->p < 0) {
		e->p = p;
	}
	if (global) {
		e->q = Q_GLOBAL;
		e->qp = -1;
		return 0;
	}
	e->q = r->a1 ? Q_RUNNEXT : Q_RING;
	e->qp = p;
	if (r->a1 && r->a2 > 0) {
		/* the G kicked out of runnext goes to the ring */
		struct gs *k = gtable_find(&dv->gt, r->a2);
		if (k != NULL) {
			k->q = Q_RING;
			k->qp = p;
		}
	}
	return 0;
}

/* G r->g of a g_run or g_stop; fresh: first seen now, running on r's P and
 * M (the trace began after it was queued). */
static struct gs *g_find_running(struct derive *dv, const struct wsr_rec *r, bool *fresh,
				 struct wsr_err *err)
{
	struct gs *e = gtable_find(&dv->gt, r->g);

	*fresh = e == NULL;
	if (e != NULL)
		return e;
	e = g_new(dv, r->g, r->ts, GS_RUNNING, GR_NONE, err);
	if (e != NULL) {
		e->p = r->p;
		e->m = r->m;
	}
	return e;
}

int ev_g_run(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;
	bool fresh;
	struct gs *e = g_find_running(dv, r, &fresh, err);

	if (e == NULL)
		return -1;
	if (!fresh) {
		if (e->q == Q_RUNNEXT && e->qp >= 0 && e->qp != p &&
		    dv->ps[e->qp].runnext == r->g) {
			dv->ps[e->qp].runnext = 0;
			p_dirty(dv, e->qp);
		}
		/* Run again while "running": its g_stop was lost. */
		if (e->state == GS_RUNNING && g_lose(dv, e, ts, err) < 0)
			return -1;
		if (g_to(dv, e, GS_RUNNING, ts, p, m, GR_NONE, (int)r->a1, err) < 0)
			return -1;
	}
	/* Another G still "running" on this P or M lost its g_stop. */
	if (p_evict(dv, p, r->g, ts, err) < 0)
		return -1;
	dv->ps[p].curg = r->g;
	if (m >= 0) {
		struct ms *M = &dv->ms[m];
		if (m_evict(dv, m, r->g, ts, err) < 0)
			return -1;
		M->curg = r->g;
		if (M->spinning || M->insyscall) {
			/* Its spin_stop or syscall_exit was lost. */
			m_set_spinning(dv, m, false);
			M->insyscall = false;
			dv->loss_repairs++;
			if (m_set(dv, m, ts, err) < 0 || p_set(dv, p, ts, err) < 0)
				return -1;
		}
	}
	ring_g_run(dv, r, e);
	e->q = Q_NONE;
	e->qp = -1;
	e->pending_ready = false;
	e->runs++;
	if (r->a1 == WSR_SOURCE_STEAL)
		e->stolen++;
	if (e->first_run_ts == TS_NONE) {
		e->first_run_ts = ts;
		dag_first_run(dv);
	}
	return 0;
}

int ev_g_stop(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;
	bool fresh;
	struct gs *e = g_find_running(dv, r, &fresh, err);

	if (e == NULL)
		return -1;
	if (e->state == GS_RUNNING)
		e->reason = (int8_t)r->a1;
	if (p >= 0 && dv->ps[p].curg == r->g)
		dv->ps[p].curg = 0;
	if (m >= 0) {
		/* A stop on M m of another G than the one it runs: that
		 * one's g_stop was lost. */
		if (m_evict(dv, m, r->g, ts, err) < 0)
			return -1;
		dv->ms[m].curg = 0;
	}
	if (r->a1 == WSR_REASON_EXIT) {
		if (g_close(dv, e, ts, -1, 0, err) < 0 || g_write_row(dv, e, ts, err) < 0)
			return -1;
		g_count_state(dv, e->state, -1);
		dag_g_exit(dv, e);
		gtable_delete(&dv->gt, e);
		return 0;
	}
	uint8_t next;
	int why = (int)r->a1;
	int32_t qp = -1;
	/* syscall: the slow end of a call (p = -1): the G is queued
	 * next (globrunq_put, or runqput on a P that went idle). */
	if (r->a1 == WSR_REASON_YIELD || r->a1 == WSR_REASON_PREEMPT ||
	    r->a1 == WSR_REASON_SYSCALL || e->pending_ready) {
		next = GS_RUNNABLE;
		if (e->pending_ready)
			why = GR_READY;
		if (e->q == Q_RING || e->q == Q_RUNNEXT)
			qp = e->qp;
	} else {
		next = GS_WAITING;
	}
	if (g_close(dv, e, ts, -1, 0, err) < 0)
		return -1;
	g_count_state(dv, e->state, -1);
	e->state = next;
	e->start = ts;
	e->p = next == GS_RUNNABLE ? qp : p;
	e->m = next == GS_RUNNABLE ? -1 : m;
	e->reason = (int8_t)why;
	e->pending_ready = false;
	g_count_state(dv, next, +1);
	return 0;
}

int ev_g_ready(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	struct gs *e = g_get(dv, r->g, r->ts, err);

	if (e == NULL)
		return -1;
	if (e->state == GS_WAITING || e->state == GS_SYSCALL || e->state == GS_UNKNOWN) {
		if (g_to(dv, e, GS_RUNNABLE, r->ts, -1, -1,
			 e->state == GS_SYSCALL ? WSR_REASON_SYSCALL : GR_READY, -1, err) < 0)
			return -1;
	} else if (e->state == GS_RUNNING) {
		e->pending_ready = true;
	}
	return 0;
}

/* An M in or back from a call with its G is not spinning: a flag still set
 * means its spin_stop was lost (seen in a lossy run: a G running on a P
 * whose M was "spinning", after a syscall_exit that took an idle P). */
static void m_not_spinning(struct derive *dv, int m)
{
	if (dv->ms[m].spinning) {
		m_set_spinning(dv, m, false);
		dv->loss_repairs++;
	}
}

static int syscall_enter(struct derive *dv, const struct wsr_rec *r, struct gs *e,
			 struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;

	/* Another G still "running" on this P or M lost its g_stop (and this
	 * G its g_run): seen in a lossy trace, a G "running" on a P for 2 us
	 * of the P's syscall state. */
	if (p >= 0 && p_evict(dv, p, r->g, ts, err) < 0)
		return -1;
	if (m >= 0 && m_evict(dv, m, r->g, ts, err) < 0)
		return -1;
	if (m >= 0)
		m_not_spinning(dv, m);
	if (e->state != GS_SYSCALL && g_to(dv, e, GS_SYSCALL, ts, p, m, WSR_REASON_SYSCALL, -1, err) < 0)
		return -1;
	if (p >= 0) {
		dv->ps[p].syscalls++;
		if (dv->ps[p].curg == r->g)
			dv->ps[p].curg = 0;
	}
	if (m >= 0) {
		dv->ms[m].curg = r->g;
		dv->ms[m].insyscall = true;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
		if (dv->ms[m].p >= 0 && p_set(dv, dv->ms[m].p, ts, err) < 0)
			return -1;
	}
	return 0;
}

static int syscall_exit(struct derive *dv, const struct wsr_rec *r, struct gs *e,
			struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;

	if (m >= 0) {
		struct ms *M = &dv->ms[m];
		M->insyscall = false;
		m_not_spinning(dv, m);
		if (!r->a1 && p < 0 && M->p >= 0 && pm_release(dv, m, M->p, ts, err) < 0)
			return -1;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
		if (M->p >= 0 && p_set(dv, M->p, ts, err) < 0)
			return -1;
	}
	/* With a P (its own, fast, or an idle one) the G runs on; with
	 * none it stays in the call until its g_stop(syscall). */
	if (p >= 0) {
		if (e->state != GS_RUNNING &&
		    g_to(dv, e, GS_RUNNING, ts, p, m, GR_NONE, -1, err) < 0)
			return -1;
		if (p_evict(dv, p, r->g, ts, err) < 0)
			return -1;
		dv->ps[p].curg = r->g;
	}
	return 0;
}

/* syscall_enter, syscall_exit: the G, its M and the M's P. */
int ev_syscall(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	struct gs *e = g_get(dv, r->g, r->ts, err);

	if (e == NULL)
		return -1;
	return r->ev == EV_SYSCALL_ENTER ? syscall_enter(dv, r, e, err)
					 : syscall_exit(dv, r, e, err);
}

/* Closes what is open at the last event (cut = 1) and writes the g rows of
 * the Gs still alive. */
int g_finish(struct derive *dv, int64_t end, struct wsr_err *err)
{
	for (size_t i = 0; i < dv->gt.gn; i++) {
		struct gs *e = &dv->gt.gtab[i];
		if (e->g == 0)
			continue;
		if (g_close(dv, e, end, -1, 1, err) < 0 || g_write_row(dv, e, TS_NONE, err) < 0)
			return -1;
	}
	return 0;
}
