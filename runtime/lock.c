/*
 * lock.c - runtime mutex and one-shot futex note.
 *
 * Invariants:
 *   - owner is set right after pthread_mutex_lock and cleared right before
 *     unlock, so wsr__lock_held() is exact for the calling thread.
 *   - notewakeup on a note already woken is a runtime bug: it throws.
 * Concurrency: see lock.h. The note protocol: the waker exchanges key 0 -> 1
 *   (seq_cst) then FUTEX_WAKEs; the sleeper loops on load-acquire(key) == 0
 *   with FUTEX_WAIT(key, 0), so a wakeup before the sleep is never lost.
 */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "lock.h"
#include "throw.h"

void wsr__lock_init(struct wsr_lock *l)
{
	pthread_mutex_init(&l->mu, NULL);
	store_relaxed(&l->owner, 0);
}

void wsr__lock_destroy(struct wsr_lock *l)
{
	pthread_mutex_destroy(&l->mu);
}

void wsr__lock(struct wsr_lock *l)
{
	int rc = pthread_mutex_lock(&l->mu);

	if (rc != 0)
		wsr__throw("lock: pthread_mutex_lock failed");
	store_relaxed(&l->owner, (uintptr_t)pthread_self());
}

void wsr__unlock(struct wsr_lock *l)
{
	store_relaxed(&l->owner, 0);
	pthread_mutex_unlock(&l->mu);
}

bool wsr__lock_held(struct wsr_lock *l)
{
	return load_relaxed(&l->owner) == (uintptr_t)pthread_self();
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

void wsr__noteclear(struct wsr_note *n)
{
	store_seq(&n->key, 0);
}

void wsr__notewakeup(struct wsr_note *n)
{
	/* seq_cst exchange; pairs with the load-acquire in notesleep. */
	uint32_t old = xchg_seq(&n->key, 1);

	if (old != 0)
		wsr__throw("notewakeup: double wakeup");
	futex(&n->key, FUTEX_WAKE, 1, NULL);
}

void wsr__notesleep(struct wsr_note *n)
{
	/* load-acquire; pairs with the exchange in notewakeup. */
	while (load_acq(&n->key) == 0)
		futex(&n->key, FUTEX_WAIT, 0, NULL);
}

bool wsr__notetsleep(struct wsr_note *n, int64_t ns)
{
	struct timespec now, ts;
	int64_t deadline;

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + ns;
	while (load_acq(&n->key) == 0) {
		int64_t left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = deadline - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
		if (left <= 0)
			return false;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		futex(&n->key, FUTEX_WAIT, 0, &ts);
	}
	return true;
}
