/*
 * g.c - G lifecycle: allocation in slabs, per-P and global free lists,
 * newproc, the entry trampoline target, wsr_go (Go: newproc, gfget, gfput).
 *
 * Invariants:
 *   - Gs are allocated in slabs of WSR_GSLAB and never freed before teardown,
 *     so a G pointer stays valid forever; the slab list is the "allg" set.
 *   - A G on a free list is G_DEAD or G_IDLE and holds no stack: a G that has
 *     not run yet costs only its struct (stacks are taken at the first run).
 *   - goids are unique, handed out in batches of 16 per P; the main G is 1.
 *   - sched.gfree is a stack of batches of exactly WSR_GFREE_MAX/2 dead Gs:
 *     each batch is a NULL-terminated list through schedlink, and batches
 *     are linked through their first G's param (unused while dead). A P
 *     moves a whole batch in or out in O(1) under gflock and never walks Gs
 *     under the lock: the Gs a spawning P takes were last written by another
 *     CPU (or long ago), and the walk missed on each of them while the
 *     freeing P waited for the lock.
 *   - wsr_go preempts its caller (to the global queue's tail) when its put
 *     spilled into a global queue over the backlog bound (runq.c), so a
 *     spawn loop never has more than about backlog_per_p x gomaxprocs Gs
 *     waiting; mp->backlog is the M's own, cleared before each newproc.
 * Concurrency: pp->gfree is the owner P's; sched.gfree and the slab list are
 *   under sched.gflock.
 * Tracepoints: g_create (runqput follows).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "proc.h"
#include "runq.h"

#define WSR_GSLAB 64

struct gslab {
	struct gslab *next;
	struct wsr_g g[WSR_GSLAB];
};

static struct gslab *slabs; /* under sched.gflock */

/* Calls fn(g) for every G ever allocated (teardown, deadlock report, dump).
 * Caller holds sched.gflock or runs single-threaded. */
void wsr__forallg(void (*fn)(struct wsr_g *gp, void *arg), void *arg)
{
	struct gslab *s;
	int i;

	for (s = slabs; s != NULL; s = s->next)
		for (i = 0; i < WSR_GSLAB; i++)
			fn(&s->g[i], arg);
}

/* Always inlined: newproc has two copies (trace.h), and out of line the fast
 * path would pay a call. */
static inline __attribute__((always_inline)) struct wsr_g *gfget(struct wsr_p *pp)
{
	struct wsr_g *gp = pp->gfree;

	if (gp == NULL) {
		struct gslab *s = NULL;
		int i;

		wsr__lock(&wsr__sched.gflock);
		gp = wsr__sched.gfree;
		if (gp != NULL) {
			wsr__sched.gfree = gp->param;
			wsr__sched.ngfree -= WSR_GFREE_MAX / 2;
		} else {
			/* Aligned: a G's hot fields are its first cache line. */
			s = aligned_alloc(_Alignof(struct gslab), sizeof(*s));
			if (s == NULL)
				wsr__throw("gfget: out of memory");
			memset(s, 0, sizeof(*s));
			s->next = slabs;
			slabs = s;
		}
		wsr__unlock(&wsr__sched.gflock);
		if (gp != NULL) {
			gp->param = NULL;
			pp->gfree = gp;
			pp->gfreecnt = WSR_GFREE_MAX / 2;
		} else {
			for (i = WSR_GSLAB - 1; i >= 0; i--) {
				s->g[i].timeridx = -1;
				s->g[i].schedlink = pp->gfree;
				pp->gfree = &s->g[i];
				pp->gfreecnt++;
			}
			gp = pp->gfree;
		}
	}
	pp->gfree = gp->schedlink;
	pp->gfreecnt--;
	gp->schedlink = NULL;
	return gp;
}

