/*
 * pingpong.c - two Gs bounce a counter over two unbuffered channels: every
 * message is a rendezvous that parks one G and readies the other.
 *
 * Usage: pingpong [N]  (default 6000000 messages, rounded down to even).
 * ops = messages sent; check = the counter at the end (= ops: each side adds
 * one before it sends). Mirrors bench/go/pingpong.go.
 *
 * Invariants: exactly one G holds the counter at any time.
 * Concurrency: the counter moves only through the channels; the result is
 *   read after the waitgroup wait.
 */
#include <stdint.h>

#include <wsr.h>

#include "bench.h"

struct pair {
	wsr_chan *ping, *pong;
	long half;   /* messages each side sends */
	long result; /* written by the pinger before waitgroup_done */
	wsr_waitgroup *wg;
};

static void pinger(void *arg)
{
	struct pair *p = arg;
	long v = 0, i;

	for (i = 0; i < p->half; i++) {
		v++;
		wsr_chan_send(p->ping, &v);
		wsr_chan_recv(p->pong, &v);
	}
	p->result = v;
	wsr_waitgroup_done(p->wg);
}

static void ponger(void *arg)
{
	struct pair *p = arg;
	long v, i;

	for (i = 0; i < p->half; i++) {
		wsr_chan_recv(p->ping, &v);
		v++;
		wsr_chan_send(p->pong, &v);
	}
	wsr_waitgroup_done(p->wg);
}

static int main_g(void *arg)
{
	long n = *(long *)arg;
	struct pair p = {wsr_chan_make(sizeof(long), 0), wsr_chan_make(sizeof(long), 0), n / 2, 0,
			 wsr_waitgroup_make()};
	int64_t t0, t1;

	t0 = bench_now_ns();
	wsr_waitgroup_add(p.wg, 2);
	wsr_go(pinger, &p);
	wsr_go(ponger, &p);
	wsr_waitgroup_wait(p.wg);
	t1 = bench_now_ns();
	wsr_chan_free(p.ping);
	wsr_chan_free(p.pong);
	wsr_waitgroup_free(p.wg);
	bench_report("pingpong", "wsr", wsr_gomaxprocs(), 2 * p.half, t1 - t0, (uint64_t)p.result,
		     "");
	return 0;
}

int main(int argc, char **argv)
{
	long n = bench_arg(argc, argv, 1, 6000000);

	return wsr_main(main_g, &n);
}
