/*
 * omp/spawn_tree.c - fib(N) with LLVM OpenMP tasks: every call is a task,
 * and a call's two results come back through shared locals and a taskwait
 * (OpenMP's join; tasks have no channels). Built with clang -fopenmp.
 *
 * Usage: spawn_tree [N]  (default 29). ops = 2*fib(N+1) - 1 tasks,
 * check = fib(N), as in bench/spawn_tree.c.
 *
 * Invariants: a call's result slots live in its frame until its taskwait.
 * Concurrency: OMP_NUM_THREADS threads; only the single region creates the
 *   root task, and the tasks share nothing but their parent's result slots.
 */
#include <omp.h>
#include <stdint.h>

#include "../bench.h"

static long fib_task(int n)
{
	long x, y;

	if (n < 2)
		return n;
#pragma omp task shared(x) firstprivate(n)
	x = fib_task(n - 1);
#pragma omp task shared(y) firstprivate(n)
	y = fib_task(n - 2);
#pragma omp taskwait
	return x + y;
}

int main(int argc, char **argv)
{
	int n = (int)bench_arg(argc, argv, 1, 29);
	long r = 0, a = 0, b = 1, i, t;
	int64_t t0 = 0, t1 = 0;

	if (n > 40) {
		fprintf(stderr, "usage: spawn_tree [N]  (1 <= N <= 40)\n");
		return 2;
	}
	/* Boot the thread team outside the timed region, as wsr_main and Go do. */
#pragma omp parallel
	{
#pragma omp single
		{
			t0 = bench_now_ns();
#pragma omp task shared(r)
			r = fib_task(n);
#pragma omp taskwait
			t1 = bench_now_ns();
		}
	}
	for (i = 0; i < n + 1; i++) {
		t = a + b;
		a = b;
		b = t;
	}
	bench_report("spawn_tree", "omp", omp_get_max_threads(), 2 * a - 1, t1 - t0, (uint64_t)r,
		     "");
	return 0;
}
