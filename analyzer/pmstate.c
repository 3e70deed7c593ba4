/*
 * pmstate.c - the P and M trackers: their state machines and the p_state,
 * m_state, p and m rows they write (derive_int.h, docs/schema.md "States").
 *
 *   P: idle / running / spinning / syscall, computed from the P's idle flag
 *      and the state of the M holding it.
 *   M: running / spinning / syscall / parked / no_p.
 * Which M holds which P is learnt from the (p, m) pair every event carries
 * (the emitter holds p), except for the events that name another thread's
 * P or M (retake, handoff, preempt) and the ones with their own meaning
 * (p_idle, p_busy, m_unpark).
 *
 * Invariants:
 *   - P and M intervals are only written when the state changes, and an
 *     interval of zero length is folded into the next one, so per P and M
 *     the rows tile time.
 *   - ps[p].holder == m and ms[m].p == p together, or neither (pm_assoc,
 *     pm_release keep both sides).
 *   - ps and ms grow by realloc (p_known, m_known, m_ensure): a pointer
 *     into them is stale after one of those calls.
 *   - cur.spinning_ms is the number of Ms whose spinning flag is set, kept
 *     by m_set_spinning() only (the M states and the count are one fact).
 *     Not spin_start's or spin_stop's nmspinning: the runtime changes
 *     nmspinning before it emits the event, and an M descheduled between
 *     the two emits a count that other Ms' changes have since moved (seen:
 *     a spin_stop 4.3 ms late carrying 0 while another M was spinning).
 * Concurrency: one thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive_int.h"

static const char *const pstate_names[] = {"idle", "running", "spinning", "syscall"};
static const char *const mstate_names[] = {"running", "spinning", "syscall", "parked", "no_p"};

static int p_ensure(struct derive *dv, int p, struct wsr_err *err)
{
	if (p < dv->np)
		return 0;
	int n = dv->np == 0 ? 8 : dv->np;
	while (n <= p)
		n *= 2;
	struct ps *np = realloc(dv->ps, (size_t)n * sizeof(*np));
	if (np == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	dv->ps = np;
	int *nd = realloc(dv->dirty_ps, (size_t)n * sizeof(*nd));
	if (nd == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	dv->dirty_ps = nd;
	memset(np + dv->np, 0, (size_t)(n - dv->np) * sizeof(*np));
	dv->np = n;
	return 0;
}

int m_ensure(struct derive *dv, int m, struct wsr_err *err)
{
	if (m < dv->nm)
		return 0;
	int n = dv->nm == 0 ? 16 : dv->nm;
	while (n <= m)
		n *= 2;
	struct ms *nm = realloc(dv->ms, (size_t)n * sizeof(*nm));
	if (nm == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	memset(nm + dv->nm, 0, (size_t)(n - dv->nm) * sizeof(*nm));
	dv->ms = nm;
	dv->nm = n;
	return 0;
}

/* Writes one P state interval [start, end) (m: its holder; cut: 1 if the
 * trace ended inside it). */
static int p_state_row(struct derive *dv, int p, const struct ps *P, int64_t end, int cut,
		       struct wsr_err *err)
{
	struct row_p_state row = {
		.p = p,
		.state = pstate_names[P->state],
		.start_ts = P->start,
		.end_ts = end,
		.m = P->st_m,
		.cut = cut,
	};

	return rows_add(dv->rows, ROWS_P_STATE, &row, err);
}

static int m_state_row(struct derive *dv, int m, const struct ms *M, int64_t end, int cut,
		       struct wsr_err *err)
{
	struct row_m_state row = {
		.m = m,
		.state = mstate_names[M->state],
		.start_ts = M->start,
		.end_ts = end,
		.p = M->st_p,
		.cut = cut,
	};

	return rows_add(dv->rows, ROWS_M_STATE, &row, err);
}

/* P p's state now (and the M it is in, -1: none), from its idle flag and
 * the state of the M holding it. */
static inline uint8_t p_state_now(const struct derive *dv, const struct ps *P, int p, int32_t *m)
{
	*m = -1;
	if (P->idle)
		return PS_IDLE;
	if (P->holder >= 0 && dv->ms[P->holder].p == p) {
		const struct ms *M = &dv->ms[P->holder];
		*m = P->holder;
		return M->insyscall ? PS_SYSCALL : M->spinning ? PS_SPINNING : PS_RUNNING;
	}
	return PS_RUNNING;
}

int p_set(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];
	int32_t m;
	uint8_t st = p_state_now(dv, P, p, &m);

	if (st == P->state && m == P->st_m)
		return 0;
	if (P->state != PS_NONE && ts > P->start && p_state_row(dv, p, P, ts, 0, err) < 0)
		return -1;
	if (P->state == PS_NONE || ts > P->start)
		P->start = ts;
	P->state = st;
	P->st_m = m;
	return 0;
}

