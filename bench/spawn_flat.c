/*
 * spawn_flat.c - one G spawns COUNT empty Gs joined by a waitgroup, ROUNDS
 * times: the cost of creating, running and retiring a G that does nothing,
 * and (under /usr/bin/time) the memory held by COUNT Gs that have not run.
 *
 * Usage: spawn_flat [COUNT [ROUNDS]]  (defaults 1000000 and 3).
 * ops = COUNT * ROUNDS Gs; check = the Gs that ran (each G bumps a counter
 * of its own round, read after the round's wait). Mirrors
 * bench/go/spawn_flat.go and bench/omp/spawn_flat.c.
 *
 * Invariants: a round's waitgroup reaches zero only after all its Gs ran.
 * Concurrency: each G does one relaxed atomic increment and one
 *   waitgroup_done; the spawner reads the count after the wait.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <wsr.h>

#include "bench.h"

/* Static, not on the producer's stack, and `ran` (written by every G) on a
 * cache line of its own, as Go's heap-allocated `ran` and `wg` are: on the
 * stack, each add evicted the line where the producer's calls push their
 * return addresses, and `wg`, which every G reads, from the other CPU. */
struct round {
	wsr_waitgroup *wg;
	_Alignas(64) _Atomic int64_t ran;
};

static struct round cur;

static void empty_g(void *arg)
{
	struct round *r = arg;

	atomic_fetch_add_explicit(&r->ran, 1, memory_order_relaxed);
	wsr_waitgroup_done(r->wg);
}

struct params {
	long count, rounds;
};

static int main_g(void *arg)
{
	struct params *pa = arg;
	uint64_t ran = 0;
	int64_t t0, t1;
	long i, k;

	cur.wg = wsr_waitgroup_make();
	t0 = bench_now_ns();
	for (k = 0; k < pa->rounds; k++) {
		atomic_store(&cur.ran, 0);
		wsr_waitgroup_add(cur.wg, pa->count);
		for (i = 0; i < pa->count; i++)
			wsr_go(empty_g, &cur);
		wsr_waitgroup_wait(cur.wg);
		ran += (uint64_t)atomic_load(&cur.ran);
	}
	t1 = bench_now_ns();
	wsr_waitgroup_free(cur.wg);
	bench_report("spawn_flat", "wsr", wsr_gomaxprocs(), pa->count * pa->rounds, t1 - t0, ran,
		     "");
	return 0;
}

int main(int argc, char **argv)
{
	struct params pa = {bench_arg(argc, argv, 1, 1000000), bench_arg(argc, argv, 2, 3)};

	return wsr_main(main_g, &pa);
}
