/*
 * fid-sched.c - the fidelity harness's scheduler workload (tests/fidelity/README.md):
 * in about 150 ms it makes the runtime emit every scheduling event of the catalog that
 * does not need a blocking call or the poller.
 *
 * Phases, in order, each ended by a waitgroup so the next starts from a quiet runtime:
 *   1. spawn burst: the main G spawns BURST Gs without yielding (the ring holds 256:
 *      runq_spill, globrunq_put, then globrunq_get; at 2+ Ps steal, spin_*, p_busy);
 *      each spawned G yields twice (g_stop yield, runnext/local runs).
 *   2. channels: a ping-pong pair over unbuffered channels (g_stop chan, g_ready,
 *      runnext) and a buffered producer/consumer.
 *   3. select: one G selects over two channels fed by two senders, with a
 *      non-blocking select (default case) before each blocking one (g_stop select).
 *   4. mutex: MUTEXG Gs contend one mutex and yield inside it (g_stop mutex).
 *   5. timers: Gs sleep 1-3 ms (g_stop sleep, timer_fire, the Ps go idle: p_idle,
 *      m_park, m_unpark).
 *   6. preemption: one G computes for 60 ms calling only wsr_preempt_point(), while
 *      another G waits runnable: sysmon's preempt, g_stop preempt, globrunq_put.
 * Invariants: the result it prints is a checksum of every phase; exit 1 if wrong.
 * Concurrency: all state is per phase, shared through channels, a mutex and atomics.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <wsr.h>

#define BURST 700
#define PINGS 300
#define MUTEXG 8
#define MUTEXN 60
#define SLEEPERS 6

static _Atomic long ran;
static wsr_waitgroup *wg;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void burst_g(void *arg)
{
	(void)arg;
	wsr_yield();
	wsr_yield();
	atomic_fetch_add(&ran, 1);
	wsr_waitgroup_done(wg);
}

struct pair {
	wsr_chan *ping, *pong;
};

static void ponger(void *arg)
{
	struct pair *pp = arg;
	int64_t v;

	while (wsr_chan_recv(pp->ping, &v) == 1) {
		v++;
		wsr_chan_send(pp->pong, &v);
	}
	wsr_waitgroup_done(wg);
}

static void producer(void *arg)
{
	wsr_chan *c = arg;
	int64_t i;

	for (i = 1; i <= PINGS; i++)
		wsr_chan_send(c, &i);
	wsr_chan_close(c);
	wsr_waitgroup_done(wg);
}

static void consumer(void *arg)
{
	wsr_chan *c = arg;
	int64_t v, sum = 0;

	while (wsr_chan_recv(c, &v) == 1)
		sum += v;
	atomic_fetch_add(&ran, sum);
	wsr_waitgroup_done(wg);
}

struct sel {
	wsr_chan *a, *b;
};

static void sel_sender(void *arg)
{
	wsr_chan *c = arg;
	int64_t i;

	for (i = 0; i < PINGS / 3; i++) {
		wsr_chan_send(c, &i);
		if (i % 16 == 0)
			wsr_sleep_ns(100000);
	}
	wsr_waitgroup_done(wg);
}

static void selector(void *arg)
{
	struct sel *s = arg;
	int64_t va, vb;
	int got = 0;

	while (got < 2 * (PINGS / 3)) {
		wsr_select_case cs[2] = {{s->a, WSR_RECV, &va, 0}, {s->b, WSR_RECV, &vb, 0}};

		if (wsr_select(cs, 2, 0) < 0 && wsr_select(cs, 2, 1) < 0)
			break;
		got++;
	}
	atomic_fetch_add(&ran, got);
	wsr_waitgroup_done(wg);
}

static wsr_mutex *mu;
static long guarded;

static void locker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < MUTEXN; i++) {
		wsr_mutex_lock(mu);
		guarded++;
		if (i % 4 == 0)
			wsr_yield();
		wsr_mutex_unlock(mu);
	}
	wsr_waitgroup_done(wg);
}

static void sleeper(void *arg)
{
	long k = (long)(intptr_t)arg;
	int i;

	for (i = 0; i < 3; i++)
		wsr_sleep_ns(1000000 * (1 + (k + i) % 3));
	atomic_fetch_add(&ran, 1);
	wsr_waitgroup_done(wg);
}

static void hog(void *arg)
{
	int64_t end = now_ns() + 60 * 1000000;
	volatile uint64_t x = 0;

	(void)arg;
	while (now_ns() < end) {
		x = x * 6364136223846793005u + 1;
		wsr_preempt_point();
	}
	atomic_fetch_add(&ran, 1);
	wsr_waitgroup_done(wg);
}

static void bystander(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ran, 1);
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	struct pair pp;
	struct sel s;
	wsr_chan *buf;
	long want = 0, i;
	int64_t v = 0;

	(void)arg;
	wg = wsr_waitgroup_make();
	mu = wsr_mutex_make();

	wsr_waitgroup_add(wg, BURST);
	for (i = 0; i < BURST; i++)
		wsr_go(burst_g, NULL);
	wsr_waitgroup_wait(wg);
	want += BURST;

	pp.ping = wsr_chan_make(sizeof(int64_t), 0);
	pp.pong = wsr_chan_make(sizeof(int64_t), 0);
	buf = wsr_chan_make(sizeof(int64_t), 8);
	wsr_waitgroup_add(wg, 3);
	wsr_go(ponger, &pp);
	wsr_go(producer, buf);
	wsr_go(consumer, buf);
	for (i = 0; i < PINGS; i++) {
		wsr_chan_send(pp.ping, &v);
		wsr_chan_recv(pp.pong, &v);
	}
	wsr_chan_close(pp.ping);
	wsr_waitgroup_wait(wg);
	want += (long)PINGS * (PINGS + 1) / 2;

	s.a = wsr_chan_make(sizeof(int64_t), 0);
	s.b = wsr_chan_make(sizeof(int64_t), 0);
	wsr_waitgroup_add(wg, 3);
	wsr_go(sel_sender, s.a);
	wsr_go(sel_sender, s.b);
	wsr_go(selector, &s);
	wsr_waitgroup_wait(wg);
	want += 2 * (PINGS / 3);

	wsr_waitgroup_add(wg, MUTEXG);
	for (i = 0; i < MUTEXG; i++)
		wsr_go(locker, NULL);
	wsr_waitgroup_wait(wg);

	wsr_waitgroup_add(wg, SLEEPERS);
	for (i = 0; i < SLEEPERS; i++)
		wsr_go(sleeper, (void *)(intptr_t)i);
	wsr_waitgroup_wait(wg);
	want += SLEEPERS;

	wsr_waitgroup_add(wg, 2);
	wsr_go(bystander, NULL);
	wsr_go(hog, NULL);
	wsr_waitgroup_wait(wg);
	want += 2;

	wsr_chan_free(pp.ping);
	wsr_chan_free(pp.pong);
	wsr_chan_free(buf);
	wsr_chan_free(s.a);
	wsr_chan_free(s.b);
	wsr_mutex_free(mu);
	wsr_waitgroup_free(wg);
	printf("fid-sched: ran %ld (want %ld), guarded %ld (want %d), v %lld (want %d)\n",
	       atomic_load(&ran), want, guarded, MUTEXG * MUTEXN, (long long)v, PINGS);
	return atomic_load(&ran) == want && guarded == MUTEXG * MUTEXN && v == PINGS ? 0 : 1;
}

int main(void)
{
	return wsr_main(main_g, NULL);
}
