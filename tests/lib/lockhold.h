/*
 * lockhold.h - makes a thief meet a held deque lock, for certain, under
 * WSRDEBUG=policy=locked or trylock (runtime/runq.c): the test programs of
 * the steal_lock_wait event (tests/unit/test-knobs.c, tests/fidelity/fid-lock.c).
 *
 * Invariants: called from a G at 2 or more Ps under a locked policy; returns
 *   after every G it made ran, having seen at least one steal_lock_wait.
 * Concurrency: the calling G holds its own P's dqlock without a yield point
 *   until a thief waits on it (locked: the futex word is 2) or moved on from
 *   it (trylock: a steal_lock_wait is counted), then releases it.
 */
#ifndef WSR_TESTS_LOCKHOLD_H
#define WSR_TESTS_LOCKHOLD_H

/* Spawns n CPU-bound Gs on the caller's P, holds its deque lock until a
 * thief met it, then waits for the Gs. */
void wsrtest_lockhold(int n);

#endif
