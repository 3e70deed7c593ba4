/*
 * lock.h - the runtime mutex and the one-shot futex note (Go: lock_futex.go).
 *
 * Invariants:
 *   - A wsr_lock is held only on one thread and never across a stack switch
 *     except through an mcall whose g0 action unlocks it on the same thread.
 *   - A note is cleared by its sleeper, woken at most once per clear.
 * Concurrency: wsr_lock wraps a pthread mutex (ThreadSanitizer understands
 *   it); a note's key is an atomic word: wakeup is an exchange (seq_cst),
 *   sleep a load-acquire plus FUTEX_WAIT.
 */
#ifndef WSR_RUNTIME_LOCK_H
#define WSR_RUNTIME_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct wsr_lock {
	pthread_mutex_t mu;
	_Atomic(uintptr_t) owner; /* pthread_self() of the holder, 0 if free (for asserts) */
};

struct wsr_note {
	_Atomic uint32_t key;
};

void wsr__lock_init(struct wsr_lock *l);
void wsr__lock(struct wsr_lock *l);
void wsr__unlock(struct wsr_lock *l);
void wsr__lock_destroy(struct wsr_lock *l);
bool wsr__lock_held(struct wsr_lock *l);

void wsr__noteclear(struct wsr_note *n);
void wsr__notewakeup(struct wsr_note *n);
void wsr__notesleep(struct wsr_note *n);
/* Sleeps at most ns; returns true if woken, false on timeout. */
bool wsr__notetsleep(struct wsr_note *n, int64_t ns);

#define wsr__assert_lock_held(l)                                                                   \
	WSR_ASSERT(wsr__lock_held(l))

#endif /* WSR_RUNTIME_LOCK_H */
