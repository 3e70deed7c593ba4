/*
 * app.c - the sample program of the CI recipes (docs/ci.md): a parallel
 * reduction, built against an installed libwsr as a user's program would be
 * (`cc app.c $(pkg-config --cflags --libs wsr)`), not inside the wsr tree.
 *
 * Usage: app [CHUNKS]  (default 400). The main G spawns CHUNKS worker Gs; each
 * sums its slice of 1..CHUNKS*SLICE and sends the partial sum on a buffered
 * channel; the main G receives CHUNKS sums and checks the total against
 * n(n+1)/2. Prints the total; exit 0 when it is right, 1 when not, 2 on a
 * bad argument.
 * Invariants: the result does not depend on the schedule; CHUNKS Gs are
 *   created besides the main G, so the trace's G count is CHUNKS + 1.
 * Concurrency: the workers share only the channel and the waitgroup that
 *   tells the main G when the last send has returned (then it frees both).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <wsr.h>

#define SLICE 20000

static wsr_chan *sums;
static wsr_waitgroup *wg;

static void worker(void *arg)
{
	uint64_t first = (uint64_t)(uintptr_t)arg * SLICE + 1, s = 0;

	for (uint64_t i = first; i < first + SLICE; i++)
		s += i;
	wsr_chan_send(sums, &s);
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	long chunks = *(long *)arg;
	uint64_t total = 0, s, n = (uint64_t)chunks * SLICE;

	sums = wsr_chan_make(sizeof(uint64_t), (size_t)chunks);
	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, chunks);
	for (long i = 0; i < chunks; i++)
		wsr_go(worker, (void *)(uintptr_t)i);
	for (long i = 0; i < chunks; i++) {
		wsr_chan_recv(sums, &s);
		total += s;
	}
	wsr_waitgroup_wait(wg); /* every send has returned: nobody uses sums now */
	wsr_waitgroup_free(wg);
	wsr_chan_free(sums);
	printf("sum(1..%" PRIu64 ") = %" PRIu64 "\n", n, total);
	return total == n * (n + 1) / 2 ? 0 : 1;
}

int main(int argc, char **argv)
{
	long chunks = argc > 1 ? atol(argv[1]) : 400;

	if (chunks <= 0 || chunks > 100000) {
		fprintf(stderr, "usage: app [CHUNKS]  (1 <= CHUNKS <= 100000)\n");
		return 2;
	}
	return wsr_main(main_g, &chunks);
}
