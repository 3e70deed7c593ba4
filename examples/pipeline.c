/*
 * pipeline.c - fan-out / fan-in with select: a source G spreads N jobs over L
 * buffered lanes (a blocking select over the lanes' send cases: whichever
 * has room), W worker Gs drain the lanes and hash each job, and the main G
 * merges the W result channels with a select over their receive cases.
 *
 * Schedule it provokes: many-to-many channel traffic where a G is woken by
 * whichever partner is ready first; selects that park on several channels at
 * once and are won by one waker; CPU work between hand-offs, so the other Ps
 * steal workers and the result traffic crosses Ps. Select's random choice
 * among ready cases keeps every lane and worker busy.
 * Usage: pipeline [N [W [L]]]  (defaults 200000 jobs, 8 workers, 2 lanes).
 * Prints the number of results and an order-independent checksum, compares
 * them with a sequential computation, and exits 1 on a mismatch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <wsr.h>

#define WORK 200 /* hash rounds per job */

struct worker {
	wsr_chan *lane, *out;
};

static long njobs;
static int nlanes;
static wsr_chan **lanes;
static wsr_waitgroup *wg; /* source and workers: freed only after all have left */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t hash(uint64_t x)
{
	int i;

	for (i = 0; i < WORK; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdULL;
		x ^= x >> 29;
	}
	return x;
}

static void source(void *arg)
{
	wsr_select_case cases[64];
	uint64_t x;
	long i;
	int k, f;

	(void)arg;
	for (k = 0; k < nlanes; k++) {
		cases[k].c = lanes[k];
		cases[k].dir = WSR_SEND;
		cases[k].elem = &x;
	}
	for (i = 1; i <= njobs; i++) {
		x = (uint64_t)i;
		f = wsr_select(cases, nlanes, 1);
		if (f < 0 || !cases[f].ok) {
			fprintf(stderr, "pipeline: a lane closed under the source\n");
			exit(1);
		}
	}
	for (k = 0; k < nlanes; k++)
		wsr_chan_close(lanes[k]);
	wsr_waitgroup_done(wg);
}

static void work(void *arg)
{
	struct worker *w = arg;
	uint64_t x, h;

	while (wsr_chan_recv(w->lane, &x) == 1) {
		h = hash(x);
		wsr_chan_send(w->out, &h);
	}
	wsr_chan_close(w->out);
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	int nw = *(int *)arg, k, open;
	struct worker *ws = calloc((size_t)nw, sizeof(*ws));
	wsr_select_case *cases = calloc((size_t)nw, sizeof(*cases));
	uint64_t h, sum = 0, want = 0;
	long got = 0, i;
	double t0, dt;

	lanes = calloc((size_t)nlanes, sizeof(*lanes));
	wg = wsr_waitgroup_make();
	if (ws == NULL || cases == NULL || lanes == NULL || wg == NULL) {
		fprintf(stderr, "pipeline: out of memory\n");
		return 1;
	}
	t0 = now_s();
	wsr_waitgroup_add(wg, nw + 1);
	for (k = 0; k < nlanes; k++)
		lanes[k] = wsr_chan_make(sizeof(uint64_t), 64);
	for (k = 0; k < nw; k++) {
		ws[k].lane = lanes[k % nlanes];
		ws[k].out = wsr_chan_make(sizeof(uint64_t), 16);
		cases[k].c = ws[k].out;
		cases[k].dir = WSR_RECV;
		cases[k].elem = &h;
		wsr_go(work, &ws[k]);
	}
	wsr_go(source, NULL);
	/* Fan in: a closed result channel drops out of the select (c = NULL). */
	for (open = nw; open > 0;) {
		k = wsr_select(cases, nw, 1);
		if (k < 0) {
			fprintf(stderr, "pipeline: select failed\n");
			return 1;
		}
		if (!cases[k].ok) {
			cases[k].c = NULL;
			open--;
			continue;
		}
		sum += h;
		got++;
	}
	dt = now_s() - t0;
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	for (k = 0; k < nw; k++)
		wsr_chan_free(ws[k].out);
	for (k = 0; k < nlanes; k++)
		wsr_chan_free(lanes[k]);
	free(lanes);
	free(ws);
	free(cases);
	for (i = 1; i <= njobs; i++)
		want += hash((uint64_t)i);
	printf("gomaxprocs = %d\n", wsr_gomaxprocs());
	printf("results = %ld\n", got);
	printf("checksum = %016" PRIx64 "\n", sum);
	printf("jobs/s = %.0f\n", dt > 0 ? (double)got / dt : 0.0);
	if (got != njobs || sum != want) {
		fprintf(stderr,
			"pipeline: %ld results, checksum %016" PRIx64 "; want %ld, %016" PRIx64
			"\n",
			got, sum, njobs, want);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int nw;

	njobs = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	nw = argc > 2 ? atoi(argv[2]) : 8;
	nlanes = argc > 3 ? atoi(argv[3]) : 2;
	if (njobs < 0 || nw < 1 || nw > 10000 || nlanes < 1 || nlanes > 64 || nlanes > nw) {
		fprintf(stderr, "usage: pipeline [N [W [L]]]  (1 <= L <= min(W, 64))\n");
		return 2;
	}
	return wsr_main(main_g, &nw);
}
