/*
 * time.c - wsr_sleep_ns on a timer heap per P, fired from findrunnable
 * (Go: time.go's per-P timers, checkTimers, wakeNetPoller).
 *
 * Invariants:
 *   - A sleeping G is in exactly one P's heap (g->timeridx >= 0) from the
 *     moment its context is saved until its timer fires; then it is readied.
 *   - pp->timer0when is the heap's earliest deadline, 0 when empty; it is
 *     only ever written under pp->timerlock.
 *   - When a new timer is earlier than what the M blocked in netpoll waits
 *     for, that M is woken (netpoll_break), so idle Ms sleep until the next
 *     timer instead of spinning and never oversleep a new one.
 * Concurrency: the heap is under pp->timerlock (lock order: timerlock before
 *   sched.lock); any M holding a P may run another P's expired timers (the
 *   last stealWork round) and readies the Gs into its own P.
 * Tracepoints: timer_fire (then g_ready and runqput).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <wsr.h>

#include "proc.h"
#include "runq.h"

static void heap_swap(struct wsr_p *pp, int32_t i, int32_t j)
{
	struct wsr_g *t = pp->timers[i];

	pp->timers[i] = pp->timers[j];
	pp->timers[j] = t;
	pp->timers[i]->timeridx = i;
	pp->timers[j]->timeridx = j;
}

static void sift_up(struct wsr_p *pp, int32_t i)
{
	while (i > 0) {
		int32_t parent = (i - 1) / 4;

		if (pp->timers[parent]->when <= pp->timers[i]->when)
			break;
		heap_swap(pp, i, parent);
		i = parent;
	}
}

static void sift_down(struct wsr_p *pp, int32_t i)
{
	for (;;) {
		int32_t best = i, c, k;

		for (k = 1; k <= 4; k++) {
			c = 4 * i + k;
			if (c < pp->ntimers && pp->timers[c]->when < pp->timers[best]->when)
				best = c;
		}
		if (best == i)
			return;
		heap_swap(pp, i, best);
		i = best;
	}
}

static void update0(struct wsr_p *pp)
{
	store_seq(&pp->timer0when, pp->ntimers > 0 ? pp->timers[0]->when : 0);
}

/* Caller holds pp->timerlock. */
static void heap_push(struct wsr_p *pp, struct wsr_g *gp)
{
	if (pp->ntimers == pp->timerscap) {
		int32_t cap = pp->timerscap != 0 ? pp->timerscap * 2 : 64;
		struct wsr_g **t = realloc(pp->timers, sizeof(*t) * (size_t)cap);

		if (t == NULL)
			wsr__throw("addtimer: out of memory");
		pp->timers = t;
		pp->timerscap = cap;
	}
	gp->timeridx = pp->ntimers;
	pp->timers[pp->ntimers++] = gp;
	sift_up(pp, gp->timeridx);
	update0(pp);
}

/* Caller holds pp->timerlock. */
static struct wsr_g *heap_pop(struct wsr_p *pp)
{
	struct wsr_g *gp = pp->timers[0];

	pp->ntimers--;
	if (pp->ntimers > 0) {
		pp->timers[0] = pp->timers[pp->ntimers];
		pp->timers[0]->timeridx = 0;
		sift_down(pp, 0);
	}
	gp->timeridx = -1;
	update0(pp);
	return gp;
}

int64_t wsr__checktimers(struct wsr_m *mp, struct wsr_p *pp, int64_t now, bool *ran)
{
	struct wsr_g *list = NULL, *gp, *next;
	int64_t next0;

	*ran = false;
	next0 = load_seq(&pp->timer0when);
	if (next0 == 0)
		return 0;
	if (now == 0)
		now = wsr__nanotime();
	if (next0 > now)
		return next0;
	wsr__lock(&pp->timerlock);
	while (pp->ntimers > 0 && pp->timers[0]->when <= now) {
		gp = heap_pop(pp);
		gp->schedlink = list;
		list = gp;
	}
	next0 = load_relaxed(&pp->timer0when);
	wsr__unlock(&pp->timerlock);
	for (gp = list; gp != NULL; gp = next) {
		next = gp->schedlink;
		gp->schedlink = NULL;
		WSR_TRACE(timer_fire, &mp->stats, mp->p->id, mp->id, gp->goid);
		gp->readysrc = SRC_TIMER;
		gp->sleeping = 0;
		store_relaxed(&gp->status, G_RUNNABLE);
		WSR_TRACE(g_ready, &mp->stats, mp->p->id, mp->id, gp->goid, 0);
		wsr__runqput(mp, mp->p, gp, true);
		*ran = true;
	}
	if (*ran)
		wsr__wakep(mp);
	return next0;
}

int64_t wsr__timers_next(void)
{
	int64_t best = 0;
	int32_t i;

	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		int64_t w = load_seq(&wsr__sched.allp[i].timer0when);

		if (w != 0 && (best == 0 || w < best))
			best = w;
	}
	return best;
}

bool wsr__timers_any(void)
{
	return wsr__timers_next() != 0;
}

void wsr__timers_free(struct wsr_p *pp)
{
	free(pp->timers);
	pp->timers = NULL;
	pp->ntimers = pp->timerscap = 0;
}

/* On g0, after the sleeping G's context is saved: arm its timer. */
static bool sleep_commit(struct wsr_g *gp, void *arg)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_p *pp = mp->p;
	int64_t pu;
	bool first;

	(void)arg;
	wsr__lock(&pp->timerlock);
	heap_push(pp, gp);
	first = pp->timers[0] == gp;
	wsr__unlock(&pp->timerlock);
	/* Wake the poller if it sleeps past this deadline (Go: wakeNetPoller). */
	if (first && load_seq(&wsr__lastpoll) == 0) {
		pu = load_seq(&wsr__polluntil);
		if (pu == 0 || pu > gp->when)
			wsr__netpoll_break();
	}
	return true;
}

void wsr_sleep_ns(int64_t ns)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp;
	int64_t now;

	if (mp == NULL || mp->curg == NULL)
		wsr__throw("wsr_sleep_ns: called outside a G");
	if (ns <= 0) {
		wsr_yield();
		return;
	}
	gp = mp->curg;
	now = wsr__nanotime();
	/* Saturate: a huge ns must not wrap into the past and fire at once. */
	gp->when = ns > INT64_MAX - now ? INT64_MAX : now + ns;
	gp->sleeping = 1;
	wsr__gopark(sleep_commit, NULL, WR_SLEEP);
	wsr__preempt_check();
}
