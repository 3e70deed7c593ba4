/*
 * gohere.h - wsr_go without its preemption point, for the tests whose
 * workload must stay on the P it was spawned from (tests/lib/lockhold.c,
 * tests/unit/test-knobs.c's skewed workload).
 *
 * wsr_go ends in a preemption check (runtime/g.c): once sysmon has seen the
 * caller run for 10 ms of wall time it asks it to yield, and the caller goes
 * to the global queue and may go on on another P. On a loaded machine that
 * slice runs out while the thread merely waits for a CPU, so a spawn loop of
 * a few microseconds' work can move mid-way, with its first Gs on one P and
 * the rest on another: a test that reads its P once and then counts on it
 * (a leaf "reached another P only by a steal", "I hold my own P's deque
 * lock") is then wrong about where its Gs are.
 *
 * Invariants: the G is put on the caller's current P (runnext or the local
 *   queue, as wsr_go puts it) and an idle P is woken as wsr_go would; the
 *   caller does not switch, so its P is the same before and after. For
 *   fewer Gs than a local queue holds: a spill's backlog preemption (wsr_go's
 *   other stop) is not taken either.
 * Concurrency: called from a G, like wsr_go.
 */
#ifndef WSR_TESTS_LIB_GOHERE_H
#define WSR_TESTS_LIB_GOHERE_H

void wsrtest_go_here(void (*fn)(void *), void *arg);

#endif /* WSR_TESTS_LIB_GOHERE_H */
