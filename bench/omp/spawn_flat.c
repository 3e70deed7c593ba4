/*
 * omp/spawn_flat.c - one thread creates COUNT empty tasks, then taskwait,
 * ROUNDS times (LLVM OpenMP; bench/spawn_flat.c). Each task bumps the round's
 * counter, which is the check.
 *
 * Usage: spawn_flat [COUNT [ROUNDS]]  (defaults 1000000 and 3).
 * Invariants: the taskwait returns only after all the round's tasks ran.
 * Concurrency: one relaxed atomic add per task; read after the taskwait.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../bench.h"

static _Atomic int64_t ran;

static void empty_task(void)
{
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

int main(int argc, char **argv)
{
	long count = bench_arg(argc, argv, 1, 1000000), rounds = bench_arg(argc, argv, 2, 3);
	int64_t t0 = 0, t1 = 0;

#pragma omp parallel
	{
#pragma omp single
		{
			long i, k;

			t0 = bench_now_ns();
			for (k = 0; k < rounds; k++) {
				for (i = 0; i < count; i++) {
#pragma omp task
					empty_task();
				}
#pragma omp taskwait
			}
			t1 = bench_now_ns();
		}
	}
	bench_report("spawn_flat", "omp", omp_get_max_threads(), count * rounds, t1 - t0,
		     (uint64_t)atomic_load(&ran), "");
	return 0;
}
