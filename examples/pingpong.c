/*
 * pingpong.c - two Gs bounce a counter over a pair of unbuffered channels.
 *
 * Schedule it provokes: the tightest hand-off there is. Each send finds the
 * partner parked on the other channel and readies it into runnext, where it
 * inherits the time slice, so the pair runs as a unit on one P (the reason
 * runnext exists) and the other Ps stay idle: expect the same order of
 * throughput at WSRMAXPROCS=1 and 2, and no steals.
 * Usage: pingpong [N]  (default 1000000 round trips).
 * Prints the final counter (2*N: each side adds 1 per trip) and round trips/s;
 * exits 1 if the counter is wrong.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <wsr.h>

struct pair {
	wsr_chan *ping, *pong;
	long n;
	wsr_waitgroup *done;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Receives on ping, adds one, sends it back on pong, until ping closes. */
static void ponger(void *arg)
{
	struct pair *pp = arg;
	int64_t v;

	while (wsr_chan_recv(pp->ping, &v) == 1) {
		v++;
		if (wsr_chan_send(pp->pong, &v) != 0)
			break;
	}
	wsr_waitgroup_done(pp->done);
}

static int main_g(void *arg)
{
	long n = *(long *)arg, i;
	struct pair pp;
	int64_t v = 0;
	double t0, dt;

	pp.ping = wsr_chan_make(sizeof(int64_t), 0);
	pp.pong = wsr_chan_make(sizeof(int64_t), 0);
	pp.n = n;
	pp.done = wsr_waitgroup_make();
	if (pp.ping == NULL || pp.pong == NULL || pp.done == NULL) {
		fprintf(stderr, "pingpong: out of memory\n");
		return 1;
	}
	wsr_waitgroup_add(pp.done, 1);
	wsr_go(ponger, &pp);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		v++;
		if (wsr_chan_send(pp.ping, &v) != 0 || wsr_chan_recv(pp.pong, &v) != 1) {
			fprintf(stderr, "pingpong: channel closed early\n");
			return 1;
		}
	}
	dt = now_s() - t0;
	wsr_chan_close(pp.ping);
	wsr_waitgroup_wait(pp.done);
	wsr_waitgroup_free(pp.done);
	wsr_chan_free(pp.ping);
	wsr_chan_free(pp.pong);
	printf("gomaxprocs = %d\n", wsr_gomaxprocs());
	printf("round trips = %ld\n", n);
	printf("counter = %" PRId64 "\n", v);
	printf("round trips/s = %.0f\n", dt > 0 ? (double)n / dt : 0.0);
	if (v != 2 * (int64_t)n) {
		fprintf(stderr, "pingpong: counter %" PRId64 ", want %" PRId64 "\n", v,
			2 * (int64_t)n);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;

	if (n < 0) {
		fprintf(stderr, "usage: pingpong [N]\n");
		return 2;
	}
	return wsr_main(main_g, &n);
}
