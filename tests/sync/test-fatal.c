/*
 * test-fatal.c - the runtime's fatal paths, each checked from a forked
 * child whose exit status and stderr are captured: the deadlock report
 * (exit 2, Go's message, every blocked G with its wait reason) and only
 * when nothing can wake anyone (not while a G sleeps, waits on I/O, or is in
 * a syscall); the stack-overflow report naming the G and its stack size;
 * WSRDEBUG=stacksize; API misuse that throws.
 *
 * Invariants: children run their runtime with fixed WSRMAXPROCS and have a
 *   kill deadline (st_fork); the parent never starts the runtime.
 * Concurrency: none in the parent; the child is a whole runtime.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

#define DEADLOCK_MSG "wsr: all goroutines are asleep - deadlock!"

struct child_main {
	int (*fn)(void *);
	const char *procs;
	const char *debug;
};

static void run_child(void *arg)
{
	struct child_main *c = arg;

	setenv("WSRMAXPROCS", c->procs, 1);
	if (c->debug != NULL)
		setenv("WSRDEBUG", c->debug, 1);
	else
		unsetenv("WSRDEBUG");
	_exit(wsr_main(c->fn, NULL));
}

static void run(struct st_child *r, int (*fn)(void *), const char *procs, const char *debug)
{
	struct child_main c = {fn, procs, debug};

	st_fork(r, run_child, &c, 20);
}

#define ASSERT_HAS(hay, needle)                                                                    \
	do {                                                                                       \
		if (strstr((hay), (needle)) == NULL)                                               \
			wsrtest_fail(__FILE__, __LINE__, "missing \"%s\" in:\n%s", (needle),       \
				     (hay));                                                       \
	} while (0)

#define ASSERT_HASNT(hay, needle)                                                                  \
	do {                                                                                       \
		if (strstr((hay), (needle)) != NULL)                                               \
			wsrtest_fail(__FILE__, __LINE__, "unexpected \"%s\" in:\n%s", (needle),    \
				     (hay));                                                       \
	} while (0)

/* ---- deadlocks that must be reported ---- */

static int dl_recv_main(void *arg)
{
	wsr_chan *c = wsr_chan_make(sizeof(int), 0);
	int v;

	(void)arg;
	wsr_chan_recv(c, &v);
	return 0;
}

WSR_TEST_TIMEOUT(deadlock_main_blocked_on_chan, 30)
{
	struct st_child r;
	const char *procs[] = {"1", "2"};
	int i;

	for (i = 0; i < 2; i++) {
		run(&r, dl_recv_main, procs[i], NULL);
		ASSERT_EQ(st_code(&r), 2);
		ASSERT_HAS(r.err, DEADLOCK_MSG);
		ASSERT_HAS(r.err, "goroutine 1 [chan send/receive] (main)");
		st_child_free(&r);
	}
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
	wsr_go(dl_mutex_g, NULL); /* G2 */
	wsr_go(dl_wg_g, NULL);	  /* G3 */
	wsr_go(dl_select_g, NULL); /* G4 */
	/* Let them all block before blocking ourselves. */
	for (i = 0; i < 10; i++)
		wsr_sleep_ns(1000000);
	wsr_go(dl_send_g, NULL); /* G5: its 2nd send blocks (G4 took the first) */
	wsr_waitgroup_wait(dl_wg);
	return 0;
}

