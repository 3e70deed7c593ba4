/*
 * test-mutex-wg.c - wsr_mutex and wsr_waitgroup: the mutex excludes and its
 * waiters park as Gs (not threads); the waitgroup releases every waiter
 * once, can be reused, and can be freed by the waiter right after wait
 * returns (the use-after-free the first version had).
 *
 * Invariants: every case runs under st_run's watchdog; fixed seeds; the
 *   "parks, not spins" checks are structural (a single P must run others
 *   while a G waits), never timing-based.
 * Concurrency: the protected counters are plain longs on purpose: only the
 *   mutex makes their updates safe (TSan checks that too).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

/* ---- mutex excludes ---- */
struct excl {
	wsr_mutex *mu;
	long counter; /* under mu */
	int inside;   /* under mu: must be 0 on entry */
	wsr_waitgroup *wg;
	long per;
};

static void excl_worker(void *arg)
{
	struct excl *e = arg;
	long i, v;

	for (i = 0; i < e->per; i++) {
		wsr_mutex_lock(e->mu);
		ASSERT_EQ(e->inside, 0);
		e->inside = 1;
		v = e->counter;
		if (i % 7 == 0)
			wsr_yield(); /* hold the mutex across a reschedule */
		e->counter = v + 1;
		e->inside = 0;
		wsr_mutex_unlock(e->mu);
	}
	wsr_waitgroup_done(e->wg);
}

static int excl_main(void *arg)
{
	struct excl e = {wsr_mutex_make(), 0, 0, wsr_waitgroup_make(), 2000};
	int i, n = 8;

	(void)arg;
	wsr_waitgroup_add(e.wg, n);
	for (i = 0; i < n; i++)
		wsr_go(excl_worker, &e);
	wsr_waitgroup_wait(e.wg);
	ASSERT_EQ(e.counter, n * e.per);
	wsr_mutex_free(e.mu);
	wsr_waitgroup_free(e.wg);
	return 0;
}

WSR_TEST_TIMEOUT(mutex_excludes_p1, 30)
{
	st_run("mutex_excludes_p1", 1, excl_main, NULL, 25);
}

WSR_TEST_TIMEOUT(mutex_excludes_p2, 30)
{
	st_run("mutex_excludes_p2", 2, excl_main, NULL, 25);
}

/* ---- mutex parks ----
 * At P=1: the holder sleeps with the mutex held; a waiter blocks on it; a
 * third G must still run (the waiter parked as a G instead of holding the
 * only P), and the waiter gets the mutex once the holder unlocks. */
struct parks {
	wsr_mutex *mu;
	_Atomic int holder_in, waiter_got, third_ran, waiter_started;
	wsr_waitgroup *wg;
};

static void pk_holder(void *arg)
{
	struct parks *p = arg;

	wsr_mutex_lock(p->mu);
	p->holder_in = 1;
	/* Wait until the waiter is blocked and the third G has run. */
	while (!p->third_ran)
		wsr_sleep_ns(1000000);
	ASSERT_EQ(p->waiter_got, 0);
	wsr_mutex_unlock(p->mu);
	wsr_waitgroup_done(p->wg);
}

static void pk_waiter(void *arg)
{
	struct parks *p = arg;

	p->waiter_started = 1;
	wsr_mutex_lock(p->mu);
	p->waiter_got = 1;
	wsr_mutex_unlock(p->mu);
	wsr_waitgroup_done(p->wg);
}

static void pk_third(void *arg)
{
	struct parks *p = arg;

	ASSERT_EQ(p->waiter_got, 0);
	p->third_ran = 1;
	wsr_waitgroup_done(p->wg);
}

static int parks_main(void *arg)
{
	struct parks p = {wsr_mutex_make(), 0, 0, 0, 0, wsr_waitgroup_make()};

	(void)arg;
	wsr_waitgroup_add(p.wg, 3);
	wsr_go(pk_holder, &p);
	while (!p.holder_in)
		wsr_yield();
	wsr_go(pk_waiter, &p);
	while (!p.waiter_started)
		wsr_yield();
	wsr_yield();
	wsr_go(pk_third, &p);
	wsr_waitgroup_wait(p.wg);
	ASSERT_EQ(p.waiter_got, 1);
	wsr_mutex_free(p.mu);
	wsr_waitgroup_free(p.wg);
	return 0;
}

WSR_TEST_TIMEOUT(mutex_waiter_parks_as_g_p1, 30)
{
	st_run("mutex_waiter_parks_as_g_p1", 1, parks_main, NULL, 25);
}

/* Hand-off is FIFO: waiters get the mutex in the order they queued. */
struct fifo {
	wsr_mutex *mu;
	int order[8], n; /* under mu */
	_Atomic int queued;
	wsr_waitgroup *wg;
};

struct fifo_arg {
	struct fifo *f;
	int id;
};

static void fifo_waiter(void *arg)
{
	struct fifo_arg *a = arg;

	a->f->queued++;
	wsr_mutex_lock(a->f->mu);
	a->f->order[a->f->n++] = a->id;
	wsr_mutex_unlock(a->f->mu);
	wsr_waitgroup_done(a->f->wg);
}

