/*
 * tp-cost.c - what a compiled-in `wsr` tracepoint costs when no session
 * listens (or when one does: run it under `wsr run`).
 *
 * Times N calls of lttng_ust_tracepoint(wsr, runqput, ...) against the same
 * loop without the tracepoint, and prints nanoseconds per call for each and
 * their difference. A benchmark (meson `benchmark()`), never a pass/fail
 * test: it asserts nothing about time.
 *
 * Usage: tp-cost [N]   (default 100000000)
 *
 * Invariants: the loop body stores to a volatile sink in both variants so
 *   the compiler keeps both loops; only the tracepoint differs.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wsr_tp.h"

static volatile int64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double loop_plain(long n)
{
	double t0 = now_s();

	for (long i = 0; i < n; i++)
		sink = i;
	return now_s() - t0;
}

static double loop_traced(long n)
{
	double t0 = now_s();

	for (long i = 0; i < n; i++) {
		sink = i;
		lttng_ust_tracepoint(wsr, runqput, 0, 0, (int64_t)i, (uint8_t)(i & 1), 0,
				     (uint32_t)(i & 255));
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000000L;
	double plain = 1e9, traced = 1e9;

	if (n <= 0) {
		fprintf(stderr, "usage: tp-cost [N]\n");
		return 2;
	}
	/* Best of 5 of each, interleaved: the least disturbed run is the cost. */
	for (int r = 0; r < 5; r++) {
		double p = loop_plain(n), t = loop_traced(n);

		plain = p < plain ? p : plain;
		traced = t < traced ? t : traced;
	}
	printf("tp-cost: %ld calls: loop %.3f ns/iter, loop + tracepoint %.3f ns/iter, "
	       "tracepoint %.3f ns/call\n",
	       n, plain * 1e9 / (double)n, traced * 1e9 / (double)n,
	       (traced - plain) * 1e9 / (double)n);
	return 0;
}
