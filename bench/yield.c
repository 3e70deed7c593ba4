/*
 * yield.c - a yield storm: 4 Gs per P call wsr_yield() until the round's
 * YIELDS are spent (YIELDS / (4 * P) each), ROUNDS times.
 *
 * Usage: yield [YIELDS [ROUNDS]]  (defaults 1000000 and 20).
 * ops = yields made; check = the same count, summed from the Gs' own
 * counters. Mirrors bench/go/yield.go (runtime.Gosched).
 *
 * Invariants: the Gs of a round split YIELDS evenly (the remainder goes to
 *   the first ones), so ops does not depend on P.
 * Concurrency: each G adds its count with one atomic add at its end.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <wsr.h>

#include "bench.h"

static _Atomic uint64_t done_yields;
static wsr_waitgroup *wg;

static void yielder(void *arg)
{
	long n = (long)(intptr_t)arg, i;

	for (i = 0; i < n; i++)
		wsr_yield();
	atomic_fetch_add(&done_yields, (uint64_t)n);
	wsr_waitgroup_done(wg);
}

struct params {
	long yields, rounds;
};

static int main_g(void *arg)
{
	struct params *pa = arg;
	long ng = 4L * wsr_gomaxprocs(), k, i;
	int64_t t0, t1;

	wg = wsr_waitgroup_make();
	t0 = bench_now_ns();
	for (k = 0; k < pa->rounds; k++) {
		wsr_waitgroup_add(wg, ng);
		for (i = 0; i < ng; i++)
			wsr_go(yielder,
			       (void *)(intptr_t)(pa->yields / ng + (i < pa->yields % ng ? 1 : 0)));
		wsr_waitgroup_wait(wg);
	}
	t1 = bench_now_ns();
	wsr_waitgroup_free(wg);
	bench_report("yield", "wsr", wsr_gomaxprocs(), pa->yields * pa->rounds, t1 - t0,
		     atomic_load(&done_yields), "");
	return 0;
}

int main(int argc, char **argv)
{
	struct params pa = {bench_arg(argc, argv, 1, 1000000), bench_arg(argc, argv, 2, 20)};

	return wsr_main(main_g, &pa);
}
