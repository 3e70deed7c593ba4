/*
 * spawn_tree.c - fib(N) where every call is a G and each call's two results
 * travel back through its own buffered channel of capacity 2.
 *
 * Usage: spawn_tree [N]  (default 29). ops = Gs spawned = 2*fib(N+1) - 1,
 * check = fib(N). Mirrors bench/go/spawn_tree.go and bench/omp/spawn_tree.c.
 *
 * Invariants:
 *   - A call's argument block lives in its parent's frame, which stays alive
 *     until both children have sent (the parent is parked in recv until then).
 *   - A call frees its channel only after receiving both values, so no G
 *     waits on a freed channel.
 * Concurrency: all communication is through wsr channels; no shared state.
 */
#include <stdint.h>
#include <stdio.h>

#include <wsr.h>

#include "bench.h"

struct call {
	int n;
	wsr_chan *out; /* where this call sends its result */
};

static void fib_g(void *arg)
{
	struct call *c = arg;
	struct call a, b;
	wsr_chan *ch;
	long r, x, y;

	if (c->n < 2) {
		r = c->n;
		wsr_chan_send(c->out, &r);
		return;
	}
	ch = wsr_chan_make(sizeof(long), 2);
	if (ch == NULL) {
		fprintf(stderr, "spawn_tree: out of memory\n");
		exit(1);
	}
	a = (struct call){c->n - 1, ch};
	b = (struct call){c->n - 2, ch};
	wsr_go(fib_g, &a);
	wsr_go(fib_g, &b);
	wsr_chan_recv(ch, &x);
	wsr_chan_recv(ch, &y);
	wsr_chan_free(ch);
	r = x + y;
	wsr_chan_send(c->out, &r);
}

static int main_g(void *arg)
{
	int n = *(int *)arg;
	wsr_chan *out = wsr_chan_make(sizeof(long), 1);
	struct call root = {n, out};
	long r, a = 0, b = 1, i, t;
	int64_t t0, t1;

	t0 = bench_now_ns();
	wsr_go(fib_g, &root);
	wsr_chan_recv(out, &r);
	t1 = bench_now_ns();
	wsr_chan_free(out);
	for (i = 0; i < n + 1; i++) {
		t = a + b;
		a = b;
		b = t;
	}
	/* Now a = fib(n+1): fib(n) makes 2*fib(n+1) - 1 calls. */
	bench_report("spawn_tree", "wsr", wsr_gomaxprocs(), 2 * a - 1, t1 - t0, (uint64_t)r, "");
	return 0;
}

int main(int argc, char **argv)
{
	int n = (int)bench_arg(argc, argv, 1, 29);

	if (n > 40) {
		fprintf(stderr, "usage: spawn_tree [N]  (1 <= N <= 40)\n");
		return 2;
	}
	return wsr_main(main_g, &n);
}
