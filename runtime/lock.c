/*
 * lock.c - runtime mutex and one-shot futex note.
 *
 * Invariants:
 *   - owner is set right after the lock is taken and cleared right before it
 *     is released, so wsr__lock_held() is exact for the calling thread.
 *   - key is 2 whenever a thread sleeps (or is about to sleep) on it: a
 *     contender exchanges 2 in before FUTEX_WAIT(key, 2), so the holder's
 *     unlock sees 2 and wakes one; the woken thread exchanges 2 in again
 *     (it cannot know whether others sleep), which costs at most a spurious
 *     FUTEX_WAKE. No spinning: with more runnable threads than CPUs a spinner
 *     burns the CPU the holder needs (finding 6 of docs/performance.md).
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
#include "san.h"
#include "throw.h"

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

void wsr__lock_init(struct wsr_lock *l)
{
	store_relaxed(&l->key, 0);
	store_relaxed(&l->owner, 0);
#if WSR_SAN_TSAN
	__tsan_mutex_create(l, 0);
#endif
}

void wsr__lock_destroy(struct wsr_lock *l)
{
#if WSR_SAN_TSAN
	__tsan_mutex_destroy(l, 0);
#else
	(void)l;
#endif
}

static __attribute__((noinline)) void lock_slow(struct wsr_lock *l)
{
	/* exchange-acquire; pairs with the exchange-release in wsr__unlock. */
	while (xchg_acq(&l->key, 2) != 0)
		futex(&l->key, FUTEX_WAIT, 2, NULL);
}

void wsr__lock(struct wsr_lock *l)
{
	uint32_t zero = 0;

#if WSR_SAN_TSAN
	__tsan_mutex_pre_lock(l, 0);
#endif
	/* CAS-acquire; pairs with the exchange-release in wsr__unlock. */
	if (!cas_acq(&l->key, &zero, 1))
		lock_slow(l);
#if WSR_SAN_TSAN
	__tsan_mutex_post_lock(l, 0, 0);
#endif
	store_relaxed(&l->owner, (uintptr_t)pthread_self());
}

bool wsr__trylock(struct wsr_lock *l)
{
	uint32_t zero = 0;
	bool ok;

#if WSR_SAN_TSAN
	__tsan_mutex_pre_lock(l, __tsan_mutex_try_lock);
#endif
	/* CAS-acquire, as in wsr__lock; a held lock is left alone. */
	ok = cas_acq(&l->key, &zero, 1);
#if WSR_SAN_TSAN
	__tsan_mutex_post_lock(l, ok ? __tsan_mutex_try_lock
				     : __tsan_mutex_try_lock | __tsan_mutex_try_lock_failed, 0);
#endif
	if (ok)
		store_relaxed(&l->owner, (uintptr_t)pthread_self());
	return ok;
}

void wsr__unlock(struct wsr_lock *l)
{
	store_relaxed(&l->owner, 0);
#if WSR_SAN_TSAN
	__tsan_mutex_pre_unlock(l, 0);
#endif
	/* exchange-release; pairs with the acquire in wsr__lock and lock_slow. */
	if (xchg_rel(&l->key, 0) == 2)
		futex(&l->key, FUTEX_WAKE, 1, NULL);
#if WSR_SAN_TSAN
	__tsan_mutex_post_unlock(l, 0);
#endif
}

bool wsr__lock_held(struct wsr_lock *l)
{
	return load_relaxed(&l->owner) == (uintptr_t)pthread_self();
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
