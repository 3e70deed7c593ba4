/*
 * skewed.c - one producer G spawns COUNT Gs of fixed CPU work (WORK steps of
 * an LCG; 512 steps take about 2 us on the reference machine), ROUNDS times:
 * every G starts on the producer's P, so the other Ps get work only by
 * stealing (or from the global queue).
 *
 * Usage: skewed [COUNT [WORK [ROUNDS]]]  (defaults 200000, 512, 4).
 * ops = COUNT * ROUNDS Gs; check = the sum of every G's final LCG state
 * (schedule-independent). Mirrors bench/go/skewed.go and bench/omp/skewed.c.
 *
 * Invariants: G i of round k starts its LCG from k*COUNT + i + 1.
 * Concurrency: each G adds its result with one relaxed atomic add to `sum`,
 *   which has a cache line of its own; the producer reads it after the last
 *   wait. `work` and `wg` are written before the first G starts.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <wsr.h>

#include "bench.h"

/* Read by every worker. */
static long work;
static wsr_waitgroup *wg;
/* Written by every worker: alone on its cache line, as Go's heap-allocated
 * sum is, or each add would also evict `work` and `wg` from the other CPU. */
static struct {
	_Alignas(64) _Atomic uint64_t v;
} sum;

static void worker(void *arg)
{
	uint64_t x = bench_lcg((uint64_t)(uintptr_t)arg, work);

	atomic_fetch_add_explicit(&sum.v, x, memory_order_relaxed);
	wsr_waitgroup_done(wg);
}

struct params {
	long count, rounds;
};

static int main_g(void *arg)
{
	struct params *pa = arg;
	int64_t t0, t1;
	long i, k;
	char extra[64];

	wg = wsr_waitgroup_make();
	t0 = bench_now_ns();
	for (k = 0; k < pa->rounds; k++) {
		wsr_waitgroup_add(wg, pa->count);
		for (i = 0; i < pa->count; i++)
			wsr_go(worker, (void *)(uintptr_t)(k * pa->count + i + 1));
		wsr_waitgroup_wait(wg);
	}
	t1 = bench_now_ns();
	wsr_waitgroup_free(wg);
	snprintf(extra, sizeof(extra), "work=%ld", work);
	bench_report("skewed", "wsr", wsr_gomaxprocs(), pa->count * pa->rounds, t1 - t0,
		     atomic_load(&sum.v), extra);
	return 0;
}

int main(int argc, char **argv)
{
	struct params pa;

	pa.count = bench_arg(argc, argv, 1, 200000);
	work = bench_arg(argc, argv, 2, 512);
	pa.rounds = bench_arg(argc, argv, 3, 4);
	return wsr_main(main_g, &pa);
}
