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
 *   - A P's free Gs are a stack of pointers (pp->gfree[0..gfreecnt-1]).
 *     sched.gfree is a list of full batches of exactly WSR_GFREE_MAX/2
 *     pointers (struct wsr_gbatch); sched.gbspare holds the empty ones. A P
 *     moves a whole batch in or out under gflock, by copying pointers, and
 *     never loads a G to do it: the Gs a spawning P takes were last written
 *     by another CPU (or long ago), and a walk through them would miss on
 *     each. With pointers at hand, gfget prefetches (for writing) the G it
 *     will hand out GFREE_AHEAD spawns later, so newproc's stores to a G the
 *     other CPU freed do not wait for its lines.
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

#define GFREE_AHEAD 4

/* Always inlined: newproc has two copies (trace.h), and out of line the fast
 * path would pay a call. */
static inline __attribute__((always_inline)) struct wsr_g *gfget(struct wsr_p *pp)
{
	struct wsr_g *gp;

	if (pp->gfreecnt == 0) {
		struct wsr_gbatch *b;
		struct gslab *s = NULL;
		int i;

		wsr__lock(&wsr__sched.gflock);
		b = wsr__sched.gfree;
		if (b != NULL) {
			/* 16 lines of pointers, loaded in parallel: cheap under
			 * the lock, unlike a walk through the Gs themselves. */
			wsr__sched.gfree = b->next;
			wsr__sched.ngfree -= WSR_GFREE_MAX / 2;
			memcpy(pp->gfree, b->g, sizeof(b->g));
			b->next = wsr__sched.gbspare;
			wsr__sched.gbspare = b;
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
		if (b != NULL) {
			pp->gfreecnt = WSR_GFREE_MAX / 2;
		} else {
			for (i = WSR_GSLAB - 1; i >= 0; i--) {
				s->g[i].timeridx = -1;
				pp->gfree[pp->gfreecnt++] = &s->g[i];
			}
		}
	}
	gp = pp->gfree[--pp->gfreecnt];
	if (pp->gfreecnt >= GFREE_AHEAD)
		wsr__g_prefetch(pp->gfree[pp->gfreecnt - GFREE_AHEAD]);
	return gp;
}

void wsr__gfput(struct wsr_p *pp, struct wsr_g *gp)
{
	struct wsr_gbatch *b;

	WSR_ASSERT(gp->stack == NULL);
	pp->gfree[pp->gfreecnt++] = gp;
	if (pp->gfreecnt < WSR_GFREE_MAX)
		return;
	/* Move the newest half to the global list, as one batch, so other Ps
	 * can reuse them; fill the batch outside the lock. */
	wsr__lock(&wsr__sched.gflock);
	b = wsr__sched.gbspare;
	if (b != NULL)
		wsr__sched.gbspare = b->next;
	wsr__unlock(&wsr__sched.gflock);
	if (b == NULL) {
		b = malloc(sizeof(*b));
		if (b == NULL)
			wsr__throw("gfput: out of memory");
	}
	pp->gfreecnt -= WSR_GFREE_MAX / 2;
	memcpy(b->g, &pp->gfree[pp->gfreecnt], sizeof(b->g));
	wsr__lock(&wsr__sched.gflock);
	b->next = wsr__sched.gfree;
	wsr__sched.gfree = b;
	wsr__sched.ngfree += WSR_GFREE_MAX / 2;
	wsr__unlock(&wsr__sched.gflock);
}

static void free_batches(struct wsr_gbatch *b)
{
	struct wsr_gbatch *next;

	for (; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

void wsr__gfree_all(void)
{
	struct gslab *s, *next;

	if (wsr__ms_leaked())
		return;
	for (s = slabs; s != NULL; s = next) {
		next = s->next;
#if WSR_SAN_TSAN
		/* The fibers of Gs that never exited (abandoned at the end). */
		for (int i = 0; i < WSR_GSLAB; i++)
			if (s->g[i].tsan_fiber != NULL)
				san_tsan_destroy(s->g[i].tsan_fiber);
#endif
		free(s);
	}
	slabs = NULL;
	free_batches(wsr__sched.gfree);
	free_batches(wsr__sched.gbspare);
	wsr__sched.gfree = NULL;
	wsr__sched.gbspare = NULL;
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

/* The G's first frame, which never returns: no TSan frame (san.h). */
WSR_NO_FUNC_ENTRY void wsr__gentry(void *arg)
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
	/* Go: "go of nil func value", at the go statement, not in the new G. */
	if (fn == NULL)
		wsr__throw("wsr_go: go of nil func value");
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
