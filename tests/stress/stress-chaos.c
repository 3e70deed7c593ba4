/*
 * stress-chaos.c - the scheduler under WSRDEBUG=chaos=SEED (random yields
 * and sleeps at its racy windows): spawn storms, ping-pong storms,
 * park/unpark storms where every M goes idle, steals at WSRMAXPROCS 2..64,
 * with timers and syscalls mixed in. Every G must run exactly once
 * (checksums), nothing may hang (watchdog), the spinning cap must hold.
 *
 * Size: WSR_STRESS_SCALE=1 is the CI size (a few seconds per case; the
 * sanitizer builds spawn and ping-pong a tenth of it); the
 * soak run is `WSR_STRESS_SCALE=50 meson test -C build --suite stress
 * --repeat 20 chaos` (see tests/README.md). Seeds come from WSR_SEED (or
 * a fixed default) plus the case's WSRMAXPROCS, so a failure is replayed
 * with the seed it prints.
 *
 * Invariants: each case prints its seed and cycle count before checking.
 * Concurrency: Gs touch only atomics and their own slots.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wsr.h>

#include "proc.h"
#include "watchdog.h"
#include "wsrtest.h"

static long scale;
static long stormindex;
static _Atomic unsigned char *seen;
static _Atomic uint64_t sum;
static _Atomic long cycles;
static _Atomic long stormruns; /* runs of the park/unpark storm's G (index n) */
static wsr_waitgroup *wg;

struct pair {
	wsr_chan *a, *b;
	long n;
};

static void leaf(void *arg)
{
	uintptr_t i = (uintptr_t)arg;

	if ((long)i == stormindex)
		stormruns++;
	else
		seen[i]++;
	sum += i;
	cycles++;
	/* Mix in the other ways a G leaves the CPU. */
	switch (i % 7) {
	case 0:
		wsr_yield();
		break;
	case 1:
		wsr_sleep_ns((int64_t)(i % 50) * 1000);
		break;
	case 2: {
		struct timespec ts = {0, 20000};

		wsr_syscall_enter();
		nanosleep(&ts, NULL);
		wsr_syscall_exit();
		break;
	}
	default:
		break;
	}
	wsr_waitgroup_done(wg);
}

static void spawner(void *arg)
{
	struct {
		long lo, hi;
	} *r = arg;
	long i;

	for (i = r->lo; i < r->hi; i++)
		wsr_go(leaf, (void *)(uintptr_t)i);
	free(r);
	wsr_waitgroup_done(wg);
}

static void pinger(void *arg)
{
	struct pair *pp = arg;
	long i, v;

	for (i = 0; i < pp->n; i++) {
		wsr_chan_send(pp->a, &i);
		wsr_chan_recv(pp->b, &v);
		if (v != i)
			wsrtest_fail(__FILE__, __LINE__, "ping-pong got %ld, want %ld", v, i);
		cycles++;
	}
	wsr_chan_close(pp->a);
	wsr_waitgroup_done(wg);
}

static void ponger(void *arg)
{
	struct pair *pp = arg;
	long v;

	while (wsr_chan_recv(pp->a, &v) == 1)
		wsr_chan_send(pp->b, &v);
	wsr_waitgroup_done(wg);
}