int m_set(struct derive *dv, int m, int64_t ts, struct wsr_err *err)
{
	struct ms *M = &dv->ms[m];
	uint8_t st;
	int32_t p = M->p;

	if (M->parked)
		st = MS_PARKED, p = -1;
	else if (M->insyscall)
		st = MS_SYSCALL;
	else if (M->p < 0)
		st = MS_NOP;
	else
		st = M->spinning ? MS_SPINNING : MS_RUNNING;
	if (st == M->state && p == M->st_p)
		return 0;
	if (M->state != MS_NONE && ts > M->start && m_state_row(dv, m, M, ts, 0, err) < 0)
		return -1;
	if (M->state == MS_NONE || ts > M->start)
		M->start = ts;
	M->state = st;
	M->st_p = p;
	return 0;
}

/* Makes M m known (first seen at ts, by an event with thread id tid). */
int m_known(struct derive *dv, int m, int64_t ts, int64_t tid, struct wsr_err *err)
{
	if (m < 0)
		return 0;
	if (m_ensure(dv, m, err) < 0)
		return -1;
	struct ms *M = &dv->ms[m];
	if (!M->known) {
		M->known = true;
		M->p = M->st_p = -1;
		M->state = MS_NONE;
		M->created_ts = ts;
		M->tid = tid;
		dv->threads++;
		dv->cur.threads = dv->threads;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	} else if (M->tid < 0 && tid >= 0) {
		M->tid = tid;
	}
	return 0;
}

int p_known(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	if (p < 0)
		return 0;
	if (p_ensure(dv, p, err) < 0)
		return -1;
	struct ps *P = &dv->ps[p];
	if (!P->known) {
		P->known = true;
		P->ring_unsynced = dv->gomaxprocs == 0;
		P->holder = P->st_m = -1;
		P->state = PS_NONE;
		return p_set(dv, p, ts, err);
	}
	return 0;
}

/* M m holds P p from ts on (both known). */
int pm_assoc(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	struct ms *M = &dv->ms[m];
	struct ps *P = &dv->ps[p];

	if (M->p == p && P->holder == m && !M->parked)
		return 0;
	M->parked = false;
	if (M->p >= 0 && M->p != p) {
		int op = M->p;
		if (m_loses_p(dv, m, op, ts, err) < 0)
			return -1;
		if (dv->ps[op].holder == m)
			dv->ps[op].holder = -1;
		M->p = p;
		if (p_set(dv, op, ts, err) < 0)
			return -1;
	}
	if (P->holder >= 0 && P->holder != m) {
		int om = P->holder;
		if (m_loses_p(dv, om, p, ts, err) < 0)
			return -1;
		if (dv->ms[om].p == p)
			dv->ms[om].p = -1;
		P->holder = m;
		if (m_set(dv, om, ts, err) < 0)
			return -1;
	}
	M->p = p;
	P->holder = m;
	if (m_set(dv, m, ts, err) < 0 || p_set(dv, p, ts, err) < 0)
		return -1;
	return 0;
}

