/*
 * lockhold.c - see lockhold.h.
 *
 * Invariants and concurrency: see lockhold.h. The Gs only count; the wait
 *   is bounded by the caller's watchdog, never by a clock.
 */
#include "config.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include <wsr.h>

#include "lockhold.h"
#include "proc.h"

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

void wsrtest_lockhold(int n)
{
	struct wsr_p *pp = wsr__getm()->p;
	uint64_t sum[WSR_ST_COUNT];

	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, n);
	for (long i = 0; i < n; i++)
		wsr_go(leaf, (void *)(uintptr_t)(i + 1));
	/* No switch until the unlock: pp stays this G's P. */
	wsr__lock(&pp->dqlock);
	for (;;) {
		if (wsr__sched.policy == WSR_POLICY_LOCKED) {
			if (atomic_load(&pp->dqlock.key) == 2)
				break;
		} else {
			wsr__lock(&wsr__sched.lock);
			wsr__stats_sum(sum);
			wsr__unlock(&wsr__sched.lock);
			if (sum[WSR_ST_steal_lock_wait] > 0)
				break;
		}
		sched_yield();
	}
	wsr__unlock(&pp->dqlock);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
}
