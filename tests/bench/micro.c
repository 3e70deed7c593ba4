/*
 * micro.c - runtime microbenchmarks: ns per context switch (two Gs
 * yielding to each other on one P), ns per spawn+run+exit of an empty G,
 * and ns per unbuffered channel round trip. A benchmark, never a test: it
 * prints figures and asserts nothing about time.
 *
 * Invariants: each figure is the median of 5 runs of a fixed amount of work.
 * Concurrency: whatever WSRMAXPROCS says (the switch figure pins both Gs to
 *   one P by running them on a 1-P runtime when WSRMAXPROCS is unset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wsr.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define YIELDS 2000000L
static wsr_waitgroup *wg;

static void yielder(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < YIELDS; i++)
		wsr_yield();
	wsr_waitgroup_done(wg);
}

static void empty(void *arg)
{
	(void)arg;
	wsr_waitgroup_done(wg);
}

#define SPAWNS 1000000L
#define TRIPS 1000000L
static wsr_chan *ping, *pong;

static void ponger(void *arg)
{
	long v;

	(void)arg;
	while (wsr_chan_recv(ping, &v) == 1)
		wsr_chan_send(pong, &v);
}

static int main_g(void *arg)
{
	double *out = arg, t;
	long i, v = 0;

	/* Two Gs yielding: each yield is one switch G -> g0 -> other G. */
	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, 2);
	t = now_s();
	wsr_go(yielder, NULL);
	wsr_go(yielder, NULL);
	wsr_waitgroup_wait(wg);
	out[0] = (now_s() - t) * 1e9 / (2.0 * YIELDS);

	wsr_waitgroup_add(wg, SPAWNS);
	t = now_s();
	for (i = 0; i < SPAWNS; i++)
		wsr_go(empty, NULL);
	wsr_waitgroup_wait(wg);
	out[1] = (now_s() - t) * 1e9 / SPAWNS;
	wsr_waitgroup_free(wg);

	ping = wsr_chan_make(sizeof(long), 0);
	pong = wsr_chan_make(sizeof(long), 0);
	wsr_go(ponger, NULL);
	t = now_s();
	for (i = 0; i < TRIPS; i++) {
		wsr_chan_send(ping, &i);
		wsr_chan_recv(pong, &v);
	}
	out[2] = (now_s() - t) * 1e9 / TRIPS;
	wsr_chan_close(ping);
	return v == TRIPS - 1 ? 0 : 1;
}

int main(void)
{
	double runs[3][5], res[3];
	int r, k;

	for (r = 0; r < 5; r++) {
		double out[3];

		if (wsr_main(main_g, out) != 0) {
			fprintf(stderr, "micro: wrong ping-pong result\n");
			return 1;
		}
		for (k = 0; k < 3; k++)
			runs[k][r] = out[k];
	}
	for (k = 0; k < 3; k++) {
		qsort(runs[k], 5, sizeof(double), cmp);
		res[k] = runs[k][2];
	}
	printf("gomaxprocs=%s switch_ns=%.1f spawn_run_exit_ns=%.1f chan_roundtrip_ns=%.1f "
	       "(medians of 5; switch = one G->G hand-over through g0)\n",
	       getenv("WSRMAXPROCS") ? getenv("WSRMAXPROCS") : "default", res[0], res[1],
	       res[2]);
	return 0;
}