static int fifo_main(void *arg)
{
	struct fifo f = {.mu = wsr_mutex_make(), .wg = wsr_waitgroup_make()};
	struct fifo_arg as[8];
	int i;

	(void)arg;
	wsr_mutex_lock(f.mu);
	wsr_waitgroup_add(f.wg, 8);
	for (i = 0; i < 8; i++) {
		as[i].f = &f;
		as[i].id = i;
		wsr_go(fifo_waiter, &as[i]);
		/* At P=1 the new G runs (and queues on the mutex) before we go on. */
		while (f.queued != i + 1)
			wsr_yield();
		wsr_yield();
	}
	wsr_mutex_unlock(f.mu);
	wsr_waitgroup_wait(f.wg);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(f.order[i], i);
	wsr_mutex_free(f.mu);
	wsr_waitgroup_free(f.wg);
	return 0;
}

WSR_TEST_TIMEOUT(mutex_handoff_fifo_p1, 30)
{
	st_run("mutex_handoff_fifo_p1", 1, fifo_main, NULL, 25);
}

/* The last user of an object frees its mutex right after unlocking. */
struct obj {
	wsr_mutex *mu;
	int refs; /* under mu */
};

static wsr_waitgroup *obj_wg;

static void obj_user(void *arg)
{
	struct obj *o = arg;
	int last;

	wsr_mutex_lock(o->mu);
	last = --o->refs == 0;
	wsr_mutex_unlock(o->mu);
	if (last) {
		wsr_mutex_free(o->mu);
		free(o);
	}
	wsr_waitgroup_done(obj_wg);
}

static int objfree_main(void *arg)
{
	int round, i;

	(void)arg;
	obj_wg = wsr_waitgroup_make();
	for (round = 0; round < 2000; round++) {
		struct obj *o = malloc(sizeof(*o));

		o->mu = wsr_mutex_make();
		o->refs = 4;
		wsr_waitgroup_add(obj_wg, 4);
		for (i = 0; i < 4; i++)
			wsr_go(obj_user, o);
		wsr_waitgroup_wait(obj_wg);
	}
	wsr_waitgroup_free(obj_wg);
	return 0;
}

WSR_TEST_TIMEOUT(mutex_freed_by_last_user_p2, 30)
{
	st_run("mutex_freed_by_last_user_p2", 2, objfree_main, NULL, 25);
}

/* ---- waitgroup ---- */
struct wgt {
	wsr_waitgroup *wg, *released;
	_Atomic long done_before, woke;
};

static void wg_waiter(void *arg)
{
	struct wgt *t = arg;

	wsr_waitgroup_wait(t->wg);
	/* Every done happened before any waiter returns. */
	ASSERT_EQ(t->done_before, 10);
	t->woke++;
	wsr_waitgroup_done(t->released);
}

static void wg_doer(void *arg)
{
	struct wgt *t = arg;

	wsr_sleep_ns(100000);
	t->done_before++;
	wsr_waitgroup_done(t->wg);
}

static int wg_main(void *arg)
{
	struct wgt t = {wsr_waitgroup_make(), wsr_waitgroup_make(), 0, 0};
	int i, round;

	(void)arg;
	/* Wait on a zero counter returns at once. */
	wsr_waitgroup_wait(t.wg);
	for (round = 0; round < 20; round++) {
		t.done_before = 0;
		t.woke = 0;
		wsr_waitgroup_add(t.wg, 10);
		wsr_waitgroup_add(t.released, 5);
		for (i = 0; i < 5; i++)
			wsr_go(wg_waiter, &t);
		for (i = 0; i < 10; i++)
			wsr_go(wg_doer, &t);
		wsr_waitgroup_wait(t.released);
		ASSERT_EQ(t.woke, 5);
	}
	wsr_waitgroup_free(t.wg);
	wsr_waitgroup_free(t.released);
	return 0;
}

WSR_TEST_TIMEOUT(waitgroup_releases_every_waiter_p1, 30)
{
	st_run("waitgroup_releases_every_waiter_p1", 1, wg_main, NULL, 25);
}

WSR_TEST_TIMEOUT(waitgroup_releases_every_waiter_p2, 30)
{
	st_run("waitgroup_releases_every_waiter_p2", 2, wg_main, NULL, 25);
}

/* The owner frees the waitgroup as soon as wait returns, while the last
 * done may still be returning (fib.c's pattern), many times over. */
static void wgf_done(void *arg)
{
	wsr_waitgroup_done(arg);
}

static int wgfree_main(void *arg)
{
	int round;

	(void)arg;
	for (round = 0; round < 20000; round++) {
		wsr_waitgroup *wg = wsr_waitgroup_make();

		wsr_waitgroup_add(wg, 2);
		wsr_go(wgf_done, wg);
		wsr_go(wgf_done, wg);
		wsr_waitgroup_wait(wg);
		wsr_waitgroup_free(wg);
	}
	return 0;
}

WSR_TEST_TIMEOUT(waitgroup_freed_right_after_wait_p2, 30)
{
	st_run("waitgroup_freed_right_after_wait_p2", 2, wgfree_main, NULL, 25);
}
