/*
 * mutex.c - wsr_mutex: a mutex whose waiters park as Gs, never threads.
 *
 * Invariants:
 *   - locked is 1 while some G owns the mutex. Unlock with waiters hands the
 *     mutex directly to the oldest waiter (locked stays 1): FIFO, no
 *     starvation (Go's starvation mode, always on).
 *   - Unlocking an unlocked mutex throws, as in Go.
 * Concurrency: the uncontended lock is one CAS on locked; the waiter queue
 *   is under mu->lock, and both the slow lock path and unlock decide under
 *   that lock, so a release is never missed by a parking waiter.
 */
#include "config.h"

#include <stdlib.h>

#include <wsr.h>

#include "proc.h"

struct wsr_mutex {
	_Atomic int locked;
	struct wsr_lock lock;
	struct wsr_g *head, *tail; /* waiters, under lock */
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
	if (mu->head != NULL)
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
	int zero = 0;

	if (gp == NULL)
		wsr__throw("mutex_lock: called outside a G");
	if (cas_acq_rel(&mu->locked, &zero, 1)) {
		wsr__preempt_check();
		return;
	}
	wsr__lock(&mu->lock);
	zero = 0;
	if (cas_acq_rel(&mu->locked, &zero, 1)) {
		wsr__unlock(&mu->lock);
		return;
	}
	gp->schedlink = NULL;
	if (mu->tail != NULL)
		mu->tail->schedlink = gp;
	else
		mu->head = gp;
	mu->tail = gp;
	wsr__gopark(lock_commit, mu, WR_MUTEX);
	/* Woken by unlock, which handed us the mutex. */
}

void wsr_mutex_unlock(wsr_mutex *mu)
{
	struct wsr_g *gp;

	wsr__lock(&mu->lock);
	if (load_relaxed(&mu->locked) == 0) {
		wsr__unlock(&mu->lock);
		wsr__throw("mutex_unlock: unlock of unlocked mutex");
	}
	gp = mu->head;
	if (gp != NULL) {
		mu->head = gp->schedlink;
		if (mu->head == NULL)
			mu->tail = NULL;
		gp->schedlink = NULL;
	} else {
		/* store-release: pairs with the lockers' CAS (acq_rel). */
		store_rel(&mu->locked, 0);
	}
	wsr__unlock(&mu->lock);
	if (gp != NULL)
		wsr__goready(gp, true);
	if (wsr__getg() != NULL)
		wsr__preempt_check();
}
