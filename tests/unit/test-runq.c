/*
 * test-runq.c - the per-P ring, runnext and the global queue, driven directly
 * (no threads): put/get order, wrap-around, the 129-G spill, runnext
 * kick-out, half-steals, global batch sizes.
 *
 * Invariants: each case builds a fresh two-P scheduler by hand (fixture) and
 *   owns it; no M thread runs, so the single-threaded calls are exact.
 * Concurrency: none.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "runq.h"
#include "wsrtest.h"

#define NG 2048

static struct wsr_m *m0, *m1;
static struct wsr_g *gs;

/* Frees what the last fixture() built (LeakSanitizer checks every case). */
static void fixture_free(void)
{
	wsr__globrunq_free();
	wsr__gfree_all(); /* the free-G batches; gs are not in slabs */
	free(wsr__sched.allp);
	wsr__sched.allp = NULL;
	free(m0);
	free(m1);
	free(gs);
	m0 = m1 = NULL;
	gs = NULL;
}

static void fixture(int32_t nprocs)
{
	static bool registered;
	int i;

	fixture_free();
	if (!registered) {
		atexit(fixture_free);
		registered = true;
	}

	memset(&wsr__sched, 0, sizeof(wsr__sched));
	wsr__lock_init(&wsr__sched.lock);
	wsr__lock_init(&wsr__sched.gflock);
	wsr__sched.gomaxprocs = nprocs;
	wsr__sched.runnextpause_us = 0;
	wsr__procinit(nprocs);
	m0 = calloc(1, sizeof(*m0));
	m1 = calloc(1, sizeof(*m1));
	m1->id = 1;
	wsr__acquirep(m0, &wsr__sched.allp[0]);
	if (nprocs > 1)
		wsr__acquirep(m1, &wsr__sched.allp[1]);
	gs = calloc(NG, sizeof(*gs));
	for (i = 0; i < NG; i++) {
		gs[i].goid = i + 1;
		store_relaxed(&gs[i].status, G_RUNNABLE);
	}
}

static struct wsr_g *get(struct wsr_p *pp, bool *inherit)
{
	return wsr__runqget(pp, inherit);
}

WSR_TEST(fifo_order_and_empty)
{
	struct wsr_p *pp;
	bool inherit;
	int i;

	fixture(2);
	pp = &wsr__sched.allp[0];
	ASSERT(wsr__runqempty(pp));
	for (i = 0; i < 10; i++)
		wsr__runqput(m0, pp, &gs[i], false);
	ASSERT_EQ(wsr__runqlen(pp), 10);
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(get(pp, &inherit)->goid, i + 1);
		ASSERT(!inherit);
	}
	ASSERT(get(pp, &inherit) == NULL);
	ASSERT(wsr__runqempty(pp));
}

WSR_TEST(wraparound)
{
	struct wsr_p *pp;
	bool inherit;
	int i, next = 0, want = 0;

	fixture(2);
	pp = &wsr__sched.allp[0];
	/* Keep 200 queued while pushing 5 rings' worth through: head and tail wrap. */
	for (i = 0; i < 200; i++)
		wsr__runqput(m0, pp, &gs[next++], false);
	for (i = 0; i < 5 * WSR_RUNQ_SIZE; i++) {
		struct wsr_g *gp = get(pp, &inherit);

		ASSERT_EQ(gp->goid, want + 1);
		want = (want + 1) % NG;
		wsr__runqput(m0, pp, &gs[next], false);
		next = (next + 1) % NG;
	}
	ASSERT_EQ(wsr__runqlen(pp), 200);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 0);
}

WSR_TEST(full_ring_spills_129_to_global)
{
	struct wsr_p *pp;
	bool inherit;
	struct wsr_g *gp;
	int i;

	fixture(2);
	pp = &wsr__sched.allp[0];
	for (i = 0; i < WSR_RUNQ_SIZE; i++)
		wsr__runqput(m0, pp, &gs[i], false);
	ASSERT_EQ(wsr__runqlen(pp), WSR_RUNQ_SIZE);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 0);
	wsr__runqput(m0, pp, &gs[WSR_RUNQ_SIZE], false);
	/* Half the ring (the oldest 128) plus the new G moved in one batch. */
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 129);
	ASSERT_EQ(wsr__runqlen(pp), 128);
	ASSERT_EQ(m0->stats.n[WSR_ST_runq_spill], 1);
	/* The global queue holds G1..G128 then G257, in order. */
	ASSERT_EQ(wsr__sched.gqtail - wsr__sched.gqhead, 129);
	for (i = 0; i < 129; i++) {
		gp = wsr__sched.gq[(wsr__sched.gqhead + (uint32_t)i) & (wsr__sched.gqcap - 1)];
		ASSERT_EQ(gp->goid, i < 128 ? i + 1 : WSR_RUNQ_SIZE + 1);
	}
	/* The ring keeps G129..G256. */
	ASSERT_EQ(get(pp, &inherit)->goid, 129);
}

