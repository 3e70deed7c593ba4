/*
 * p.c - Ps: the P array, the idle P list, acquirep/releasep (Go: procresize,
 * pidleput, pidleget, acquirep, releasep).
 *
 * Invariants:
 *   - allp has gomaxprocs entries, fixed for the life of the runtime.
 *   - A P on sched.pidle is P_IDLE with p->m == NULL and an empty run queue.
 *   - npidle == length of sched.pidle.
 * Concurrency: pidle, npidle (seq_cst writes) under sched.lock; a P's status
 *   is written by its owner (or by sysmon's CAS from P_SYSCALL).
 * Tracepoints: p_idle, p_busy.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "runq.h"

void wsr__procinit(int32_t nprocs)
{
	int32_t i;

	wsr__sched.allp = aligned_alloc(64, sizeof(struct wsr_p) * (size_t)nprocs);
	if (wsr__sched.allp == NULL)
		wsr__throw("procinit: out of memory");
	memset(wsr__sched.allp, 0, sizeof(struct wsr_p) * (size_t)nprocs);
	for (i = 0; i < nprocs; i++) {
		struct wsr_p *pp = &wsr__sched.allp[i];

		pp->id = i;
		store_relaxed(&pp->status, P_IDLE);
		wsr__lock_init(&pp->timerlock);
		wsr__lock_init(&pp->dqlock);
	}
}

void wsr__procfree(void)
{
	int32_t i;

	if (wsr__ms_leaked())
		return;
	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		struct wsr_p *pp = &wsr__sched.allp[i];

		wsr__stackcache_flush(pp);
		wsr__fibercache_flush(pp);
		wsr__timers_free(pp);
		wsr__lock_destroy(&pp->timerlock);
		wsr__lock_destroy(&pp->dqlock);
	}
	free(wsr__sched.allp);
	wsr__sched.allp = NULL;
}

void wsr__acquirep(struct wsr_m *mp, struct wsr_p *pp)
{
	WSR_ASSERT(mp->p == NULL);
	WSR_ASSERT(pp->m == NULL);
	WSR_ASSERT(load_relaxed(&pp->status) == P_IDLE);
	mp->p = pp;
	pp->m = mp;
	store_seq(&pp->status, P_RUNNING);
}

struct wsr_p *wsr__releasep(struct wsr_m *mp)
{
	struct wsr_p *pp = mp->p;

	WSR_ASSERT(pp != NULL && pp->m == mp);
	WSR_ASSERT(load_relaxed(&pp->status) == P_RUNNING);
	pp->m = NULL;
	mp->p = NULL;
	store_seq(&pp->status, P_IDLE);
	return pp;
}

void wsr__pidleput(struct wsr_m *mp, struct wsr_p *pp)
{
	int32_t n;

	wsr__assert_lock_held(&wsr__sched.lock);
	WSR_ASSERT(load_relaxed(&pp->status) == P_IDLE);
	if (!wsr__runqempty(pp))
		wsr__throw("pidleput: P has a non-empty run queue");
	pp->link = wsr__sched.pidle;
	wsr__sched.pidle = pp;
	/* seq_cst: submitters read npidle in the Dekker pair of the parking protocol. */
	n = xadd_seq(&wsr__sched.npidle, 1) + 1;
	WSR_TRACE(p_idle, wsr__stats_of(mp), pp->id, m_id(mp), n);
}

struct wsr_p *wsr__pidleget(struct wsr_m *mp)
{
	struct wsr_p *pp = wsr__sched.pidle;
	int32_t n;

	wsr__assert_lock_held(&wsr__sched.lock);
	if (pp == NULL)
		return NULL;
	wsr__sched.pidle = pp->link;
	pp->link = NULL;
	n = xadd_seq(&wsr__sched.npidle, -1) - 1;
	WSR_TRACE(p_busy, wsr__stats_of(mp), pp->id, m_id(mp), n);
	return pp;
}
