/*
 * bench.h - helpers shared by the benchmark programs (wsr and OpenMP sides):
 * a monotonic clock, argument parsing, and the one result line.
 *
 * Invariants:
 *   - Every program prints exactly one line on stdout, of the form
 *     `name=W impl=I procs=N ops=K secs=S ops_per_sec=R check=C [extra...]`;
 *     bench/run.sh parses it and compares `check` across implementations.
 *   - secs covers only the workload: runtime boot and teardown are outside
 *     the timed region on every side (wsr, Go, OpenMP).
 * Concurrency: none; called from one thread (the main G or the OpenMP
 *   master) before and after the timed region.
 */
#ifndef WSR_BENCH_BENCH_H
#define WSR_BENCH_BENCH_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The LCG of the skewed workload (Knuth's MMIX constants); Go uses the same. */
#define BENCH_LCG_A 6364136223846793005ULL
#define BENCH_LCG_C 1442695040888963407ULL

/*
 * Runs n LCG steps from x. The empty asm keeps each step one multiply and one
 * add: without it clang unrolls the loop and folds k steps into one
 * (x * A^k + C_k), doing a fraction of the work Go's compiler does.
 */
static inline uint64_t bench_lcg(uint64_t x, long n)
{
	long i;

	for (i = 0; i < n; i++) {
		x = x * BENCH_LCG_A + BENCH_LCG_C;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline int64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Returns argv[i] as a positive number, def when absent; exits 2 when bad. */
static inline long bench_arg(int argc, char **argv, int i, long def)
{
	char *end;
	long v;

	if (i >= argc)
		return def;
	v = strtol(argv[i], &end, 10);
	if (*end != '\0' || v <= 0) {
		fprintf(stderr, "%s: argument %d: want a positive number, got '%s'\n", argv[0], i,
			argv[i]);
		exit(2);
	}
	return v;
}

/* Prints the result line; extra is appended as is (may be ""). */
static inline void bench_report(const char *name, const char *impl, int procs, int64_t ops,
				int64_t ns, uint64_t check, const char *extra)
{
	double secs = (double)ns / 1e9;

	printf("name=%s impl=%s procs=%d ops=%" PRId64 " secs=%.6f ops_per_sec=%.0f "
	       "check=%" PRIx64 "%s%s\n",
	       name, impl, procs, ops, secs, secs > 0 ? (double)ops / secs : 0.0, check,
	       extra[0] != '\0' ? " " : "", extra);
	fflush(stdout);
}

#endif /* WSR_BENCH_BENCH_H */