WSR_TEST(runnext_kicks_old_to_tail)
{
	struct wsr_p *pp;
	bool inherit;

	fixture(2);
	pp = &wsr__sched.allp[0];
	wsr__runqput(m0, pp, &gs[0], false);
	wsr__runqput(m0, pp, &gs[1], true);
	wsr__runqput(m0, pp, &gs[2], true); /* kicks G2 behind G1 */
	ASSERT_EQ(wsr__runqlen(pp), 2);
	ASSERT_EQ(get(pp, &inherit)->goid, 3);
	ASSERT(inherit);
	ASSERT_EQ(get(pp, &inherit)->goid, 1);
	ASSERT(!inherit);
	ASSERT_EQ(get(pp, &inherit)->goid, 2);
	ASSERT(get(pp, &inherit) == NULL);
	ASSERT_EQ(m0->stats.n[WSR_ST_runqput_next], 2);
}

WSR_TEST(steal_takes_half_rounded_up)
{
	struct wsr_p *victim, *thief;
	uint32_t sizes[] = {1, 2, 3, 7, 8, 255, 256};
	size_t k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k], got, i;
		struct wsr_g *gp;
		bool gotnext, inherit;

		fixture(2);
		victim = &wsr__sched.allp[0];
		thief = &wsr__sched.allp[1];
		for (i = 0; i < n; i++)
			wsr__runqput(m0, victim, &gs[i], false);
		gp = wsr__runqsteal(m1, thief, victim, false, &got, &gotnext);
		ASSERT(gp != NULL);
		ASSERT_EQ(got, n - n / 2);
		ASSERT(!gotnext);
		/* The thief runs the last stolen G and queues the rest in order. */
		ASSERT_EQ(gp->goid, got);
		ASSERT_EQ(wsr__runqlen(thief), got - 1);
		ASSERT_EQ(wsr__runqlen(victim), n / 2);
		for (i = 1; i < got; i++)
			ASSERT_EQ(get(thief, &inherit)->goid, i);
		if (n / 2 > 0)
			ASSERT_EQ(get(victim, &inherit)->goid, got + 1);
		else
			ASSERT(get(victim, &inherit) == NULL);
	}
}

WSR_TEST(steal_runnext_only_on_last_round)
{
	struct wsr_p *victim, *thief;
	uint32_t got;
	bool gotnext;
	struct wsr_g *gp;

	fixture(2);
	victim = &wsr__sched.allp[0];
	thief = &wsr__sched.allp[1];
	wsr__runqput(m0, victim, &gs[0], true);
	ASSERT(wsr__runqsteal(m1, thief, victim, false, &got, &gotnext) == NULL);
	ASSERT_EQ(got, 0);
	gp = wsr__runqsteal(m1, thief, victim, true, &got, &gotnext);
	ASSERT(gp == &gs[0]);
	ASSERT_EQ(got, 1);
	ASSERT(gotnext);
	ASSERT(wsr__runqempty(victim));
}

WSR_TEST(global_batch_size)
{
	struct wsr_p *pp;
	struct wsr_g *gp;
	int i;

	fixture(2);
	pp = &wsr__sched.allp[0];
	wsr__lock(&wsr__sched.lock);
	for (i = 0; i < 100; i++)
		wsr__globrunqput(&gs[i]);
	/* min(n, len/gomaxprocs + 1) = 51: one returned, 50 queued locally. */
	gp = wsr__globrunqget(m0, pp, 0);
	ASSERT_EQ(gp->goid, 1);
	ASSERT_EQ(wsr__runqlen(pp), 50);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 49);
	/* max = 1: exactly one. */
	gp = wsr__globrunqget(m0, pp, 1);
	ASSERT_EQ(gp->goid, 52);
	ASSERT_EQ(wsr__runqlen(pp), 50);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 48);
	wsr__unlock(&wsr__sched.lock);
	ASSERT_EQ(m0->stats.n[WSR_ST_globrunq_get], 2);
}

WSR_TEST(global_batch_capped_at_half_ring)
{
	struct wsr_p *pp;
	int i;

	fixture(1);
	pp = &wsr__sched.allp[0];
	wsr__lock(&wsr__sched.lock);
	for (i = 0; i < 1000; i++)
		wsr__globrunqput(&gs[i]);
	ASSERT(wsr__globrunqget(m0, pp, 0) != NULL);
	wsr__unlock(&wsr__sched.lock);
	ASSERT_EQ(wsr__runqlen(pp), WSR_RUNQ_SIZE / 2 - 1);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 1000 - WSR_RUNQ_SIZE / 2);
}

