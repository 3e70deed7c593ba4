/*
 * sieve.c - the concurrent prime sieve (Go's classic): a generator G feeds
 * 2, 3, 4, ... into a chain of filter Gs, one per prime found, all linked by
 * unbuffered channels; the main G reads each new prime off the chain's end.
 *
 * Usage: sieve [NPRIMES]  (default 3000). check = the NPRIMES-th prime;
 * ops = channel messages needed to find it: a number n whose smallest prime
 * factor is the j-th prime travels over j channels, counted for n = 2 ... p
 * after the timed region (numbers still in flight past p are not counted).
 * Mirrors bench/go/sieve.go.
 *
 * Invariants: the filter of the k-th prime reads the k-th channel.
 * Concurrency: only channels. The generator and filters are left blocked
 *   when the main G returns (wsr_main abandons them, as Go's main does).
 */
#include <stdint.h>
#include <stdlib.h>

#include <wsr.h>

#include "bench.h"

struct filter {
	wsr_chan *in, *out;
	long prime;
};

static void generate(void *arg)
{
	wsr_chan *out = arg;
	long i;

	for (i = 2;; i++)
		wsr_chan_send(out, &i);
}

static void filter(void *arg)
{
	struct filter *f = arg;
	long i;

	for (;;) {
		wsr_chan_recv(f->in, &i);
		if (i % f->prime != 0)
			wsr_chan_send(f->out, &i);
	}
}

/* Messages for n = 2..p: sum over n of the index of n's smallest prime factor. */
static int64_t messages(long p)
{
	int32_t *spf = calloc((size_t)p + 1, sizeof(*spf)); /* index of smallest factor */
	int64_t total = 0;
	long n, m;
	int32_t k = 0;

	if (spf == NULL)
		exit(1);
	for (n = 2; n <= p; n++) {
		if (spf[n] == 0) {
			k++;
			for (m = n; m <= p; m += n)
				if (spf[m] == 0)
					spf[m] = k;
		}
		total += spf[n];
	}
	free(spf);
	return total;
}

static int main_g(void *arg)
{
	long nprimes = *(long *)arg, i, prime = 0;
	struct filter *fs = calloc((size_t)nprimes, sizeof(*fs));
	wsr_chan *ch = wsr_chan_make(sizeof(long), 0);
	int64_t t0, t1;

	if (fs == NULL || ch == NULL)
		return 1;
	t0 = bench_now_ns();
	wsr_go(generate, ch);
	for (i = 0; i < nprimes; i++) {
		wsr_chan_recv(ch, &prime);
		fs[i] = (struct filter){ch, wsr_chan_make(sizeof(long), 0), prime};
		wsr_go(filter, &fs[i]);
		ch = fs[i].out;
	}
	t1 = bench_now_ns();
	/* The filters still run: fs and the channels are left to the exit. */
	bench_report("sieve", "wsr", wsr_gomaxprocs(), messages(prime), t1 - t0, (uint64_t)prime,
		     "");
	return 0;
}

int main(int argc, char **argv)
{
	long n = bench_arg(argc, argv, 1, 3000);

	return wsr_main(main_g, &n);
}