WSR_TEST_TIMEOUT(deadlock_report_lists_blocked_gs, 30)
{
	struct st_child r;

	/* At P=1 G ids are handed out in spawn order (one P's goid batch). */
	run(&r, dl_many_main, "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [waitgroup wait] (main)");
	ASSERT_HAS(r.err, "goroutine 2 [mutex]");
	ASSERT_HAS(r.err, "goroutine 3 [waitgroup wait]");
	ASSERT_HAS(r.err, "goroutine 5 [chan send/receive]");
	/* G4's select fired and it exited: not listed. */
	ASSERT_HASNT(r.err, "goroutine 4 [");
	st_child_free(&r);
	/* At P=2 ids come from two batches; the reasons are the same. */
	run(&r, dl_many_main, "2", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [waitgroup wait] (main)");
	ASSERT_HAS(r.err, " [mutex]");
	ASSERT_HAS(r.err, " [chan send/receive]");
	ASSERT_HASNT(r.err, " [select]");
	st_child_free(&r);
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

WSR_TEST_TIMEOUT(deadlock_in_select_p1, 30)
{
	struct st_child r;

	run(&r, dl_select_main, "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [select] (main)");
	st_child_free(&r);
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

static void check_no_deadlock(int (*fn)(void *), const char *procs)
{
	struct st_child r;

	run(&r, fn, procs, NULL);
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HASNT(r.err, "deadlock");
	ASSERT_HAS(r.out, "woke");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_sleeps, 30)
{
	check_no_deadlock(nodl_sleep_main, "1");
	check_no_deadlock(nodl_sleep_main, "2");
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_waits_on_io, 30)
{
	check_no_deadlock(nodl_io_main, "1");
	check_no_deadlock(nodl_io_main, "2");
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_is_in_a_syscall, 30)
{
	check_no_deadlock(nodl_syscall_main, "1");
	check_no_deadlock(nodl_syscall_main, "2");
}

/* ---- stack overflow and WSRDEBUG=stacksize ---- */

/* Uses about depth KiB of stack. */
static __attribute__((noinline)) long deep(long depth)
{
	volatile char frame[1000];

	frame[0] = (char)depth;
	frame[999] = (char)depth;
	if (depth <= 0)
		return frame[0];
	return deep(depth - 1) + frame[999];
}

static _Atomic long depth_kib;
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

static const char *no_overflow_report(void)
{
	if (st_asan())
		return "ASan reports stack overflows itself (the runtime's handler is off under ASan)";
	if (st_tsan())
		return "TSan's own signal handling runs first and cannot use the G's alternate stack";
	return NULL;
}

WSR_TEST_TIMEOUT(stack_overflow_is_reported, 30)
{
	struct st_child r;
	const char *why = no_overflow_report();

	if (why != NULL) {
		printf("# skip: %s\n", why);
		return;
	}
	depth_kib = 100000; /* 100 MB: far past any stack */
	run(&r, deep_main, "2", "stacksize=65536");
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "stack overflow in goroutine 2");
	ASSERT_HAS(r.err, "stack size 65536");
	st_child_free(&r);
	/* The default size, at P=1. */
	run(&r, deep_main, "1", NULL);
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "stack overflow in goroutine 2");
	ASSERT_HAS(r.err, "stack size 262144");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(wsrdebug_stacksize_is_used, 30)
{
	struct st_child r;

	/* About 1.5 MiB of frames (more under sanitizers' bigger frames): fine with 8m. */
	depth_kib = 1500;
	run(&r, deep_main, "2", "stacksize=8m");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.out, "result");
	st_child_free(&r);
	if (no_overflow_report() == NULL) {
		/* The same depth overflows the default 256 KiB. */
		run(&r, deep_main, "2", NULL);
		ASSERT_EQ(st_code(&r), -SIGABRT);
		ASSERT_HAS(r.err, "stack overflow in goroutine 2");
		st_child_free(&r);
	}
}

static int stacksize_api_main(void *arg)
{
	(void)arg;
	/* WSRDEBUG=stacksize=1m is the starting default; 0 only reads it. */
	ASSERT_EQ(wsr_set_stack_size(0), 1024 * 1024);
	ASSERT_EQ(wsr_set_stack_size(512 * 1024), 1024 * 1024);
	ASSERT_EQ(wsr_set_stack_size(0), 512 * 1024);
	depth_kib = 300; /* needs more than 256 KiB */
	deep_main(NULL);
	printf("api ok\n");
	return 0;
}

WSR_TEST_TIMEOUT(stacksize_api_and_env_agree, 30)
{
	struct st_child r;

	run(&r, stacksize_api_main, "1", "stacksize=1m");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.out, "api ok");
	st_child_free(&r);
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

WSR_TEST_TIMEOUT(misuse_throws, 30)
{
	struct st_child r;

	run(&r, close_twice_main, "1", NULL);
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "wsr: fatal error: chan_close: close of closed channel");
	st_child_free(&r);
	run(&r, unlock_unlocked_main, "1", NULL);
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "wsr: fatal error: mutex_unlock: unlock of unlocked mutex");
	st_child_free(&r);
	run(&r, negative_wg_main, "1", NULL);
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "wsr: fatal error: waitgroup_add: negative counter");
	st_child_free(&r);
}
