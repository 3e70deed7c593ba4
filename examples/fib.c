/*
 * fib.c - a spawn tree: fib(n) where every call is a G joined by a waitgroup.
 *
 * Schedule it provokes: a burst of short Gs on one P that the other Ps must
 * steal (half-steals of fresh subtrees), lots of runnext hand-offs (each
 * spawned G goes to runnext), and Ms parking as the tree drains.
 * Usage: fib [N]  (default 27). Prints fib(N) and a checksum of the G count.
 */
#include <stdio.h>
#include <stdlib.h>

#include <wsr.h>

struct call {
	int n;
	long result;
};

static void fib_g(void *arg);

static long fib_spawn(int n)
{
	struct call a = {n - 1, 0}, b = {n - 2, 0};
	wsr_waitgroup *wg;

	if (n < 2)
		return n;
	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, 2);
	/* The waitgroup pointer travels in the call; fib_g signals it. */
	struct {
		struct call *c;
		wsr_waitgroup *wg;
	} ja = {&a, wg}, jb = {&b, wg};
	wsr_go(fib_g, &ja);
	wsr_go(fib_g, &jb);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	return a.result + b.result;
}

static void fib_g(void *arg)
{
	struct {
		struct call *c;
		wsr_waitgroup *wg;
	} *j = arg;

	j->c->result = fib_spawn(j->c->n);
	wsr_waitgroup_done(j->wg);
}

static int main_g(void *arg)
{
	int n = *(int *)arg;
	long r = fib_spawn(n);
	/* fib(n) spawns 2*(fib(n+1) - 1) Gs: a checksum of the tree. */
	long a = 0, b = 1, i;

	for (i = 0; i < n + 1; i++) {
		long t = a + b;

		a = b;
		b = t;
	}
	printf("fib(%d) = %ld\nspawned = %ld\n", n, r, 2 * (a - 1));
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 27;

	if (n < 0 || n > 40) {
		fprintf(stderr, "usage: fib [N]  (0 <= N <= 40)\n");
		return 2;
	}
	return wsr_main(main_g, &n);
}