static int storm_main(void *arg)
{
	long n = *(long *)arg, i, nspawners = 8, npairs = 4, k;
	struct pair pairs[4];

	wg = wsr_waitgroup_make();
	/* Spawn storm from several spawners (so several Ps get work), then a
	 * ping-pong storm alongside. */
	wsr_waitgroup_add(wg, n + nspawners + 2 * npairs);
	for (k = 0; k < nspawners; k++) {
		struct {
			long lo, hi;
		} *r = malloc(sizeof(*r));

		r->lo = n * k / nspawners;
		r->hi = n * (k + 1) / nspawners;
		wsr_go(spawner, r);
	}
	for (k = 0; k < npairs; k++) {
		pairs[k].a = wsr_chan_make(sizeof(long), 0);
		pairs[k].b = wsr_chan_make(sizeof(long), (size_t)k);
		pairs[k].n = 10000 * scale / wsrtest_sanitizer_divisor();
		wsr_go(pinger, &pairs[k]);
		wsr_go(ponger, &pairs[k]);
	}
	wsr_waitgroup_wait(wg);
	for (k = 0; k < npairs; k++) {
		wsr_chan_free(pairs[k].a);
		wsr_chan_free(pairs[k].b);
	}
	/* Park/unpark storm: the only G sleeps (every M idles), then wakes a
	 * burst of Gs, over and over. */
	for (i = 0; i < 1000 * scale; i++) {
		int p = wsr_gomaxprocs(), j;

		wsr_sleep_ns(3000);
		wsr_waitgroup_add(wg, p);
		for (j = 0; j < p; j++)
			wsr_go(leaf, (void *)(uintptr_t)n);
		wsr_waitgroup_wait(wg);
	}
	wsr_waitgroup_free(wg);
	return 0;
}

static void run(int procs)
{
	const char *s = getenv("WSR_SEED");
	unsigned long long seed = (s != NULL ? strtoull(s, NULL, 10) : 20261129ULL) + (unsigned)procs;
	long n, i;
	char buf[256];
	uint64_t want = 0;
	/* Keep the caller's other knobs (a policy=, say), the seed last. */
	static char inherited[128];
	if (inherited[0] == '\0' && getenv("WSRDEBUG") != NULL)
		snprintf(inherited, sizeof(inherited), "%s,", getenv("WSRDEBUG"));

	scale = wsrtest_scale();
	/* The sanitizer builds run a tenth of the spawn and ping-pong storms and
	 * all of the park/unpark storm, where the racy windows are. */
	n = 100000 * scale / wsrtest_sanitizer_divisor();
	stormindex = n;
	stormruns = 0;
	seen = calloc((size_t)n, 1);
	ASSERT(seen != NULL);
	snprintf(buf, sizeof(buf), "%d", procs);
	setenv("WSRMAXPROCS", buf, 1);
	snprintf(buf, sizeof(buf), "%schaos=%llu", inherited, seed);
	setenv("WSRDEBUG", buf, 1);
	printf("# WSRMAXPROCS=%d WSRDEBUG=%s\n", procs, buf);
	wsrtest_watchdog(100, "chaos storm");
	ASSERT_EQ(wsr_main(storm_main, &n), 0);
	for (i = 0; i < n; i++) {
		if (seen[i] != 1)
			wsrtest_fail(__FILE__, __LINE__, "G %ld ran %d times", i, seen[i]);
		want += (uint64_t)i;
	}
	ASSERT_EQ(stormruns, 1000 * scale * procs);
	want += (uint64_t)n * 1000 * (uint64_t)scale * (uint64_t)procs;
	ASSERT_EQ(sum, want);
	ASSERT_LE(wsr__max_spinning, (uint64_t)((procs + 1) / 2));
	ASSERT_EQ(wsr__last_stats[WSR_ST_spin_start], wsr__last_stats[WSR_ST_spin_stop]);
	printf("# %d Ps: %ld cycles (G runs + round trips), steals=%llu parks=%llu retakes=%llu "
	       "max_spinning=%llu\n",
	       procs, cycles, (unsigned long long)wsr__last_stats[WSR_ST_steal],
	       (unsigned long long)wsr__last_stats[WSR_ST_m_park],
	       (unsigned long long)wsr__last_stats[WSR_ST_retake],
	       (unsigned long long)wsr__max_spinning);
	free((void *)seen);
}

WSR_TEST_TIMEOUT(chaos_p2, 120)
{
	run(2);
}

WSR_TEST_TIMEOUT(chaos_p3, 120)
{
	run(3);
}

WSR_TEST_TIMEOUT(chaos_p8, 120)
{
	run(8);
}

WSR_TEST_TIMEOUT(chaos_p64, 120)
{
	run(64);
}
