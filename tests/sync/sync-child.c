/*
 * sync-child.c - the programs test-fatal.c runs as child processes, one per
 * scenario (argv[1]): deadlocks that must be reported, programs that block
 * only on a timer, an fd or a syscall (no report), deep recursion for the
 * stack-overflow and stacksize cases, API misuse that must be fatal (NULL
 * handles included), and sends and receives on a NULL channel, which block
 * for ever as in Go.
 *
 * A separate executable rather than a fork of the test process: the test
 * process already runs threads (LTTng-UST's listeners), and ThreadSanitizer
 * refuses to start threads after a multi-threaded fork; exec starts clean.
 *
 * Invariants: each scenario is the whole program; WSRMAXPROCS and WSRDEBUG
 *   come from the environment the test sets; exit status is wsr_main's.
 * Concurrency: the runtime's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

/* ---- deadlocks that must be reported ---- */

static int dl_recv_main(void *arg)
{
	wsr_chan *c = wsr_chan_make(sizeof(int), 0);
	int v;

	(void)arg;
	wsr_chan_recv(c, &v);
	return 0;
}

static wsr_mutex *dl_mu;
static wsr_waitgroup *dl_wg;
static wsr_chan *dl_a, *dl_b;

static void dl_mutex_g(void *arg)
{
	(void)arg;
	wsr_mutex_lock(dl_mu);
}

static void dl_wg_g(void *arg)
{
	(void)arg;
	wsr_waitgroup_wait(dl_wg);
}

static void dl_select_g(void *arg)
{
	int x, y;
	wsr_select_case cs[2] = {{dl_a, WSR_RECV, &x, 0}, {dl_b, WSR_RECV, &y, 0}};

	(void)arg;
	wsr_select(cs, 2, 1);
}

static void dl_send_g(void *arg)
{
	int v = 1;

	(void)arg;
	wsr_chan_send(dl_b, &v);
	wsr_chan_send(dl_b, &v);
	wsr_chan_send(dl_b, &v);
}

static int dl_many_main(void *arg)
{
	int i;

	(void)arg;
	dl_mu = wsr_mutex_make();
	dl_wg = wsr_waitgroup_make();
	dl_a = wsr_chan_make(sizeof(int), 0);
	dl_b = wsr_chan_make(sizeof(int), 0);
	wsr_waitgroup_add(dl_wg, 1);
	wsr_mutex_lock(dl_mu);
	wsr_go(dl_mutex_g, NULL);  /* G2 */
	wsr_go(dl_wg_g, NULL);     /* G3 */
	wsr_go(dl_select_g, NULL); /* G4 */
	/* Let them all block before blocking ourselves. */
	for (i = 0; i < 10; i++)
		wsr_sleep_ns(1000000);
	wsr_go(dl_send_g, NULL); /* G5: its 2nd send blocks (G4 took the first) */
	wsr_waitgroup_wait(dl_wg);
	return 0;
}

static int dl_select_main(void *arg)
{
	int x;
	wsr_select_case cs[1];

	(void)arg;
	dl_a = wsr_chan_make(sizeof(int), 0);
	cs[0].c = dl_a;
	cs[0].dir = WSR_RECV;
	cs[0].elem = &x;
	wsr_select(cs, 1, 1);
	return 0;
}

/* ---- and only when it should ---- */

static void forever_g(void *arg)
{
	int v;

	(void)arg;
	wsr_chan_recv(dl_a, &v); /* never woken: abandoned when main returns */
}

/* Everyone is blocked but main sleeps: a timer will wake it. */
static int nodl_sleep_main(void *arg)
{
	(void)arg;
	dl_a = wsr_chan_make(sizeof(int), 0);
	wsr_go(forever_g, NULL);
	wsr_sleep_ns(30000000);
	printf("woke\n");
	return 0;
}

/* Main waits on a pipe that a plain thread (not a G) writes later. */
static int pipefd[2];

static void *late_writer(void *arg)
{
	struct timespec ts = {0, 30000000};

	(void)arg;
	nanosleep(&ts, NULL);
	if (write(pipefd[1], "k", 1) != 1)
		abort();
	return NULL;
}

static int nodl_io_main(void *arg)
{
	pthread_t t;
	char c = 0;

	(void)arg;
	dl_a = wsr_chan_make(sizeof(int), 0);
	if (pipe(pipefd) != 0)
		return 1;
	wsr_go(forever_g, NULL);
	pthread_create(&t, NULL, late_writer, NULL);
	if (wsr_read(pipefd[0], &c, 1) != 1 || c != 'k')
		return 1;
	pthread_join(t, NULL);
	printf("woke\n");
	return 0;
}

/* Main waits on a channel whose only sender is in a syscall for a while. */
static void *slow_call(void *arg)
{
	struct timespec ts = {0, 30000000};

	nanosleep(&ts, NULL);
	return arg;
}

static void syscaller_g(void *arg)
{
	int v = 7;

	(void)arg;
	wsr_blocking(slow_call, NULL);
	wsr_chan_send(dl_b, &v);
}

static int nodl_syscall_main(void *arg)
{
	int v = 0;

	(void)arg;
	dl_b = wsr_chan_make(sizeof(int), 0);
	wsr_go(syscaller_g, NULL);
	if (wsr_chan_recv(dl_b, &v) != 1 || v != 7)
		return 1;
	printf("woke\n");
	return 0;
}

