/*
 * stress-stacks.c - G stacks are reused, not mapped again: bursts of live Gs
 * larger than the stack pool, released and repeated, carve no new stacks
 * once the first burst has set the high-water mark (the stacks the full
 * pool could not take are reused from the spares list, stack.c).
 *
 * Invariants: the pool is lowered to POOL Gs (wsr__stackpool_max; a tenth of
 *   that in the sanitizer builds, where each live G also holds a TSan fiber)
 *   so that four times as many live Gs overflow it; every G of a burst holds
 *   its stack at once (the main G waits until all have started).
 * Concurrency: holders count themselves in `started` (atomic) and block on
 *   the gate; the main G alone reads the carved count between bursts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <wsr.h>

#include "proc.h"
#include "watchdog.h"
#include "wsrtest.h"

#define POOL   1024
#define BURSTS 5

static _Atomic long started;
static wsr_waitgroup *gate, *done;
static long per_burst;
static size_t carved[BURSTS];

static void holder(void *arg)
{
	(void)arg;
	started++;
	wsr_waitgroup_wait(gate);
	wsr_waitgroup_done(done);
}

static int bursts_main(void *arg)
{
	(void)arg;
	for (int b = 0; b < BURSTS; b++) {
		started = 0;
		gate = wsr_waitgroup_make();
		done = wsr_waitgroup_make();
		wsr_waitgroup_add(gate, 1);
		wsr_waitgroup_add(done, per_burst);
		for (long i = 0; i < per_burst; i++)
			wsr_go(holder, NULL);
		while (started < per_burst)
			wsr_yield();
		wsr_waitgroup_done(gate);
		wsr_waitgroup_wait(done);
		wsr_waitgroup_free(gate);
		wsr_waitgroup_free(done);
		carved[b] = wsr__stacks_carved();
	}
	return 0;
}

static void run(int procs)
{
	char buf[16], name[64];
	size_t pool = POOL / (size_t)wsrtest_sanitizer_divisor();

	per_burst = 4 * (long)pool;
	snprintf(buf, sizeof(buf), "%d", procs);
	setenv("WSRMAXPROCS", buf, 1);
	snprintf(name, sizeof(name), "%d bursts of %ld Gs at %d Ps", BURSTS, per_burst, procs);
	wsrtest_watchdog(60, name);
	wsr__stackpool_max = pool;
	wsr_set_stack_size(16384);
	ASSERT_EQ(wsr_main(bursts_main, NULL), 0);
	printf("# %s: stacks carved after each burst:", name);
	for (int b = 0; b < BURSTS; b++)
		printf(" %zu", carved[b]);
	printf("\n");
	/* The first burst carves per_burst stacks (plus the main G's, rounded
	 * up to a chunk). Later bursts may carve a few more while another P's
	 * cache holds free stacks (at most a cache per P), but never again the
	 * ~3 * pool that the full pool drops each time. */
	ASSERT_GE(carved[0], (size_t)per_burst);
	ASSERT_LE(carved[BURSTS - 1], carved[0] + (size_t)(procs * WSR_STACKCACHE_MAX) + 64);
}

WSR_TEST_TIMEOUT(bursts_p1, 60)
{
	run(1);
}

WSR_TEST_TIMEOUT(bursts_p2, 60)
{
	run(2);
}
