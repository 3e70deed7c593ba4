/*
 * ws-prog.c - programs whose work and span are known by construction, for
 * the work/span tests (test_workspan.py, docs/workspan.md).
 *
 * Each leaf of work is a busy loop on CLOCK_MONOTONIC of W microseconds, run
 * inside one G without a scheduling point, so it lies inside one strand of
 * the recorded DAG. Each loop measures its own duration (d >= W); the
 * program prints, as one JSON line on stdout, the figures the construction
 * gives from those measured durations:
 *   work_ns     the sum of the loops (the trace's work is this plus the
 *               runtime's own code around them);
 *   span_ns     the loop time on the longest path of the construction;
 *   span_lo_ns  what every recorded DAG of the program must reach at least
 *               (see each shape);
 *   run_delay_ns the time the process's threads waited for a CPU while
 *               runnable (field 2 of each thread's schedstat in /proc/self/task): the
 *               kernel descheduling that the trace, which has no kernel
 *               events, counts as running time of whatever G the thread held.
 * Shapes (usage: ws-prog SHAPE ARGS):
 *   chain K W        G1 loops, spawns G2 and exits, ... GK loops and wakes the
 *                    main G (waitgroup): span = work = sum (one path).
 *   fanout N W       the main G spawns N Gs that loop, then waits for them:
 *                    work = sum, span = max (each leaf hangs off its spawn).
 *   pfor N W TAIL    fanout, then the main G loops TAIL: work = sum + tail,
 *                    span = max + tail; only the join that blocked is in the
 *                    trace, so a recorded path reaches at least
 *                    max(max, min + tail).
 *   fib N W          fib(N) in Cilk's shape (spawn fib(n-2), call fib(n-1),
 *                    join); each base case (n < 2) loops: work = sum,
 *                    span = max leaf (internal frames compute nothing).
 * Concurrency: the sums are atomics updated by the Gs; printed after every
 *   G has joined.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wsr.h>

static int64_t w_ns;
static _Atomic int64_t work_sum, loops, max_d, min_d = INT64_MAX;
static wsr_waitgroup *main_wg;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Busy for ns on the monotonic clock; returns the measured duration. A
 * leaf's loop also counts in max_d / min_d (the pfor tail does not). */
static int64_t spin(int64_t ns, bool leaf)
{
	int64_t t0 = now_ns(), t;

	do
		t = now_ns();
	while (t - t0 < ns);
	int64_t d = t - t0;
	atomic_fetch_add(&work_sum, d);
	atomic_fetch_add(&loops, 1);
	if (!leaf)
		return d;
	int64_t m = atomic_load(&max_d);
	while (d > m && !atomic_compare_exchange_weak(&max_d, &m, d))
		;
	m = atomic_load(&min_d);
	while (d < m && !atomic_compare_exchange_weak(&min_d, &m, d))
		;
	return d;
}

static void chain_g(void *arg)
{
	intptr_t left = (intptr_t)arg;

	spin(w_ns, true);
	if (left > 1)
		wsr_go(chain_g, (void *)(left - 1));
	else
		wsr_waitgroup_done(main_wg);
}

static void leaf_g(void *arg)
{
	(void)arg;
	spin(w_ns, true);
	wsr_waitgroup_done(main_wg);
}

struct frame {
	int n;
	int64_t span; /* loop time on the longest path below this call */
	wsr_waitgroup *wg;
};

static int64_t fib(int n);

static void fib_g(void *arg)
{
	struct frame *f = arg;

	f->span = fib(f->n);
	wsr_waitgroup_done(f->wg);
}

static int64_t fib(int n)
{
	if (n < 2)
		return spin(w_ns, true);
	struct frame child = {n - 2, 0, wsr_waitgroup_make()};
	wsr_waitgroup_add(child.wg, 1);
	wsr_go(fib_g, &child);
	int64_t inl = fib(n - 1);
	wsr_waitgroup_wait(child.wg);
	wsr_waitgroup_free(child.wg);
	return inl > child.span ? inl : child.span;
}

/* Sum of run_delay over the process's threads (-1: not available). */
static int64_t run_delay_ns(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int64_t sum = 0;

	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		char path[300];
		long long on_cpu, delay;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", de->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue; /* the thread exited */
		if (fscanf(f, "%lld %lld", &on_cpu, &delay) == 2)
			sum += delay;
		else
			sum = -1;
		fclose(f);
		if (sum < 0)
			break;
	}
	closedir(dir);
	return sum;
}

struct args {
	const char *shape;
	long n;
	int64_t tail_ns;
};

static int main_g(void *arg)
{
	const struct args *a = arg;
	int64_t span = 0, span_lo = 0, tail = 0;

	main_wg = wsr_waitgroup_make();
	if (strcmp(a->shape, "chain") == 0) {
		wsr_waitgroup_add(main_wg, 1);
		wsr_go(chain_g, (void *)(intptr_t)a->n);
		wsr_waitgroup_wait(main_wg);
		span = span_lo = atomic_load(&work_sum);
	} else if (strcmp(a->shape, "fanout") == 0 || strcmp(a->shape, "pfor") == 0) {
		wsr_waitgroup_add(main_wg, a->n);
		for (long i = 0; i < a->n; i++)
			wsr_go(leaf_g, NULL);
		wsr_waitgroup_wait(main_wg);
		if (a->tail_ns > 0)
			tail = spin(a->tail_ns, false);
		int64_t mx = atomic_load(&max_d), mn = atomic_load(&min_d);
		span = mx + tail;
		span_lo = tail > 0 ? (mx > mn + tail ? mx : mn + tail) : mx;
	} else {
		span = span_lo = fib((int)a->n);
	}
	printf("{\"shape\": \"%s\", \"n\": %ld, \"w_ns\": %" PRId64 ", \"tail_ns\": %" PRId64
	       ", \"work_ns\": %" PRId64 ", \"span_ns\": %" PRId64 ", \"span_lo_ns\": %" PRId64
	       ", \"loops\": %" PRId64 ", \"procs\": %d, \"run_delay_ns\": %" PRId64 "}\n",
	       a->shape, a->n, w_ns, tail, atomic_load(&work_sum), span, span_lo,
	       atomic_load(&loops), wsr_gomaxprocs(), run_delay_ns());
	wsr_waitgroup_free(main_wg);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = {NULL, 0, 0};

	if (argc < 4 ||
	    (strcmp(argv[1], "chain") != 0 && strcmp(argv[1], "fanout") != 0 &&
	     strcmp(argv[1], "pfor") != 0 && strcmp(argv[1], "fib") != 0) ||
	    (strcmp(argv[1], "pfor") == 0 && argc < 5)) {
		fprintf(stderr,
			"usage: ws-prog chain K W_US | fanout N W_US | pfor N W_US TAIL_US | "
			"fib N W_US\n");
		return 2;
	}
	a.shape = argv[1];
	a.n = strtol(argv[2], NULL, 10);
	w_ns = strtoll(argv[3], NULL, 10) * 1000;
	if (argc > 4)
		a.tail_ns = strtoll(argv[4], NULL, 10) * 1000;
	if (a.n < 1 || a.n > 100000 || w_ns <= 0 || (strcmp(a.shape, "fib") == 0 && a.n > 25)) {
		fprintf(stderr, "ws-prog: N in 1..100000 (fib: 1..25), W > 0\n");
		return 2;
	}
	return wsr_main(main_g, &a);
}
