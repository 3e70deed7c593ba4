/*
 * fid-end.c - the fidelity harness's abnormal ends (tests/fidelity/README.md):
 * a program that deadlocks, aborts or dereferences NULL after a burst of
 * ordinary scheduling, so the trace up to the end is large and varied.
 *
 * Usage: fid-end deadlock|abort|segv|exit
 *   deadlock: the main G and WAITERS Gs wait on a channel nobody sends on; the
 *             runtime reports the deadlock and exits 2.
 *   abort:    a G calls abort() while the main G and WAITERS Gs are parked.
 *   segv:     the same G writes through a NULL pointer instead (the runtime's
 *             fault handler passes a fault outside a stack guard on: SIGSEGV).
 *   exit:     the same G calls exit(3) (the runtime's atexit path, where
 *             WSRDEBUG=stats=1 must still print its line).
 * Before that: the lossy run's burst (burst.h, WSR_FIDELITY_BURST), then the
 * main G spawns BURST Gs that each yield and sleep 1 ms
 * (spills, steals, timers, parks), then waits for them.
 * Invariants: never returns from wsr_main; exit 1 on a bad argument.
 * Concurrency: the Gs share only the waitgroup and the channel.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "burst.h"

#define BURST 600
#define WAITERS 5

static wsr_waitgroup *wg;
static wsr_chan *never;

static void burst_g(void *arg)
{
	(void)arg;
	wsr_yield();
	wsr_sleep_ns(1000000);
	wsr_waitgroup_done(wg);
}

static void waiter(void *arg)
{
	int64_t v;

	(void)arg;
	wsr_chan_recv(never, &v);
}

static void crasher(void *arg)
{
	volatile int *volatile nowhere = NULL;

	wsr_sleep_ns(2000000);
	if (strcmp(arg, "abort") == 0)
		abort();
	if (strcmp(arg, "exit") == 0)
		exit(3);
	*nowhere = 1;
}

static int main_g(void *arg)
{
	const char *mode = arg;
	int64_t v;
	int i;

	fid_burst();
	wg = wsr_waitgroup_make();
	never = wsr_chan_make(sizeof(int64_t), 0);
	wsr_waitgroup_add(wg, BURST);
	for (i = 0; i < BURST; i++)
		wsr_go(burst_g, NULL);
	wsr_waitgroup_wait(wg);
	for (i = 0; i < WAITERS; i++)
		wsr_go(waiter, NULL);
	if (strcmp(mode, "deadlock") != 0)
		wsr_go(crasher, arg);
	wsr_chan_recv(never, &v);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "deadlock") != 0 && strcmp(argv[1], "abort") != 0 &&
			  strcmp(argv[1], "segv") != 0 && strcmp(argv[1], "exit") != 0)) {
		fprintf(stderr, "usage: fid-end deadlock|abort|segv|exit\n");
		return 1;
	}
	return wsr_main(main_g, argv[1]);
}