/* M m no longer holds P p (if it did). */
int pm_release(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	if (m >= 0 && dv->ms[m].p == p && m_loses_p(dv, m, p, ts, err) < 0)
		return -1;
	if (m >= 0 && dv->ms[m].p == p) {
		dv->ms[m].p = -1;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	}
	if (p >= 0 && dv->ps[p].holder == m) {
		dv->ps[p].holder = -1;
		if (p_set(dv, p, ts, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- the emitter ----
 *
 * Every event but retake, handoff, preempt and schedtrace (sysmon's, naming
 * another thread's P and M) is emitted by M m holding P p; p_idle, p_busy
 * and m_unpark have their own meaning for the pair. */

static bool names_other_thread(const struct wsr_rec *r)
{
	return r->ev == EV_RETAKE || r->ev == EV_HANDOFF || r->ev == EV_PREEMPT ||
	       r->ev == EV_SCHEDTRACE;
}

int pm_emitter(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;
	int64_t tid = (r->flags & REC_F_TID) ? r->tid : -1;
	bool foreign_pm = names_other_thread(r);

	/* The tests before each call are the calls' own early returns: most
	 * events find their M and P known and held together, as they were. */
	if (!foreign_pm && m >= 0) {
		/* A woken M's m_unpark and spin_start are emitted by its waker
		 * (startm): their vtid is the waker's, so an M's tid comes from
		 * its other events. */
		if (r->ev == EV_SPIN_START || r->ev == EV_M_UNPARK)
			tid = -1;
		if ((m >= dv->nm || !dv->ms[m].known || (dv->ms[m].tid < 0 && tid >= 0)) &&
		    m_known(dv, m, ts, tid, err) < 0)
			return -1;
	}
	if (p >= 0 && (p >= dv->np || !dv->ps[p].known) && p_known(dv, p, ts, err) < 0)
		return -1;
	bool holds = !foreign_pm && m >= 0 && r->ev != EV_P_IDLE && r->ev != EV_P_BUSY &&
		     r->ev != EV_M_UNPARK;
	if (holds && held_repair(dv, m, p, ts, err) < 0)
		return -1;
	if (holds && p >= 0) {
		struct ps *P = &dv->ps[p];
		const struct ms *M = &dv->ms[m];
		/* Held: a handoff still to come is late (spin_start may be
		 * sysmon's, for the M it hands the P to: see ev_take_p). */
		if (r->ev != EV_SPIN_START)
			P->retaken = false;
		if (P->idle) {
			/* M m holds it: its p_busy was lost (see "losses"). */
			P->idle = false;
			dv->loss_repairs++;
		}
		if (!(M->p == p && P->holder == m && !M->parked) && pm_assoc(dv, m, p, ts, err) < 0)
			return -1;
		P = &dv->ps[p];
		int32_t pm;
		if (p_state_now(dv, P, p, &pm) != P->state || pm != P->st_m)
			return p_set(dv, p, ts, err);
	} else if (!foreign_pm && m >= 0 && dv->ms[m].parked && r->ev != EV_M_PARK &&
		   r->ev != EV_M_UNPARK) {
		dv->ms[m].parked = false;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- P and M events ---- */

int ev_init(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int m = r->m;

	if (dv->gomaxprocs != 0)
		return 0;
	dv->gomaxprocs = (int)r->a1;
	dv->runq_size = r->a2;
	if (extra != NULL)
		snprintf(dv->runtime_version, sizeof(dv->runtime_version), "%s", extra);
	/* Runtimes before the field: no meta policy (not provably go). */
	if (r->flags & REC_F_A3) {
		if (r->a3 >= 0 && r->a3 < WSR_POLICY_COUNT)
			snprintf(dv->policy, sizeof(dv->policy), "%s", wsr_policy_names[r->a3]);
		else
			snprintf(dv->policy, sizeof(dv->policy), "#%" PRId64, r->a3);
	}
	for (int k = 0; k < dv->gomaxprocs; k++) {
		if (p_known(dv, k, ts, err) < 0)
			return -1;
		/* P0 starts held by M0; the others start idle. */
		if (k > 0 || m < 0) {
			dv->ps[k].idle = true;
			if (p_set(dv, k, ts, err) < 0)
				return -1;
		}
	}
	if (m >= 0 && pm_assoc(dv, m, 0, ts, err) < 0)
		return -1;
	return 0;
}

void m_set_spinning(struct derive *dv, int m, bool on)
{
	struct ms *M = &dv->ms[m];

	if (M->spinning != on) {
		M->spinning = on;
		dv->cur.spinning_ms += on ? 1 : -1;
	}
}

static int ev_spin(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int m = r->m;

	/* A spinning M runs no G. */
	if (r->ev == EV_SPIN_START && m >= 0 && m_evict(dv, m, 0, r->ts, err) < 0)
		return -1;
	if (r->ev == EV_SPIN_STOP && r->a2)
		dv->spins_found++;
	if (m < 0)
		dv->cur.spinning_ms = r->a1; /* no M to count: the runtime's count */
	if (m >= 0) {
		m_set_spinning(dv, m, r->ev == EV_SPIN_START);
		if (m_set(dv, m, r->ts, err) < 0)
			return -1;
		if (dv->ms[m].p >= 0 && p_set(dv, dv->ms[m].p, r->ts, err) < 0)
			return -1;
	}
	return 0;
}

static int ev_p_idle_busy(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;

	dv->cur.idle_ps = r->a1;
	if (r->ev == EV_P_IDLE) {
		if (p_evict(dv, p, 0, ts, err) < 0)
			return -1;
		dv->ps[p].idle = true;
		if (dv->ps[p].holder >= 0 && pm_release(dv, dv->ps[p].holder, p, ts, err) < 0)
			return -1;
		return p_set(dv, p, ts, err);
	}
	dv->ps[p].idle = false;
	dv->ps[p].retaken = false;
	if (p_set(dv, p, ts, err) < 0)
		return -1;
	/* An M without a P that takes one off the idle list runs it. */
	if (m >= 0 && dv->ms[m].p < 0 && pm_assoc(dv, m, p, ts, err) < 0)
		return -1;
	return 0;
}

static int ev_m_park_unpark(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;

	dv->cur.idle_ms = r->a1;
	if (m < 0)
		return 0;
	struct ms *M = &dv->ms[m];
	if (r->ev == EV_M_PARK) {
		if (m_evict(dv, m, 0, ts, err) < 0)
			return -1;
		if (M->p >= 0 && pm_release(dv, m, M->p, ts, err) < 0)
			return -1;
		M->parked = true;
		m_set_spinning(dv, m, false);
		M->insyscall = false;
		return m_set(dv, m, ts, err);
	}
	M->parked = false;
	if (p >= 0)
		return pm_assoc(dv, m, p, ts, err);
	return m_set(dv, m, ts, err);
}

static int ev_m_create(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int nm = (int)r->a1;

	if (m_ensure(dv, nm, err) < 0)
		return -1;
	if (!dv->ms[nm].known) {
		if (m_known(dv, nm, r->ts, -1, err) < 0)
			return -1;
		dv->ms[nm].tid = -1;
	}
	dv->ms[nm].has_creator = true;
	dv->ms[nm].creator = r->m;
	return 0;
}

/* retake, then handoff: sysmon takes P p from M m, in a call, and hands
 * it on. The runtime emits the handoff before the P's next holder can run
 * it (docs/tracepoints.md, "Sequence rules"); a runtime before 2026-12-02
 * emitted it afterwards, so in its traces a handoff can follow events of
 * the P's next holder, even of M m holding it again. Such a late handoff
 * says nothing the holder's own events did not: it changes no state
 * (applied, it would take the P from its holder and cut the holder's G). */
static int ev_take_p(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;

	if (p < 0)
		return 0;
	if (r->ev == EV_HANDOFF) {
		if (!dv->ps[p].retaken && dv->ps[p].holder >= 0)
			return 0;
		dv->ps[p].retaken = false;
	}
	if (m >= 0 && m < dv->nm && dv->ms[m].known && pm_release(dv, m, p, ts, err) < 0)
		return -1;
	if (r->ev == EV_RETAKE)
		dv->ps[p].retaken = true;
	if (r->ev == EV_HANDOFF && r->a1 >= 0) {
		int to = (int)r->a1;
		if (m_known(dv, to, ts, -1, err) < 0 || pm_assoc(dv, to, p, ts, err) < 0)
			return -1;
	}
	return 0;
}

int ev_pm(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	switch (r->ev) {
	case EV_SPIN_START:
	case EV_SPIN_STOP:
		return ev_spin(dv, r, err);
	case EV_P_IDLE:
	case EV_P_BUSY:
		return ev_p_idle_busy(dv, r, err);
	case EV_M_PARK:
	case EV_M_UNPARK:
		return ev_m_park_unpark(dv, r, err);
	case EV_M_CREATE:
		return ev_m_create(dv, r, err);
	case EV_HANDOFF:
	case EV_RETAKE:
		return ev_take_p(dv, r, err);
	default:
		return 0;
	}
}

/* Closes the P and M intervals open at the last event (cut = 1) and writes
 * the p and m rows. */
int pm_finish(struct derive *dv, int64_t end, struct wsr_err *err)
{
	for (int p = 0; p < dv->np; p++) {
		struct ps *P = &dv->ps[p];
		if (!P->known)
			continue;
		if (P->state != PS_NONE && end > P->start && p_state_row(dv, p, P, end, 1, err) < 0)
			return -1;
		struct row_p row = {
			.p = p,
			.schedticks = P->schedticks,
			.syscalls = P->syscalls,
			.run_ns = P->run_ns,
			.runnext_runs = P->runnext_runs,
			.runs = P->runs,
		};
		if (rows_add(dv->rows, ROWS_P, &row, err) < 0)
			return -1;
	}
	for (int m = 0; m < dv->nm; m++) {
		struct ms *M = &dv->ms[m];
		if (!M->known)
			continue;
		if (M->state != MS_NONE && end > M->start && m_state_row(dv, m, M, end, 1, err) < 0)
			return -1;
		struct row_m row = {
			.m = m,
			.tid = M->tid >= 0 ? M->tid : ROW_NULL,
			.created_ts = M->created_ts,
			.creator = M->has_creator ? M->creator : ROW_NULL,
		};
		if (rows_add(dv->rows, ROWS_M, &row, err) < 0)
			return -1;
	}
	return 0;
}

void pm_destroy(struct derive *dv)
{
	for (int p = 0; p < dv->np; p++)
		free(dv->ps[p].pc);
	free(dv->ps);
	free(dv->ms);
	free(dv->dirty_ps);
}
