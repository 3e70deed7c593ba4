/*
 * lockhold.h - makes a thief meet a held deque lock, for certain, under
 * WSRDEBUG=policy=locked or trylock (runtime/runq.c): the test programs of
 * the steal_lock_wait event (tests/unit/test-knobs.c, tests/fidelity/fid-lock.c).
 *
 * Invariants: called from a G at 2 or more Ps under a locked policy; returns
 *   after every G it made ran, having seen at least one steal_lock_wait
 *   (trylock: counted during the call; locked: a thief that slept on the
 *   lock counts it once it has the lock, before wsr_main returns).
 * Concurrency: the calling G spawns n Gs on the P it runs on after its
 *   last preemption point, without another (gohere.h: a wsr_go could move
 *   it to another P mid-loop, and it would then hold a lock its old P's own
 *   M waits for in a pop, with no thief left), takes that P's dqlock and,
 *   if the deque is empty then (thieves took every G while this thread
 *   waited for a CPU) or the lock was contended as it took it, lets it go
 *   and spawns n more. It holds the lock without a yield point until a
 *   thief waits on it (locked: the futex word went from 1 to 2) or moved on
 *   from it (trylock: a watcher thread, which takes sched.lock to sum the
 *   counters so that the holder need not under its dqlock, saw a
 *   steal_lock_wait counted), then releases it.
 */
#ifndef WSR_TESTS_LOCKHOLD_H
#define WSR_TESTS_LOCKHOLD_H

/* Spawns n CPU-bound Gs on the caller's P (more, n at a time, while
 * thieves take them all first), holds its deque lock until a thief met it,
 * then waits for the Gs. */
void wsrtest_lockhold(int n);

#endif
