/*
 * sieve.c - the concurrent prime sieve (Go's classic): a generator G feeds
 * 2, 3, 4, ... into a chain of filter Gs, one per prime found, joined by
 * unbuffered channels.
 *
 * Schedule it provokes: a long chain of ready/park hand-offs. Each value
 * travels down the chain, every send readying the next filter into the
 * sender's runnext, so work flows mostly on one P while other Ps steal the
 * kicked-out runnext Gs and the tail of the chain; thousands of short-lived
 * channel waits, almost no runnable queue.
 * Usage: sieve [N]  (default 2000). Prints the Nth prime and primes/s; checks
 * the chain's answer against a sequential sieve and exits 1 on a mismatch.
 * The generator stops at an upper bound of the Nth prime and every filter
 * closes its output when its input closes, so all Gs exit and all channels
 * are freed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wsr.h>

struct filter {
	wsr_chan *in, *out;
	long prime;
};

static wsr_waitgroup *wg;
static long limit;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void generate(void *arg)
{
	wsr_chan *out = arg;
	long i;

	for (i = 2; i <= limit; i++)
		wsr_chan_send(out, &i);
	wsr_chan_close(out);
	wsr_waitgroup_done(wg);
}

/* Passes on every value not divisible by its prime; closes out when in closes. */
static void filter(void *arg)
{
	struct filter *f = arg;
	long v;

	while (wsr_chan_recv(f->in, &v) == 1)
		if (v % f->prime != 0)
			wsr_chan_send(f->out, &v);
	wsr_chan_close(f->out);
	wsr_waitgroup_done(wg);
}

/* The Nth prime (from 1), by a sequential sieve of Eratosthenes up to limit. */
static long nth_prime_seq(long n)
{
	char *comp = calloc((size_t)limit + 1, 1);
	long i, j, k = 0, r = -1;

	if (comp == NULL)
		return -1;
	for (i = 2; i <= limit; i++) {
		if (comp[i])
			continue;
		if (++k == n) {
			r = i;
			break;
		}
		for (j = i * i; j <= limit; j += i)
			comp[j] = 1;
	}
	free(comp);
	return r;
}

static int main_g(void *arg)
{
	long n = *(long *)arg, i, p = 0, v;
	wsr_chan **chans = calloc((size_t)n + 1, sizeof(*chans));
	struct filter *fs = calloc((size_t)n, sizeof(*fs));
	wsr_chan *ch;
	double t0, dt;
	long want;

	if (chans == NULL || fs == NULL || (wg = wsr_waitgroup_make()) == NULL) {
		fprintf(stderr, "sieve: out of memory\n");
		return 1;
	}
	t0 = now_s();
	ch = chans[0] = wsr_chan_make(sizeof(long), 0);
	wsr_waitgroup_add(wg, 1);
	wsr_go(generate, ch);
	for (i = 0; i < n; i++) {
		if (wsr_chan_recv(ch, &p) != 1) {
			fprintf(stderr, "sieve: chain ended after %ld primes\n", i);
			return 1;
		}
		fs[i].in = ch;
		fs[i].out = chans[i + 1] = wsr_chan_make(sizeof(long), 0);
		fs[i].prime = p;
		ch = fs[i].out;
		wsr_waitgroup_add(wg, 1);
		wsr_go(filter, &fs[i]);
	}
	dt = now_s() - t0;
	/* Drain what is left so every G sees its input close and exits. */
	while (wsr_chan_recv(ch, &v) == 1)
		;
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	for (i = 0; i <= n; i++)
		wsr_chan_free(chans[i]);
	free(chans);
	free(fs);
	want = nth_prime_seq(n);
	printf("gomaxprocs = %d\n", wsr_gomaxprocs());
	printf("prime %ld = %ld\n", n, p);
	printf("primes/s = %.0f\n", dt > 0 ? (double)n / dt : 0.0);
	if (p != want) {
		fprintf(stderr, "sieve: got %ld, a sequential sieve says %ld\n", p, want);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	double ln;

	if (n < 1 || n > 1000000) {
		fprintf(stderr, "usage: sieve [N]  (1 <= N <= 1000000)\n");
		return 2;
	}
	/* p_n < n (ln n + ln ln n) for n >= 6 (Rosser). */
	ln = log((double)n);
	limit = n < 6 ? 13 : (long)((double)n * (ln + log(ln))) + 1;
	return wsr_main(main_g, &n);
}
