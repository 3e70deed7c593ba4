/*
 * lockhold.c - see lockhold.h.
 *
 * Invariants and concurrency: see lockhold.h. The Gs only count; the wait
 *   is bounded by the caller's watchdog, never by a clock.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <wsr.h>

#include "gohere.h"
#include "lockhold.h"
#include "proc.h"
#include "runq.h"
#include "throw.h"

static wsr_waitgroup *wg;
static _Atomic uint64_t sink; /* written by many Gs */

static void leaf(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1;
	atomic_store_explicit(&sink, x, memory_order_relaxed);
	wsr_waitgroup_done(wg);
}

/* Steal_lock_wait events so far, over every M (under sched.lock, which
 * the allm walk needs). */
static uint64_t lock_waits(void)
{
	uint64_t sum[WSR_ST_COUNT];

	wsr__lock(&wsr__sched.lock);
	wsr__stats_sum(sum);
	wsr__unlock(&wsr__sched.lock);
	return sum[WSR_ST_steal_lock_wait];
}

/* trylock: a thread, not the holder, watches the counters, and says when a
 * thief moved on. The holder must not take sched.lock under its dqlock:
 * the runtime takes a P's dqlock under sched.lock (a batch from the global
 * queue pushed on the taker's own deque), and TSan reports the two orders
 * as a lock-order inversion (no deadlock: only the P's own M does either). */
static _Atomic int thief_met;

static void *watch_lock_waits(void *arg)
{
	uint64_t before = *(const uint64_t *)arg;

	while (lock_waits() <= before)
		sched_yield();
	atomic_store(&thief_met, 1);
	return NULL;
}

void wsrtest_lockhold(int n)
{
	bool locked = wsr__sched.policy == WSR_POLICY_LOCKED;
	uint64_t before = lock_waits();
	struct wsr_p *pp;
	pthread_t watcher;

	atomic_store(&thief_met, 0);
	if (!locked && pthread_create(&watcher, NULL, watch_lock_waits, &before) != 0)
		wsr__throw("wsrtest_lockhold: pthread_create failed");
	wg = wsr_waitgroup_make();
	for (;;) {
		/* wsr_waitgroup_add is a preemption point; from its return to
		 * the unlock there is none (wsrtest_go_here has none): pp stays
		 * this G's P, and only this G pushes on its deque. */
		wsr_waitgroup_add(wg, n);
		pp = wsr__getm()->p;
		for (long i = 0; i < n; i++)
			wsrtest_go_here(leaf, (void *)(uintptr_t)(i + 1));
		wsr__lock(&pp->dqlock);
		/* Under the lock the deque holds still. A thief comes only to
		 * a deque with Gs in it: if thieves took them all before the
		 * lock (this thread waited for a CPU meanwhile), make more.
		 * Key 2 means a thread sleeps on the lock only if it became 2
		 * while this G held it at 1: taken on the slow path (a thief
		 * held it for a steal), this G's own exchange left it at 2. */
		if (atomic_load(&pp->dqlock.key) == 1 && !wsr__runqempty(pp))
			break;
		wsr__unlock(&pp->dqlock);
	}
	while (locked ? atomic_load(&pp->dqlock.key) != 2 : !atomic_load(&thief_met))
		sched_yield();
	wsr__unlock(&pp->dqlock);
	if (!locked)
		pthread_join(watcher, NULL);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
}
