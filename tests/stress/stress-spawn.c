/*
 * stress-spawn.c - 1,000,000 spawned Gs all run exactly once, at
 * WSRMAXPROCS = 1, 2, 4 and 64 (oversubscribed on a 2-core machine), from a
 * flat spawner and from a spawn tree; checked by a per-G bitmap and a sum.
 *
 * Invariants: sizes scale with WSR_STRESS_SCALE; a watchdog dumps and aborts
 *   on a hang.
 * Concurrency: each G sets its own byte (atomic) and adds to a sum.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "proc.h"
#include "watchdog.h"
#include "wsrtest.h"

static _Atomic unsigned char *seen;
static _Atomic uint64_t sum;
static wsr_waitgroup *wg;
static long total;

static void leaf(void *arg)
{
	uintptr_t i = (uintptr_t)arg;

	seen[i]++;
	sum += i;
	wsr_waitgroup_done(wg);
}

static int flat_main(void *arg)
{
	long i;

	(void)arg;
	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, total);
	for (i = 0; i < total; i++)
		wsr_go(leaf, (void *)(uintptr_t)i);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	return 0;
}

/* A tree: node [lo, hi) spawns two halves until ranges are 1 wide. */
struct range {
	long lo, hi;
};

static void tree(void *arg)
{
	struct range *r = arg;
	long lo = r->lo, hi = r->hi;

	/* Freed first: once the last leaf signals, main returns and Gs still on
	 * their way out are abandoned (LeakSanitizer would see r). */
	free(r);
	if (hi - lo == 1) {
		leaf((void *)(uintptr_t)lo);
	} else {
		long mid = (lo + hi) / 2;
		struct range *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

		ASSERT(a != NULL && b != NULL);
		a->lo = lo;
		a->hi = mid;
		b->lo = mid;
		b->hi = hi;
		wsr_go(tree, a);
		wsr_go(tree, b);
	}
}

static int tree_main(void *arg)
{
	struct range *r = malloc(sizeof(*r));

	(void)arg;
	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, total);
	r->lo = 0;
	r->hi = total;
	wsr_go(tree, r);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	return 0;
}

static void run(int procs, int (*fn)(void *), const char *what)
{
	char buf[16], name[64];
	long i;
	uint64_t want;

	total = 1000000 * wsrtest_scale() / wsrtest_sanitizer_divisor();
	seen = calloc((size_t)total, 1);
	ASSERT(seen != NULL);
	sum = 0;
	snprintf(buf, sizeof(buf), "%d", procs);
	setenv("WSRMAXPROCS", buf, 1);
	snprintf(name, sizeof(name), "%s (%ld Gs) at %d Ps", what, total, procs);
	wsrtest_watchdog(120, name);
	ASSERT_EQ(wsr_main(fn, NULL), 0);
	for (i = 0; i < total; i++)
		if (seen[i] != 1)
			wsrtest_fail(__FILE__, __LINE__, "%s: G %ld ran %d times", name, i, seen[i]);
	want = (uint64_t)total * (uint64_t)(total - 1) / 2;
	ASSERT_EQ(sum, want);
	ASSERT_LE(wsr__max_spinning, (uint64_t)((procs + 1) / 2));
	printf("# %s: g_create=%llu steal=%llu stolen=%llu spill=%llu global_get=%llu park=%llu "
	       "max_spinning=%llu\n",
	       name, (unsigned long long)wsr__last_stats[WSR_ST_g_create],
	       (unsigned long long)wsr__last_stats[WSR_ST_steal],
	       (unsigned long long)wsr__last_stats[WSR_ST_stolen],
	       (unsigned long long)wsr__last_stats[WSR_ST_runq_spill],
	       (unsigned long long)wsr__last_stats[WSR_ST_globrunq_get],
	       (unsigned long long)wsr__last_stats[WSR_ST_m_park],
	       (unsigned long long)wsr__max_spinning);
	free((void *)seen);
}

WSR_TEST_TIMEOUT(flat_1m_p1, 150)
{
	run(1, flat_main, "flat 1M");
}

WSR_TEST_TIMEOUT(flat_1m_p2, 150)
{
	run(2, flat_main, "flat 1M");
}

WSR_TEST_TIMEOUT(flat_1m_p4, 150)
{
	run(4, flat_main, "flat 1M");
}

WSR_TEST_TIMEOUT(flat_1m_p64, 150)
{
	run(64, flat_main, "flat 1M");
}

WSR_TEST_TIMEOUT(tree_1m_p2, 150)
{
	run(2, tree_main, "tree 1M");
}

WSR_TEST_TIMEOUT(tree_1m_p64, 150)
{
	run(64, tree_main, "tree 1M");
}

/* One G struct, and under TSan one fiber, host more Gs in turn than TSan's
 * shadow stack has slots (65,536): each G is spawned after the last one
 * exited, at 1 P, whose free list hands the same struct back and whose
 * fiber cache the same fiber (runtime/tsanfiber.c). main yields now and
 * then, so that no G is preempted on its way out (runnext inherits the
 * slice) and holds the struct while the next one is spawned. Not scaled: a
 * G that left one frame per life on its fiber's shadow stack would
 * overflow it here. */
#define REUSE_LIVES 100000
#define REUSE_MIN   70000
#define REUSE_SLOTS 64
static struct wsr_g *reuse_g[REUSE_SLOTS];
static long reuse_n[REUSE_SLOTS];

static void reuse_child(void *arg)
{
	struct wsr_g *gp = wsr__getm()->curg;
	int i;

	(void)arg;
	for (i = 0; i < REUSE_SLOTS - 1 && reuse_g[i] != NULL && reuse_g[i] != gp; i++)
		;
	reuse_g[i] = gp;
	reuse_n[i]++;
	wsr_waitgroup_done(wg);
}

static int reuse_main(void *arg)
{
	(void)arg;
	wg = wsr_waitgroup_make();
	for (long i = 0; i < REUSE_LIVES; i++) {
		wsr_waitgroup_add(wg, 1);
		wsr_go(reuse_child, NULL);
		wsr_waitgroup_wait(wg);
		if (i % 256 == 255)
			wsr_yield();
	}
	wsr_waitgroup_free(wg);
	return 0;
}

WSR_TEST_TIMEOUT(one_g_struct_many_lives, 150)
{
	long most = 0;

	setenv("WSRMAXPROCS", "1", 1);
	wsrtest_watchdog(120, "one G struct, many lives");
	memset(reuse_g, 0, sizeof(reuse_g));
	memset(reuse_n, 0, sizeof(reuse_n));
	ASSERT_EQ(wsr_main(reuse_main, NULL), 0);
	for (int i = 0; i < REUSE_SLOTS; i++)
		most = reuse_n[i] > most ? reuse_n[i] : most;
	printf("# %ld of %d Gs ran in one struct\n", most, REUSE_LIVES);
	ASSERT_GE(most, REUSE_MIN);
}