void wsr__gfput(struct wsr_p *pp, struct wsr_g *gp)
{
	struct wsr_g *batch, *last;
	int32_t i;

	WSR_ASSERT(gp->stack == NULL);
	gp->schedlink = pp->gfree;
	pp->gfree = gp;
	pp->gfreecnt++;
	if (pp->gfreecnt < WSR_GFREE_MAX)
		return;
	/* Move half to the global list, as one batch, so other Ps can reuse
	 * them; the Gs are this CPU's, so cut the batch before taking the lock. */
	batch = pp->gfree;
	last = batch;
	for (i = 1; i < WSR_GFREE_MAX / 2; i++)
		last = last->schedlink;
	pp->gfree = last->schedlink;
	pp->gfreecnt -= WSR_GFREE_MAX / 2;
	last->schedlink = NULL;
	wsr__lock(&wsr__sched.gflock);
	batch->param = wsr__sched.gfree;
	wsr__sched.gfree = batch;
	wsr__sched.ngfree += WSR_GFREE_MAX / 2;
	wsr__unlock(&wsr__sched.gflock);
}

void wsr__gfree_all(void)
{
	struct gslab *s, *next;

	if (wsr__ms_leaked())
		return;
	for (s = slabs; s != NULL; s = next) {
		next = s->next;
		free(s);
	}
	slabs = NULL;
	wsr__sched.gfree = NULL;
	wsr__sched.ngfree = 0;
}

WSR_TRACE_BODY struct wsr_g *newproc_body(struct wsr_m *mp, void (*fn)(void *), void *arg,
					  int64_t parent, bool traced)
{
	struct wsr_p *pp = mp->p;
	struct wsr_g *gp;

	WSR_ASSERT(pp != NULL);
	gp = gfget(pp);
	if (pp->goidcache == pp->goidcacheend) {
		pp->goidcache = xadd_relaxed(&wsr__sched.goidgen, 16) + 1;
		pp->goidcacheend = pp->goidcache + 16;
	}
	gp->goid = pp->goidcache++;
	gp->parent = parent;
	gp->fn = fn;
	gp->arg = arg;
	gp->m = NULL;
	gp->readysrc = 0;
	gp->waitreason = 0;
	gp->timeridx = -1;
	gp->param = NULL;
	store_relaxed(&gp->status, G_RUNNABLE);
	WSR_TRACE_IF(traced, g_create, &mp->stats, pp->id, mp->id, gp->goid, parent);
	wsr__runqput(mp, pp, gp, true);
	if (load_relaxed(&wsr__sched.mainstarted))
		wsr__wakep(mp);
	return gp;
}

WSR_TRACED_COPY struct wsr_g *newproc_traced(struct wsr_m *mp, void (*fn)(void *), void *arg,
					     int64_t parent)
{
	return newproc_body(mp, fn, arg, parent, true);
}

struct wsr_g *wsr__newproc(struct wsr_m *mp, void (*fn)(void *), void *arg, int64_t parent)
{
	/* Two copies (trace.h). */
	if (WSR_TRACE_ENABLED(g_create))
		return newproc_traced(mp, fn, arg, parent);
	return newproc_body(mp, fn, arg, parent, false);
}

void wsr__gentry(void *arg)
{
	struct wsr_g *gp = arg;

#if WSR_SAN_ASAN
	san_switch_end(NULL);
#endif
	gp->fn(gp->arg);
	wsr__goexit();
}

void wsr_go(void (*fn)(void *), void *arg)
{
	struct wsr_m *mp = wsr__getm();

	if (mp == NULL || mp->curg == NULL)
		wsr__throw("wsr_go: called outside a G");
	mp->backlog = false;
	wsr__newproc(mp, fn, arg, mp->curg->goid);
	if (__builtin_expect(mp->backlog, 0)) {
		/* The Gs already queued outnumber what the Ps can run soon: stop
		 * the spawner behind them (as a preemption), so a spawn loop's
		 * backlog, and the memory it holds, stays bounded. */
		wsr__gopreempt();
		return;
	}
	wsr__preempt_check();
}
