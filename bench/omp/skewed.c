/*
 * omp/skewed.c - one producer thread creates COUNT tasks of WORK LCG steps,
 * then taskwait, ROUNDS times (LLVM OpenMP; bench/skewed.c): the other
 * threads get tasks only by stealing from the producer's deque.
 *
 * Usage: skewed [COUNT [WORK [ROUNDS]]]  (defaults 200000, 512, 4).
 * check = the sum of the tasks' final LCG states, as in bench/skewed.c.
 * Concurrency: one relaxed atomic add per task; read after the taskwait.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../bench.h"

static _Atomic uint64_t sum;

static void worker(uint64_t x, long work)
{
	x = bench_lcg(x, work);
	atomic_fetch_add_explicit(&sum, x, memory_order_relaxed);
}

int main(int argc, char **argv)
{
	long count = bench_arg(argc, argv, 1, 200000), work = bench_arg(argc, argv, 2, 512);
	long rounds = bench_arg(argc, argv, 3, 4);
	int64_t t0 = 0, t1 = 0;
	char extra[64];

#pragma omp parallel
	{
#pragma omp single
		{
			long i, k;

			t0 = bench_now_ns();
			for (k = 0; k < rounds; k++) {
				for (i = 0; i < count; i++) {
#pragma omp task firstprivate(i, k)
					worker((uint64_t)(k * count + i + 1), work);
				}
#pragma omp taskwait
			}
			t1 = bench_now_ns();
		}
	}
	snprintf(extra, sizeof(extra), "work=%ld", work);
	bench_report("skewed", "omp", omp_get_max_threads(), count * rounds, t1 - t0,
		     atomic_load(&sum), extra);
	return 0;
}
