/*
 * skewed.c - one producer G spawns many CPU-bound Gs.
 *
 * Schedule it provokes: every G starts on the producer's P (runnext, then the
 * ring, then spills to the global queue when the ring fills); the other Ps
 * only get work by stealing half-rings or taking global batches, so steals,
 * spills and spinning Ms all show.
 * Usage: skewed [COUNT [WORK]]  (defaults 100000 and 1000 LCG steps per G).
 * Prints the number of Gs run and a checksum that does not depend on the
 * schedule.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <wsr.h>

static long work = 1000;
static _Atomic uint64_t checksum;
static _Atomic long ran;
static wsr_waitgroup *wg;

static void worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;
	long i;

	for (i = 0; i < work; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	checksum += x;
	ran++;
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	long n = *(long *)arg, i;

	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, n);
	for (i = 0; i < n; i++)
		wsr_go(worker, (void *)(uintptr_t)(i + 1));
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	printf("ran = %ld\nchecksum = %016" PRIx64 "\n", ran, checksum);
	return ran == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	if (argc > 2)
		work = atol(argv[2]);
	if (n <= 0 || work < 0) {
		fprintf(stderr, "usage: skewed [COUNT [WORK]]\n");
		return 2;
	}
	return wsr_main(main_g, &n);
}
