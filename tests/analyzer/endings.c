/*
 * endings.c - a libwsr program that ends in the way its argument names, for
 * the tests of how `wsr run` and the report tell how a program ended.
 *
 * Usage: endings MODE [N]
 *   exit N      a G calls exit(N) while other Gs run (wsr_main never returns)
 *   return N    wsr_main's function returns N (the usual teardown)
 *   deadlock    every G blocks on a channel nobody sends to: the runtime
 *               prints "all goroutines are asleep - deadlock!" and exits 2
 *   abort       a G calls abort(): killed by SIGABRT, as a crash is
 *   sleep N     sleeps N seconds in a G (the kill tests)
 * Each mode first prints "endings: MODE" on stdout, so a test can tell the
 * program's stdout from what `wsr run` prints.
 *
 * Invariants: deterministic apart from the scheduling itself; no mode reads
 *   input.
 * Concurrency: a few Gs; WSRMAXPROCS decides the Ps.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wsr.h>

static const char *mode;
static int n;
static wsr_chan *never;

static void spinner(void *arg)
{
	(void)arg;
	for (;;) {
		wsr_yield();
		wsr_sleep_ns(100000);
	}
}

static void blocker(void *arg)
{
	int v;

	(void)arg;
	wsr_chan_recv(never, &v);
}

static void ender(void *arg)
{
	(void)arg;
	wsr_sleep_ns(2000000);
	if (strcmp(mode, "exit") == 0)
		exit(n);
	abort();
}

static int main_g(void *arg)
{
	(void)arg;
	printf("endings: %s\n", mode);
	fflush(stdout);
	never = wsr_chan_make(sizeof(int), 0);
	if (strcmp(mode, "return") == 0) {
		for (int i = 0; i < 20; i++)
			wsr_yield();
		return n;
	}
	if (strcmp(mode, "sleep") == 0) {
		wsr_sleep_ns((int64_t)n * 1000000000);
		return 0;
	}
	if (strcmp(mode, "deadlock") == 0) {
		for (int i = 0; i < 3; i++)
			wsr_go(blocker, NULL);
		blocker(NULL);
		return 0;
	}
	/* exit, abort: other Gs keep the Ps busy while one G ends the process. */
	for (int i = 0; i < 3; i++)
		wsr_go(spinner, NULL);
	wsr_go(ender, NULL);
	blocker(NULL);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"exit", "return", "deadlock", "abort", "sleep"};
	bool known = false;

	if (argc < 2) {
		fprintf(stderr, "usage: endings exit|return|deadlock|abort|sleep [N]\n");
		return 64;
	}
	mode = argv[1];
	n = argc > 2 ? atoi(argv[2]) : 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= strcmp(mode, modes[i]) == 0;
	if (!known) {
		fprintf(stderr, "endings: unknown mode '%s'\n", mode);
		return 64;
	}
	return wsr_main(main_g, NULL);
}
