/*
 * mutex.c - wsr_mutex: a mutex whose waiters park as Gs, never threads.
 *
 * Design: a three-state word, as in Drepper's futex mutex: 0 unlocked,
 * 1 locked with no waiter, 2 locked with waiters queued. Lock is one CAS
 * 0 -> 1 when uncontended, unlock one CAS 1 -> 0; only state 2 takes
 * mu->lock. Unlock in state 2 hands the mutex directly to the oldest waiter
 * (the word stays locked: 2, or 1 if that was the last waiter): FIFO, no
 * starvation (Go's starvation mode, always on), and no barging.
 *
 * Rejected: "locked flag + waiter queue, unlock always takes mu->lock and
 * clears the flag under it" (the first version). A G that took the mutex
 * through the fast CAS right after the clear could unlock and free it while
 * the first unlocker was still inside wsr__unlock(&mu->lock): a use after
 * free in a legitimate pattern (the last user of an object frees it). Here
 * an unlocker touches the mutex only before the point where another G can
 * own it.
 *
 * Invariants:
 *   - state == 2 iff the waiter queue is non-empty, except between a
 *     locker's CAS 1 -> 2 and its enqueue, both under mu->lock.
 *   - The fast-path CASes (0 -> 1, 1 -> 0) only happen while the queue is
 *     empty; every change to or from 2 is made under mu->lock.
 *   - Unlocking an unlocked mutex throws, as in Go.
 * Concurrency: state is an atomic word (acq_rel CAS: lock acquires, unlock
 *   releases; a hand-off is published by mu->lock and goready); the queue is
 *   under mu->lock, which the parking G releases only after its context is
 *   saved (gopark's commit).
 */
#include "config.h"

#include <stdlib.h>

#include <wsr.h>

#include "proc.h"

struct wsr_mutex {
	_Atomic int state; /* 0 unlocked, 1 locked, 2 locked with waiters */
	struct wsr_lock lock;
	struct wsr_g *head, *tail; /* waiters, FIFO via schedlink; under lock */
};

wsr_mutex *wsr_mutex_make(void)
{
	wsr_mutex *mu = calloc(1, sizeof(*mu));

	if (mu == NULL)
		return NULL;
	wsr__lock_init(&mu->lock);
	return mu;
}

void wsr_mutex_free(wsr_mutex *mu)
{
	if (mu == NULL)
		return;
	if (mu->head != NULL || load_relaxed(&mu->state) == 2)
		wsr__throw("mutex_free: Gs still wait on it");
	wsr__lock_destroy(&mu->lock);
	free(mu);
}

static bool lock_commit(struct wsr_g *gp, void *arg)
{
	wsr_mutex *mu = arg;

	(void)gp;
	wsr__unlock(&mu->lock);
	return true;
}

void wsr_mutex_lock(wsr_mutex *mu)
{
	struct wsr_g *gp = wsr__getg();
	int s = 0;

	if (gp == NULL)
		wsr__throw("mutex_lock: called outside a G");
	if (mu == NULL)
		wsr__throw("mutex_lock: nil mutex");
	/* acq_rel: pairs with the release CAS in unlock. */
	if (cas_acq_rel(&mu->state, &s, 1)) {
		wsr__preempt_check();
		return;
	}
	wsr__lock(&mu->lock);
	for (;;) {
		s = load_acq(&mu->state);
		if (s == 0) {
			if (cas_acq_rel(&mu->state, &s, 1)) {
				wsr__unlock(&mu->lock);
				wsr__preempt_check();
				return;
			}
		} else if (s == 1) {
			if (cas_acq_rel(&mu->state, &s, 2))
				break;
		} else {
			break;
		}
	}
	gp->schedlink = NULL;
	if (mu->tail != NULL)
		mu->tail->schedlink = gp;
	else
		mu->head = gp;
	mu->tail = gp;
	wsr__gopark(lock_commit, mu, WR_MUTEX);
	/* Woken by unlock, which handed us the mutex. */
	wsr__preempt_check();
}

void wsr_mutex_unlock(wsr_mutex *mu)
{
	struct wsr_g *gp;
	int s = 1;

	if (mu == NULL)
		wsr__throw("mutex_unlock: nil mutex");
	/* acq_rel: pairs with the lockers' CAS. */
	if (cas_acq_rel(&mu->state, &s, 0)) {
		if (wsr__getg() != NULL)
			wsr__preempt_check();
		return;
	}
	if (s == 0)
		wsr__throw("mutex_unlock: unlock of unlocked mutex");
	wsr__lock(&mu->lock);
	gp = mu->head;
	if (gp == NULL)
		wsr__throw("mutex_unlock: state 2 with no waiter");
	mu->head = gp->schedlink;
	if (mu->head == NULL) {
		mu->tail = NULL;
		/* The new owner has no one behind it: back to plain locked. */
		store_rel(&mu->state, 1);
	}
	gp->schedlink = NULL;
	wsr__unlock(&mu->lock);
	/* From here on the mutex belongs to gp, which may free it. */
	wsr__goready(gp, true);
	if (wsr__getg() != NULL)
		wsr__preempt_check();
}