WSR_TEST(global_ring_keeps_order_across_wrap_and_growth)
{
	struct wsr_p *pp;
	struct wsr_g *batch[200];
	int i, want;

	fixture(1);
	pp = &wsr__sched.allp[0];
	wsr__lock(&wsr__sched.lock);
	for (i = 0; i < 400; i++)
		wsr__globrunqput(&gs[i]);
	ASSERT_EQ(wsr__sched.gqcap, 512);
	for (want = 1; want <= 300; want++)
		ASSERT_EQ(wsr__globrunqget(m0, pp, 1)->goid, want);
	/* G401..G700 wrap past the end of the 512 slots without growing them. */
	for (i = 400; i < 700; i++)
		wsr__globrunqput(&gs[i]);
	ASSERT_EQ(wsr__sched.gqcap, 512);
	/* A batch of 200 does not fit: the ring doubles, in order. */
	for (i = 0; i < 200; i++)
		batch[i] = &gs[700 + i];
	wsr__globrunqputbatch(batch, 200);
	ASSERT_EQ(wsr__sched.gqcap, 1024);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 600);
	for (want = 301; want <= 900; want++)
		ASSERT_EQ(wsr__globrunqget(m0, pp, 1)->goid, want);
	ASSERT(wsr__globrunqget(m0, pp, 0) == NULL);
	ASSERT_EQ(load_relaxed(&wsr__sched.runqsize), 0);
	ASSERT_EQ(wsr__runqlen(pp), 0);
	wsr__unlock(&wsr__sched.lock);
}

WSR_TEST(runqput_batch_fills_the_ring_in_order)
{
	struct wsr_p *pp;
	struct wsr_g *batch[WSR_RUNQ_SIZE / 2];
	bool inherit;
	int i;

	fixture(1);
	pp = &wsr__sched.allp[0];
	wsr__runqput(m0, pp, &gs[0], false);
	ASSERT_EQ(get(pp, &inherit)->goid, 1); /* the ring now starts mid-array */
	for (i = 0; i < WSR_RUNQ_SIZE / 2; i++)
		batch[i] = &gs[i];
	wsr__runqput_batch(m0, pp, batch, WSR_RUNQ_SIZE / 2);
	for (i = 0; i < WSR_RUNQ_SIZE / 2; i++)
		batch[i] = &gs[WSR_RUNQ_SIZE / 2 + i];
	wsr__runqput_batch(m0, pp, batch, WSR_RUNQ_SIZE / 2);
	ASSERT_EQ(wsr__runqlen(pp), WSR_RUNQ_SIZE);
	/* No runqput events: the batch's own event counts these Gs. */
	ASSERT_EQ(m0->stats.n[WSR_ST_runqput], 1);
	for (i = 0; i < WSR_RUNQ_SIZE; i++)
		ASSERT_EQ(get(pp, &inherit)->goid, i + 1);
	ASSERT(get(pp, &inherit) == NULL);
}

static void never_runs(void *arg)
{
	(void)arg;
}

WSR_TEST(dead_gs_move_between_ps_in_batches)
{
	struct wsr_p *p0, *p1;
	struct wsr_g *gp;
	int i;

	fixture(2);
	p0 = &wsr__sched.allp[0];
	p1 = &wsr__sched.allp[1];
	/* The 256th free G on P1 moves the newest 128 to the global list, as
	 * one batch. */
	for (i = 0; i < WSR_GFREE_MAX; i++)
		wsr__gfput(p1, &gs[i]);
	ASSERT_EQ(p1->gfreecnt, WSR_GFREE_MAX / 2);
	ASSERT(p1->gfree[p1->gfreecnt - 1] == &gs[WSR_GFREE_MAX / 2 - 1]);
	ASSERT_EQ(wsr__sched.ngfree, WSR_GFREE_MAX / 2);
	ASSERT(wsr__sched.gfree != NULL && wsr__sched.gfree->next == NULL);
	ASSERT(wsr__sched.gfree->g[WSR_GFREE_MAX / 2 - 1] == &gs[WSR_GFREE_MAX - 1]);
	ASSERT(wsr__sched.gbspare == NULL);
	/* P0 has none: its first spawn takes the whole batch and uses its
	 * newest G; the empty batch waits for the next spill. */
	gp = wsr__newproc(m0, never_runs, NULL, 0);
	ASSERT(gp == &gs[WSR_GFREE_MAX - 1]);
	ASSERT_EQ(p0->gfreecnt, WSR_GFREE_MAX / 2 - 1);
	ASSERT(p0->gfree[p0->gfreecnt - 1] == &gs[WSR_GFREE_MAX - 2]);
	ASSERT(p0->gfree[0] == &gs[WSR_GFREE_MAX / 2]);
	ASSERT_EQ(wsr__sched.ngfree, 0);
	ASSERT(wsr__sched.gfree == NULL);
	ASSERT(wsr__sched.gbspare != NULL);
	ASSERT(gp->param == NULL);
	/* The next spill reuses that batch: no allocation. */
	for (i = 0; i < WSR_GFREE_MAX / 2; i++)
		wsr__gfput(p1, &gs[WSR_GFREE_MAX + i]);
	ASSERT_EQ(wsr__sched.ngfree, WSR_GFREE_MAX / 2);
	ASSERT(wsr__sched.gbspare == NULL);
	ASSERT(wsr__sched.gfree->g[0] == &gs[WSR_GFREE_MAX]);
	ASSERT_EQ(wsr__runqlen(p0) + (load_relaxed(&p0->runnext) != NULL), 1);
}
