/*
 * sleep_timers.c - a timer storm: NG Gs each sleep SLEEP_NS, SLEEPS times,
 * and record how late every wakeup was (oversleep = slept - asked).
 *
 * Usage: sleep_timers [NG [SLEEPS [SLEEP_NS]]]  (defaults 10000, 20, 1000000).
 * ops = wakeups; check = wakeups recorded; extra keys: wakeups_per_sec and
 * oversleep_p50_us / oversleep_p99_us over all wakeups. Mirrors
 * bench/go/sleep_timers.go (time.Sleep, time.Now).
 *
 * Invariants: G g writes only its own slice lat[g*SLEEPS .. (g+1)*SLEEPS).
 * Concurrency: the slices are disjoint; the main G reads them after the wait.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <wsr.h>

#include "bench.h"

static long sleeps, sleep_ns;
static int64_t *lat;
static _Atomic uint64_t recorded;
static wsr_waitgroup *wg;

static void sleeper(void *arg)
{
	int64_t *mine = lat + (intptr_t)arg * sleeps, t0, t1;
	long i;

	for (i = 0; i < sleeps; i++) {
		t0 = bench_now_ns();
		wsr_sleep_ns(sleep_ns);
		t1 = bench_now_ns();
		mine[i] = t1 - t0 - sleep_ns;
	}
	atomic_fetch_add(&recorded, (uint64_t)sleeps);
	wsr_waitgroup_done(wg);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int main_g(void *arg)
{
	long ng = *(long *)arg, i, n = ng * sleeps;
	int64_t t0, t1;
	char extra[160];

	lat = calloc((size_t)n, sizeof(*lat));
	wg = wsr_waitgroup_make();
	if (lat == NULL || wg == NULL)
		return 1;
	t0 = bench_now_ns();
	wsr_waitgroup_add(wg, ng);
	for (i = 0; i < ng; i++)
		wsr_go(sleeper, (void *)(intptr_t)i);
	wsr_waitgroup_wait(wg);
	t1 = bench_now_ns();
	wsr_waitgroup_free(wg);
	qsort(lat, (size_t)n, sizeof(*lat), cmp64);
	snprintf(extra, sizeof(extra),
		 "wakeups_per_sec=%.0f oversleep_p50_us=%.1f oversleep_p99_us=%.1f",
		 (double)n / ((double)(t1 - t0) / 1e9), (double)lat[n / 2] / 1e3,
		 (double)lat[n * 99 / 100] / 1e3);
	bench_report("sleep_timers", "wsr", wsr_gomaxprocs(), n, t1 - t0, atomic_load(&recorded),
		     extra);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	long ng = bench_arg(argc, argv, 1, 10000);

	sleeps = bench_arg(argc, argv, 2, 20);
	sleep_ns = bench_arg(argc, argv, 3, 1000000);
	return wsr_main(main_g, &ng);
}
