/*
 * burst.h - the lossy runs' burst (tests/fidelity/fidelity.py, lossy()):
 * with WSR_FIDELITY_BURST=N in the environment, fid_burst() starts N Gs that
 * do nothing and waits for them, before the case itself runs (fid-io and
 * fid-end call it; fid_burst_n: the same for a given N, which fid-lock runs
 * in every run). Four events a
 * G (g_create, runqput, g_run, g_stop) in a few milliseconds overflow the
 * lossy run's 2 x 4 KiB sub-buffers whatever the case does afterwards: a
 * case with few events (fid-io: 2,000 in 35 ms) lost nothing now and then,
 * and the lossy checks had no loss to check.
 *
 * Invariants: without the variable it does nothing; with it, every burst G
 *   has ended when it returns (a deadlock case still deadlocks on its own).
 * Concurrency: called once, from the main G.
 */
#ifndef WSR_FIDELITY_BURST_H
#define WSR_FIDELITY_BURST_H

#include <stdlib.h>

#include <wsr.h>

static void fid_burst_g(void *arg)
{
	wsr_waitgroup_done(arg);
}

/* n Gs that do nothing, all ended when it returns. */
static inline void fid_burst_n(long n)
{
	if (n <= 0)
		return;
	wsr_waitgroup *bwg = wsr_waitgroup_make();
	wsr_waitgroup_add(bwg, n);
	for (long i = 0; i < n; i++)
		wsr_go(fid_burst_g, bwg);
	wsr_waitgroup_wait(bwg);
	wsr_waitgroup_free(bwg);
}

/* The lossy run's burst: WSR_FIDELITY_BURST Gs, none without it. */
static inline void fid_burst(void)
{
	const char *s = getenv("WSR_FIDELITY_BURST");

	fid_burst_n(s != NULL ? strtol(s, NULL, 10) : 0);
}

#endif /* WSR_FIDELITY_BURST_H */
