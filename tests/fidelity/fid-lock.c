/*
 * fid-lock.c - the fidelity harness's lock-wait workload (tests/fidelity/README.md):
 * under WSRDEBUG=policy=locked (the case sets it) a thief waits for the
 * main G's held deque lock, so the runtime emits steal_lock_wait, then the
 * steal and the runs that follow; then a burst of BURST empty Gs (the
 * harness's lossy run must lose events). At 1 P there is no thief: only the
 * burst (the other P counts make the event).
 * Invariants: prints "fid-lock ok" after every G ran; exit 0.
 * Concurrency: see tests/lib/lockhold.h.
 */
#include "config.h"

#include <stdio.h>

#include <wsr.h>

#include "burst.h"
#include "lockhold.h"
#include "proc.h"

#define BURST 3000

static int main_g(void *arg)
{
	(void)arg;
	if (wsr__sched.gomaxprocs >= 2)
		wsrtest_lockhold(50);
	/* Then enough events (about 4 per G) to overflow the lossy run's
	 * two 4 KiB sub-buffers. */
	fid_burst_n(BURST);
	printf("fid-lock ok\n");
	return 0;
}

int main(void)
{
	return wsr_main(main_g, NULL);
}
