/*
 * waitgroup.c - wsr_waitgroup: Go's sync.WaitGroup; waiters park as Gs.
 *
 * Design (Go's): one 64-bit state word holds the counter (high 32 bits,
 * signed) and the number of waiters (low 32 bits). Add changes the counter
 * with one atomic add; only the add that brings it to zero while waiters
 * exist touches anything else: it resets the state to 0 and releases that
 * many waiters through a small semaphore under wg->lock.
 *
 * Why not "counter plus a waiter list under a lock, and every add that hits
 * zero takes the lock" (the first version): the usual pattern is
 * done-in-workers, wait-then-free in the owner. When the last done drops the
 * counter to 0 and a waiter arrives just then, the waiter sees 0 on its fast
 * path, returns and frees the waitgroup while the done is still on its way to
 * wg->lock: a use after free (Go never has that problem, its semaphore lives
 * in a global table and memory is collected). Here a done that finds no
 * waiter never touches the waitgroup again, and a done that does find
 * waiters is done with wg->lock before any of them can return.
 *
 * Invariants:
 *   - counter >= 0 at all times (a negative counter throws, as in Go).
 *   - waiters counts Gs that incremented it and have not yet taken a
 *     semaphore unit; when counter drops to 0 every one of them is released
 *     exactly once (sema += waiters, and each takes one unit).
 *   - A waiter is on wg->list only while parked (or about to park, with
 *     wg->lock held until its context is saved); sema > 0 implies the list
 *     is empty.
 * Concurrency: state is a seq_cst atomic; sema and the list are under
 *   wg->lock; a releaser readies Gs only after unlocking.
 */
#include "config.h"

#include <stdlib.h>

#include <wsr.h>

#include "proc.h"

struct wsr_waitgroup {
	_Atomic uint64_t state; /* counter << 32 | waiters */
	struct wsr_lock lock;
	uint32_t sema;             /* released units not yet taken; under lock */
	struct wsr_g *head, *tail; /* parked waiters, FIFO via schedlink; under lock */
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
	if (wg->head != NULL || (uint32_t)load_seq(&wg->state) != 0)
		wsr__throw("waitgroup_free: Gs still wait on it");
	wsr__lock_destroy(&wg->lock);
	free(wg);
}

void wsr_waitgroup_add(wsr_waitgroup *wg, int64_t delta)
{
	uint64_t st;
	int64_t v;
	uint32_t w;
	struct wsr_g *list, *gp, *next;

	if (wg == NULL)
		wsr__throw("waitgroup_add: nil waitgroup");
	if (delta > INT32_MAX || delta < INT32_MIN)
		wsr__throw("waitgroup_add: delta out of range");
	/* seq_cst: pairs with the waiters' CAS in wait. */
	st = xadd_seq(&wg->state, (uint64_t)delta << 32) + ((uint64_t)delta << 32);
	v = (int32_t)(st >> 32);
	w = (uint32_t)st;
	if (v < 0)
		wsr__throw("waitgroup_add: negative counter");
	if (w != 0 && delta > 0 && v == delta)
		wsr__throw("waitgroup_add: add called concurrently with wait");
	if (v > 0 || w == 0) {
		if (wsr__getg() != NULL)
			wsr__preempt_check();
		return;
	}
	/* Counter hit 0 with waiters: nobody may touch state until they are
	 * released (Go's "WaitGroup is reused before previous Wait has returned"). */
	if (load_seq(&wg->state) != st)
		wsr__throw("waitgroup_add: misuse, add concurrent with the release of waiters");
	store_seq(&wg->state, 0);
	wsr__lock(&wg->lock);
	wg->sema += w;
	list = NULL;
	while (wg->sema > 0 && wg->head != NULL) {
		gp = wg->head;
		wg->head = gp->schedlink;
		if (wg->head == NULL)
			wg->tail = NULL;
		gp->schedlink = list;
		list = gp;
		wg->sema--;
	}
	wsr__unlock(&wg->lock);
	/* From here on wg may already be freed by a released waiter. */
	for (gp = list; gp != NULL; gp = next) {
		next = gp->schedlink;
		gp->schedlink = NULL;
		wsr__goready(gp, true);
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
	uint64_t st;

	if (gp == NULL)
		wsr__throw("waitgroup_wait: called outside a G");
	if (wg == NULL)
		wsr__throw("waitgroup_wait: nil waitgroup");
	st = load_seq(&wg->state);
	for (;;) {
		if ((st >> 32) == 0) {
			wsr__preempt_check();
			return;
		}
		/* seq_cst: pairs with the add that drops the counter to 0. */
		if (cas_seq(&wg->state, &st, st + 1))
			break;
	}
	wsr__lock(&wg->lock);
	if (wg->sema > 0) {
		/* Released before we could park. */
		wg->sema--;
		wsr__unlock(&wg->lock);
		wsr__preempt_check();
		return;
	}
	gp->schedlink = NULL;
	if (wg->tail != NULL)
		wg->tail->schedlink = gp;
	else
		wg->head = gp;
	wg->tail = gp;
	wsr__gopark(wait_commit, wg, WR_WAITGROUP);
	wsr__preempt_check();
}
