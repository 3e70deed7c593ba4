/*
 * test-chan.c - channel and select semantics (Go: chan_test.go, select
 * tests in proc_test.go): buffered and unbuffered send/recv, close (send on
 * closed -> -1, recv drains then 0, close wakes every waiter), select with
 * and without default, select's fair choice among ready cases.
 *
 * Invariants: every case runs its runtime under st_run's watchdog and uses
 *   fixed seeds; nothing asserts on elapsed time.
 * Concurrency: the runtime's; shared counters in the cases are atomics.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

/* ---- unbuffered ---- */

struct xfer {
	wsr_chan *c;
	long n;
	_Atomic long sum;
	wsr_waitgroup *wg;
};

static void sender(void *arg)
{
	struct xfer *x = arg;
	long i;

	for (i = 1; i <= x->n; i++)
		if (wsr_chan_send(x->c, &i) != 0)
			break;
	wsr_waitgroup_done(x->wg);
}

static int unbuffered_main(void *arg)
{
	struct xfer x = {wsr_chan_make(sizeof(long), 0), 10000, 0, wsr_waitgroup_make()};
	long v, i, want = 0;

	(void)arg;
	wsr_waitgroup_add(x.wg, 1);
	wsr_go(sender, &x);
	for (i = 1; i <= x.n; i++) {
		ASSERT_EQ(wsr_chan_recv(x.c, &v), 1);
		/* FIFO: values arrive in order. */
		ASSERT_EQ(v, i);
		want += v;
	}
	wsr_waitgroup_wait(x.wg);
	wsr_chan_close(x.c);
	ASSERT_EQ(wsr_chan_recv(x.c, &v), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(wsr_chan_send(x.c, &v), -1);
	wsr_chan_free(x.c);
	wsr_waitgroup_free(x.wg);
	ASSERT_EQ(want, x.n * (x.n + 1) / 2);
	return 0;
}

WSR_TEST_TIMEOUT(unbuffered_in_order_p1, 30)
{
	st_run("unbuffered_in_order_p1", 1, unbuffered_main, NULL, 25);
}

WSR_TEST_TIMEOUT(unbuffered_in_order_p2, 30)
{
	st_run("unbuffered_in_order_p2", 2, unbuffered_main, NULL, 25);
}

/* An unbuffered send does not complete before a receiver takes the value. */
struct rendezvous {
	wsr_chan *c;
	_Atomic int sent, received;
};

static void rv_sender(void *arg)
{
	struct rendezvous *r = arg;
	int v = 7;

	ASSERT_EQ(wsr_chan_send(r->c, &v), 0);
	ASSERT_EQ(atomic_load(&r->received), 1);
	atomic_store(&r->sent, 1);
}

static int rendezvous_main(void *arg)
{
	struct rendezvous r = {wsr_chan_make(sizeof(int), 0), 0, 0};
	int v = 0, i;

	(void)arg;
	wsr_go(rv_sender, &r);
	for (i = 0; i < 100; i++)
		wsr_sleep_ns(100000);
	ASSERT_EQ(atomic_load(&r.sent), 0);
	atomic_store(&r.received, 1);
	ASSERT_EQ(wsr_chan_recv(r.c, &v), 1);
	ASSERT_EQ(v, 7);
	while (!atomic_load(&r.sent))
		wsr_yield();
	wsr_chan_free(r.c);
	return 0;
}

WSR_TEST_TIMEOUT(unbuffered_send_waits_for_receiver, 30)
{
	st_run("unbuffered_send_waits_for_receiver", 2, rendezvous_main, NULL, 25);
}

/* ---- buffered ---- */

static int buffered_main(void *arg)
{
	wsr_chan *c = wsr_chan_make(sizeof(int), 3);
	wsr_select_case sc;
	int v, i;

	(void)arg;
	/* Sends up to the capacity do not block; the fourth would. */
	for (i = 1; i <= 3; i++)
		ASSERT_EQ(wsr_chan_send(c, &i), 0);
	v = 4;
	sc.c = c;
	sc.dir = WSR_SEND;
	sc.elem = &v;
	ASSERT_EQ(wsr_select(&sc, 1, 0), -1);
	/* Close keeps the buffered values: recv drains them in order, then 0. */
	wsr_chan_close(c);
	ASSERT_EQ(wsr_chan_send(c, &v), -1);
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(wsr_chan_recv(c, &v), 1);
		ASSERT_EQ(v, i);
	}
	v = 99;
	ASSERT_EQ(wsr_chan_recv(c, &v), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(wsr_chan_recv(c, NULL), 0);
	wsr_chan_free(c);
	return 0;
}

WSR_TEST_TIMEOUT(buffered_capacity_close_drains, 30)
{
	st_run("buffered_capacity_close_drains", 1, buffered_main, NULL, 25);
}

/* Several producers and consumers through a small buffer: nothing lost or duplicated. */
struct mpmc {
	wsr_chan *c;
	wsr_waitgroup *prod, *cons;
	_Atomic long sum, count;
	long per;
};

static void mpmc_prod(void *arg)
{
	struct mpmc *m = arg;
	long i;

	for (i = 1; i <= m->per; i++)
		ASSERT_EQ(wsr_chan_send(m->c, &i), 0);
	wsr_waitgroup_done(m->prod);
}

static void mpmc_cons(void *arg)
{
	struct mpmc *m = arg;
	long v;

	while (wsr_chan_recv(m->c, &v) == 1) {
		m->sum += v;
		m->count++;
	}
	wsr_waitgroup_done(m->cons);
}

static int mpmc_main(void *arg)
{
	struct mpmc m = {wsr_chan_make(sizeof(long), 4),
			 wsr_waitgroup_make(),
			 wsr_waitgroup_make(),
			 0,
			 0,
			 5000};
	int i, np = 4, nc = 4;

	(void)arg;
	wsr_waitgroup_add(m.prod, np);
	wsr_waitgroup_add(m.cons, nc);
	for (i = 0; i < nc; i++)
		wsr_go(mpmc_cons, &m);
	for (i = 0; i < np; i++)
		wsr_go(mpmc_prod, &m);
	wsr_waitgroup_wait(m.prod);
	wsr_chan_close(m.c);
	wsr_waitgroup_wait(m.cons);
	ASSERT_EQ(m.count, np * m.per);
	ASSERT_EQ(m.sum, np * m.per * (m.per + 1) / 2);
	wsr_chan_free(m.c);
	wsr_waitgroup_free(m.prod);
	wsr_waitgroup_free(m.cons);
	return 0;
}

WSR_TEST_TIMEOUT(buffered_many_producers_consumers, 30)
{
	st_run("buffered_many_producers_consumers", 2, mpmc_main, NULL, 25);
}

/* ---- close wakes every waiter ---- */

struct closewake {
	wsr_chan *c;
	wsr_waitgroup *parked, *done;
	_Atomic int recv_zero, send_closed;
};

static void cw_recv(void *arg)
{
	struct closewake *w = arg;
	int v = 5;

	wsr_waitgroup_done(w->parked);
	if (wsr_chan_recv(w->c, &v) == 0 && v == 0)
		w->recv_zero++;
	wsr_waitgroup_done(w->done);
}

static void cw_send(void *arg)
{
	struct closewake *w = arg;
	int v = 5;

	wsr_waitgroup_done(w->parked);
	if (wsr_chan_send(w->c, &v) == -1)
		w->send_closed++;
	wsr_waitgroup_done(w->done);
}

static int closewake_main(void *arg)
{
	struct closewake r = {wsr_chan_make(sizeof(int), 0), wsr_waitgroup_make(),
			      wsr_waitgroup_make(), 0, 0};
	struct closewake s = {wsr_chan_make(sizeof(int), 0), wsr_waitgroup_make(),
			      wsr_waitgroup_make(), 0, 0};
	int i, n = 100;

	(void)arg;
	wsr_waitgroup_add(r.parked, n);
	wsr_waitgroup_add(r.done, n);
	wsr_waitgroup_add(s.parked, n);
	wsr_waitgroup_add(s.done, n);
	for (i = 0; i < n; i++) {
		wsr_go(cw_recv, &r);
		wsr_go(cw_send, &s);
	}
	wsr_waitgroup_wait(r.parked);
	wsr_waitgroup_wait(s.parked);
	/* Let them all reach the channel and park. */
	for (i = 0; i < 20; i++)
		wsr_sleep_ns(1000000);
	wsr_chan_close(r.c);
	wsr_chan_close(s.c);
	wsr_waitgroup_wait(r.done);
	wsr_waitgroup_wait(s.done);
	ASSERT_EQ(r.recv_zero, n);
	ASSERT_EQ(s.send_closed, n);
	wsr_chan_free(r.c);
	wsr_chan_free(s.c);
	wsr_waitgroup_free(r.parked);
	wsr_waitgroup_free(r.done);
	wsr_waitgroup_free(s.parked);
	wsr_waitgroup_free(s.done);
	return 0;
}

WSR_TEST_TIMEOUT(close_wakes_every_waiter_p1, 30)
{
	st_run("close_wakes_every_waiter_p1", 1, closewake_main, NULL, 25);
}

WSR_TEST_TIMEOUT(close_wakes_every_waiter_p2, 30)
{
	st_run("close_wakes_every_waiter_p2", 2, closewake_main, NULL, 25);
}

/* Close also wakes a select parked on the channel (ok = 0). */
struct selclose {
	wsr_chan *a, *b;
	_Atomic int fired, ok;
	wsr_waitgroup *done;
};

static void sc_select(void *arg)
{
	struct selclose *s = arg;
	int va, vb;
	wsr_select_case cs[2] = {{s->a, WSR_RECV, &va, 0}, {s->b, WSR_RECV, &vb, 0}};
	int k = wsr_select(cs, 2, 1);

	s->fired = k;
	s->ok = cs[k].ok;
	wsr_waitgroup_done(s->done);
}

static int selclose_main(void *arg)
{
	struct selclose s = {wsr_chan_make(sizeof(int), 0), wsr_chan_make(sizeof(int), 0), -1, -1,
			     wsr_waitgroup_make()};
	int i;

	(void)arg;
	wsr_waitgroup_add(s.done, 1);
	wsr_go(sc_select, &s);
	for (i = 0; i < 10; i++)
		wsr_sleep_ns(500000);
	wsr_chan_close(s.b);
	wsr_waitgroup_wait(s.done);
	ASSERT_EQ(s.fired, 1);
	ASSERT_EQ(s.ok, 0);
	wsr_chan_free(s.a);
	wsr_chan_free(s.b);
	wsr_waitgroup_free(s.done);
	return 0;
}

WSR_TEST_TIMEOUT(close_wakes_select, 30)
{
	st_run("close_wakes_select", 2, selclose_main, NULL, 25);
}

/* ---- select ---- */

static int select_default_main(void *arg)
{
	wsr_chan *u = wsr_chan_make(sizeof(int), 0), *b = wsr_chan_make(sizeof(int), 1);
	int v = 1, w = 0;
	wsr_select_case cs[3] = {
		{u, WSR_RECV, &w, 0}, {u, WSR_SEND, &v, 0}, {NULL, WSR_RECV, &w, 0}};
	wsr_select_case one;

	(void)arg;
	/* Nothing ready (no partner, nil case never fires): -1 at once. */
	ASSERT_EQ(wsr_select(cs, 3, 0), -1);
	ASSERT_EQ(wsr_select(cs, 0, 0), -1);
	/* A buffered channel with room: the send case fires. */
	one.c = b;
	one.dir = WSR_SEND;
	one.elem = &v;
	ASSERT_EQ(wsr_select(&one, 1, 0), 0);
	ASSERT_EQ(one.ok, 1);
	/* Full now: the send is not ready; the recv is. */
	ASSERT_EQ(wsr_select(&one, 1, 0), -1);
	one.dir = WSR_RECV;
	one.elem = &w;
	ASSERT_EQ(wsr_select(&one, 1, 0), 0);
	ASSERT_EQ(one.ok, 1);
	ASSERT_EQ(w, 1);
	ASSERT_EQ(wsr_select(&one, 1, 0), -1);
	/* Closed: a recv case fires with ok = 0, a send case with ok = 0. */
	wsr_chan_close(b);
	w = 3;
	ASSERT_EQ(wsr_select(&one, 1, 0), 0);
	ASSERT_EQ(one.ok, 0);
	ASSERT_EQ(w, 0);
	one.dir = WSR_SEND;
	one.elem = &v;
	ASSERT_EQ(wsr_select(&one, 1, 0), 0);
	ASSERT_EQ(one.ok, 0);
	wsr_chan_free(u);
	wsr_chan_free(b);
	return 0;
}

WSR_TEST_TIMEOUT(select_with_default, 30)
{
	st_run("select_with_default", 1, select_default_main, NULL, 25);
}

/* Select picks uniformly among ready cases (Go: TestSelectFairness). With
 * 4 always-ready cases and 40,000 rounds each count is Binomial(40000, 1/4):
 * mean 10,000, sd 87; the bounds below are 23 sd away. */
static int select_fair_main(void *arg)
{
	enum {
		K = 4,
		ROUNDS = 40000
	};

	wsr_chan *cs[K];
	wsr_select_case sc[K];
	long counts[K] = {0};
	int v[K], i, k;

	(void)arg;
	for (k = 0; k < K; k++) {
		cs[k] = wsr_chan_make(sizeof(int), 1);
		ASSERT_EQ(wsr_chan_send(cs[k], &k), 0);
		sc[k].c = cs[k];
		sc[k].dir = WSR_RECV;
		sc[k].elem = &v[k];
	}
	for (i = 0; i < ROUNDS; i++) {
		k = wsr_select(sc, K, 1);
		ASSERT(k >= 0 && k < K);
		ASSERT_EQ(v[k], k);
		counts[k]++;
		ASSERT_EQ(wsr_chan_send(cs[k], &k), 0);
	}
	for (k = 0; k < K; k++) {
		ASSERT_GT(counts[k], 8000);
		ASSERT_LT(counts[k], 12000);
		wsr_chan_free(cs[k]);
	}
	return 0;
}

WSR_TEST_TIMEOUT(select_fair_among_ready, 30)
{
	st_run("select_fair_among_ready", 1, select_fair_main, NULL, 25);
}

/* A parked select is woken by a sender on any of its channels, exactly once,
 * and the other cases are withdrawn (a later send on them finds no receiver). */
struct selwake {
	wsr_chan *c[3];
	wsr_waitgroup *done;
	int got, idx;
};

static void sw_select(void *arg)
{
	struct selwake *s = arg;
	int v0 = -1, v1 = -1, v2 = -1;
	wsr_select_case cs[3] = {{s->c[0], WSR_RECV, &v0, 0},
				 {s->c[1], WSR_RECV, &v1, 0},
				 {s->c[2], WSR_RECV, &v2, 0}};

	s->idx = wsr_select(cs, 3, 1);
	s->got = s->idx == 0 ? v0 : s->idx == 1 ? v1 : v2;
	wsr_waitgroup_done(s->done);
}

static int selwake_main(void *arg)
{
	struct selwake s;
	wsr_select_case probe;
	int round, k, v;
	unsigned long long seed = 42;

	(void)arg;
	for (k = 0; k < 3; k++)
		s.c[k] = wsr_chan_make(sizeof(int), 0);
	s.done = wsr_waitgroup_make();
	for (round = 0; round < 300; round++) {
		int which = (int)(st_rand(&seed) % 3);

		wsr_waitgroup_add(s.done, 1);
		wsr_go(sw_select, &s);
		v = 1000 + round;
		ASSERT_EQ(wsr_chan_send(s.c[which], &v), 0);
		wsr_waitgroup_wait(s.done);
		ASSERT_EQ(s.idx, which);
		ASSERT_EQ(s.got, v);
		/* No sudog left behind on any channel. */
		for (k = 0; k < 3; k++) {
			probe.c = s.c[k];
			probe.dir = WSR_SEND;
			probe.elem = &v;
			ASSERT_EQ(wsr_select(&probe, 1, 0), -1);
		}
	}
	for (k = 0; k < 3; k++)
		wsr_chan_free(s.c[k]);
	wsr_waitgroup_free(s.done);
	return 0;
}

WSR_TEST_TIMEOUT(select_parked_woken_once, 30)
{
	st_run("select_parked_woken_once", 2, selwake_main, NULL, 25);
}

/* Two selects that both send and receive on the same pair of channels, in
 * opposite orders, always pair up (lock ordering, no deadlock). */
struct selpair {
	wsr_chan *a, *b;
	long n;
	wsr_waitgroup *done;
	_Atomic long moved;
};

static void sp_side(void *arg)
{
	struct selpair *s = arg;
	long i, out = 1, in = 0;
	wsr_select_case cs[2] = {{s->a, WSR_SEND, &out, 0}, {s->b, WSR_RECV, &in, 0}};
	wsr_select_case ds[2] = {{s->b, WSR_SEND, &out, 0}, {s->a, WSR_RECV, &in, 0}};
	static _Atomic int who;
	wsr_select_case *mine = atomic_fetch_add(&who, 1) == 0 ? cs : ds;

	for (i = 0; i < s->n; i++) {
		int k = wsr_select(mine, 2, 1);

		ASSERT(k == 0 || k == 1);
		ASSERT_EQ(mine[k].ok, 1);
		s->moved++;
	}
	wsr_waitgroup_done(s->done);
}

static int selpair_main(void *arg)
{
	struct selpair s = {wsr_chan_make(sizeof(long), 0), wsr_chan_make(sizeof(long), 0), 20000,
			    wsr_waitgroup_make(), 0};

	(void)arg;
	wsr_waitgroup_add(s.done, 2);
	wsr_go(sp_side, &s);
	wsr_go(sp_side, &s);
	wsr_waitgroup_wait(s.done);
	ASSERT_EQ(s.moved, 2 * s.n);
	wsr_chan_free(s.a);
	wsr_chan_free(s.b);
	wsr_waitgroup_free(s.done);
	return 0;
}

WSR_TEST_TIMEOUT(select_vs_select_pairs_up, 30)
{
	st_run("select_vs_select_pairs_up", 2, selpair_main, NULL, 25);
}

/* ---- freeing a channel right after a select on it completed ----
 * (issue 17). Once a G's operation on c has returned, the select it paired
 * with no longer refers to c: the partner may free c at once. At P=1 the
 * order is fixed: the select G parks, main completes the case (the select G
 * goes to runnext), frees the channel and yields to it. Before the fix the
 * woken G re-locked the freed channel (ASan: heap-use-after-free; glibc:
 * the freed lock word is non-zero and the G waits on it for ever). */
enum selfree_how { SF_RECV_FROM_SEND, SF_SEND_TO_DUP_RECV, SF_CLOSE, SF_TWO_CHANS };

struct selfree {
	enum selfree_how how;
	wsr_chan *c, *d;
	_Atomic int parked, fired, ok;
	int got;
};

static void sf_select(void *arg)
{
	struct selfree *s = arg;
	int v = 42, w1 = 0, w2 = 0, k;
	wsr_select_case one = {s->c, WSR_SEND, &v, 0};
	/* The same channel twice (Go allows it): only one case fires, and the
	 * other's sudog must not stay on the channel after the partner is done. */
	wsr_select_case dup[2] = {{s->c, WSR_RECV, &w1, 0}, {s->c, WSR_RECV, &w2, 0}};
	wsr_select_case two[2] = {{s->d, WSR_RECV, &w1, 0}, {s->c, WSR_SEND, &v, 0}};

	s->parked = 1;
	switch (s->how) {
	case SF_RECV_FROM_SEND:
		k = wsr_select(&one, 1, 1);
		s->ok = one.ok;
		break;
	case SF_SEND_TO_DUP_RECV:
		k = wsr_select(dup, 2, 1);
		s->ok = dup[k].ok;
		s->got = w1 + w2;
		break;
	case SF_CLOSE:
		one.dir = WSR_RECV;
		one.elem = &w1;
		k = wsr_select(&one, 1, 1);
		s->ok = one.ok;
		break;
	default:
		k = wsr_select(two, 2, 1);
		s->ok = two[k].ok;
		break;
	}
	s->fired = k;
}

static int selfree_main(void *arg)
{
	struct selfree s = {(enum selfree_how)(intptr_t)arg, wsr_chan_make(sizeof(int), 0),
			    wsr_chan_make(sizeof(int), 0), 0, -1, -1, 0};
	int v = 0, i;

	wsr_go(sf_select, &s);
	/* At P=1 the select G runs (and parks) at main's first yield. */
	while (!s.parked)
		wsr_yield();
	switch (s.how) {
	case SF_RECV_FROM_SEND:
	case SF_TWO_CHANS:
		ASSERT_EQ(wsr_chan_recv(s.c, &v), 1);
		ASSERT_EQ(v, 42);
		break;
	case SF_SEND_TO_DUP_RECV:
		v = 7;
		ASSERT_EQ(wsr_chan_send(s.c, &v), 0);
		break;
	case SF_CLOSE:
		wsr_chan_close(s.c);
		break;
	}
	/* Our operation returned: the select is done with c. */
	wsr_chan_free(s.c);
	for (i = 0; i < 100 && s.fired < 0; i++)
		wsr_yield();
	/* Two cases on one channel: either may fire (Go's select picks among
	 * them at random, and so does wsr's: they are queued in poll order). */
	if (s.how == SF_SEND_TO_DUP_RECV)
		ASSERT(s.fired == 0 || s.fired == 1);
	else
		ASSERT_EQ(s.fired, s.how == SF_TWO_CHANS ? 1 : 0);
	ASSERT_EQ(s.ok, s.how == SF_CLOSE ? 0 : 1);
	if (s.how == SF_SEND_TO_DUP_RECV)
		ASSERT_EQ(s.got, 7);
	/* The other channel of a select is free to go once it has returned. */
	wsr_chan_free(s.d);
	return 0;
}

WSR_TEST_TIMEOUT(select_partner_frees_chan_after_send_case_p1, 30)
{
	st_run("select_partner_frees_chan_after_send_case_p1", 1, selfree_main,
	       (void *)(intptr_t)SF_RECV_FROM_SEND, 10);
}

WSR_TEST_TIMEOUT(select_partner_frees_chan_after_dup_recv_cases_p1, 30)
{
	st_run("select_partner_frees_chan_after_dup_recv_cases_p1", 1, selfree_main,
	       (void *)(intptr_t)SF_SEND_TO_DUP_RECV, 10);
}

WSR_TEST_TIMEOUT(select_closer_frees_chan_p1, 30)
{
	st_run("select_closer_frees_chan_p1", 1, selfree_main, (void *)(intptr_t)SF_CLOSE, 10);
}

WSR_TEST_TIMEOUT(select_partner_frees_one_of_two_chans_p1, 30)
{
	st_run("select_partner_frees_one_of_two_chans_p1", 1, selfree_main,
	       (void *)(intptr_t)SF_TWO_CHANS, 10);
}
