/*
 * lock.h - the runtime mutex and the one-shot futex note (Go: lock_futex.go).
 *
 * Invariants:
 *   - A wsr_lock is held only on one thread and never across a stack switch
 *     except through an mcall whose g0 action unlocks it on the same thread.
 *   - A note is cleared by its sleeper, woken at most once per clear.
 * Concurrency: wsr_lock is a futex word (Go's lock_futex.go without the
 *   spin): 0 free, 1 held, 2 held and someone may sleep on it. Lock is a
 *   CAS-acquire 0 -> 1, else exchange to 2 and FUTEX_WAIT until the exchange
 *   returns 0; unlock exchanges 0 (release) and FUTEX_WAKEs one sleeper if
 *   the word was 2. ThreadSanitizer is told through __tsan_mutex_*. A note's
 *   key is an atomic word: wakeup is an exchange (seq_cst), sleep a
 *   load-acquire plus FUTEX_WAIT.
 */
#ifndef WSR_RUNTIME_LOCK_H
#define WSR_RUNTIME_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct wsr_lock {
	_Atomic uint32_t key;	  /* 0 free, 1 held, 2 held with possible sleepers */
	_Atomic(uintptr_t) owner; /* pthread_self() of the holder, 0 if free (for asserts) */
};

/* For a lock with static storage (wsr__lock_init is then optional). */
#define WSR_LOCK_INITIALIZER {0, 0}

struct wsr_note {
	_Atomic uint32_t key;
};

void wsr__lock_init(struct wsr_lock *l);
void wsr__lock(struct wsr_lock *l);
/* Takes l only if it is free, without waiting; true if taken. */
bool wsr__trylock(struct wsr_lock *l);
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