/* ---- stack overflow and WSRDEBUG=stacksize ---- */

/* Uses about depth KiB of stack. */
static __attribute__((noinline)) long deep(long depth)
{
	char frame[1000];

	/* Fill the whole frame and let an opaque asm see it, so no compiler
	 * can shrink it (clang kept 8 bytes of a volatile array). */
	memset(frame, (int)depth, sizeof(frame));
	__asm__ volatile("" : : "r"(frame) : "memory");
	if (depth <= 0)
		return frame[0];
	return deep(depth - 1) + frame[999];
}

static long depth_kib;
static wsr_waitgroup *deep_wg;

static void deep_g(void *arg)
{
	(void)arg;
	printf("result %ld\n", deep(depth_kib));
	fflush(stdout);
	wsr_waitgroup_done(deep_wg);
}

static int deep_main(void *arg)
{
	(void)arg;
	deep_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(deep_wg, 1);
	wsr_go(deep_g, NULL); /* G2 */
	wsr_waitgroup_wait(deep_wg);
	return 0;
}

static int stacksize_api_main(void *arg)
{
	(void)arg;
	/* WSRDEBUG=stacksize=1m is the starting default; 0 only reads it. */
	if (wsr_set_stack_size(0) != 1024 * 1024 || wsr_set_stack_size(512 * 1024) != 1024 * 1024 ||
	    wsr_set_stack_size(0) != 512 * 1024) {
		fprintf(stderr, "stacksize_api: wrong sizes\n");
		return 1;
	}
	depth_kib = 300; /* needs more than 256 KiB */
	deep_main(NULL);
	printf("api ok\n");
	return 0;
}

/* ---- misuse throws with the function's name ---- */

static int close_twice_main(void *arg)
{
	wsr_chan *c = wsr_chan_make(1, 0);

	(void)arg;
	wsr_chan_close(c);
	wsr_chan_close(c);
	return 0;
}

static int unlock_unlocked_main(void *arg)
{
	wsr_mutex *mu = wsr_mutex_make();

	(void)arg;
	wsr_mutex_unlock(mu);
	return 0;
}

static int negative_wg_main(void *arg)
{
	wsr_waitgroup *wg = wsr_waitgroup_make();

	(void)arg;
	wsr_waitgroup_done(wg);
	return 0;
}

/* ---- NULL handles: fatal at the call, as Go's nil func, nil channel
 * close, nil *sync.Mutex and nil *sync.WaitGroup are ---- */

static void never_g(void *arg)
{
	(void)arg;
	printf("the nil G ran\n");
}

static int go_nil_main(void *arg)
{
	int i;

	(void)arg;
	wsr_go((void (*)(void *))NULL, NULL);
	/* Before the fix the spawn "worked" and the G died later, or never ran. */
	wsr_go(never_g, NULL);
	for (i = 0; i < 10; i++)
		wsr_yield();
	printf("after wsr_go(NULL)\n");
	return 0;
}

static int close_nil_main(void *arg)
{
	(void)arg;
	wsr_chan_close(NULL);
	printf("after close\n");
	return 0;
}

static int mutex_nil_main(void *arg)
{
	(void)arg;
	wsr_mutex_lock(NULL);
	printf("after lock\n");
	return 0;
}

static int waitgroup_nil_main(void *arg)
{
	(void)arg;
	wsr_waitgroup_add(NULL, 1);
	printf("after add\n");
	return 0;
}

/* A nil channel blocks for ever (Go): alone, main is a deadlock. */
static int send_nil_main(void *arg)
{
	int v = 1;

	(void)arg;
	wsr_chan_send(NULL, &v);
	printf("after send\n");
	return 0;
}

static void recv_nil_g(void *arg)
{
	int v;

	(void)arg;
	wsr_chan_recv(NULL, &v);
	printf("after recv\n");
}

/* ... and not while another G can still run: main sleeps, then returns. */
static int recv_nil_other_main(void *arg)
{
	(void)arg;
	wsr_go(recv_nil_g, NULL);
	wsr_sleep_ns(20000000);
	printf("woke\n");
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void *);
} scenarios[] = {
	{"dl_recv", dl_recv_main},
	{"dl_many", dl_many_main},
	{"dl_select", dl_select_main},
	{"nodl_sleep", nodl_sleep_main},
	{"nodl_io", nodl_io_main},
	{"nodl_syscall", nodl_syscall_main},
	{"deep", deep_main},
	{"stacksize_api", stacksize_api_main},
	{"close_twice", close_twice_main},
	{"unlock_unlocked", unlock_unlocked_main},
	{"negative_wg", negative_wg_main},
	{"go_nil", go_nil_main},
	{"close_nil", close_nil_main},
	{"mutex_nil", mutex_nil_main},
	{"waitgroup_nil", waitgroup_nil_main},
	{"send_nil", send_nil_main},
	{"recv_nil_other", recv_nil_other_main},
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: sync-child SCENARIO [DEPTH_KIB]\n");
		return 125;
	}
	if (argc > 2)
		depth_kib = atol(argv[2]);
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(argv[1], scenarios[i].name) == 0)
			return wsr_main(scenarios[i].fn, NULL);
	fprintf(stderr, "sync-child: no scenario %s\n", argv[1]);
	return 125;
}
