/*
 * waitgroup.c - wsr_waitgroup: Go's sync.WaitGroup; waiters park as Gs.
 *
 * Invariants:
 *   - counter >= 0 at all times (a negative counter throws, as in Go).
 *   - When counter drops to 0, every G parked in wait is readied exactly once.
 * Concurrency: counter is a seq_cst atomic (add/done are lock-free unless
 *   they release waiters); the waiter list is under wg->lock, and a waiter
 *   re-checks the counter under that lock before parking, so a concurrent
 *   drop to 0 either is seen or finds the waiter on the list.
 */
#include "config.h"

#include <stdlib.h>

#include <wsr.h>

#include "proc.h"

struct wsr_waitgroup {
	_Atomic int64_t counter;
	struct wsr_lock lock;
	struct wsr_g *waiters; /* under lock, linked by schedlink */
};

wsr_waitgroup *wsr_waitgroup_make(void)
{
	wsr_waitgroup *wg = calloc(1, sizeof(*wg));

	if (wg == NULL)
		return NULL;
	wsr__lock_init(&wg->lock);
	return wg;
}

void wsr_waitgroup_free(wsr_waitgroup *wg)
{
	if (wg == NULL)
		return;
	if (wg->waiters != NULL)
		wsr__throw("waitgroup_free: Gs still wait on it");
	wsr__lock_destroy(&wg->lock);
	free(wg);
}

void wsr_waitgroup_add(wsr_waitgroup *wg, int64_t delta)
{
	int64_t v = xadd_seq(&wg->counter, delta) + delta;
	struct wsr_g *list, *gp, *next;

	if (v < 0)
		wsr__throw("waitgroup_add: negative counter");
	if (v == 0 && delta != 0) {
		wsr__lock(&wg->lock);
		list = wg->waiters;
		wg->waiters = NULL;
		wsr__unlock(&wg->lock);
		for (gp = list; gp != NULL; gp = next) {
			next = gp->schedlink;
			gp->schedlink = NULL;
			wsr__goready(gp, true);
		}
	}
	if (wsr__getg() != NULL)
		wsr__preempt_check();
}

void wsr_waitgroup_done(wsr_waitgroup *wg)
{
	wsr_waitgroup_add(wg, -1);
}

static bool wait_commit(struct wsr_g *gp, void *arg)
{
	wsr_waitgroup *wg = arg;

	(void)gp;
	wsr__unlock(&wg->lock);
	return true;
}

void wsr_waitgroup_wait(wsr_waitgroup *wg)
{
	struct wsr_g *gp = wsr__getg();

	if (gp == NULL)
		wsr__throw("waitgroup_wait: called outside a G");
	if (load_seq(&wg->counter) == 0) {
		wsr__preempt_check();
		return;
	}
	wsr__lock(&wg->lock);
	if (load_seq(&wg->counter) == 0) {
		wsr__unlock(&wg->lock);
		return;
	}
	gp->schedlink = wg->waiters;
	wg->waiters = gp;
	wsr__gopark(wait_commit, wg, WR_WAITGROUP);
	wsr__preempt_check();
}
