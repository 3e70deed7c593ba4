/*
 * test-fatal.c - the runtime's fatal paths, each checked on a child process
 * (sync-child SCENARIO) whose exit status and stderr are captured: the
 * deadlock report (exit 2, Go's message, every blocked G with its wait
 * reason) and only when nothing can wake anyone (not while a G sleeps,
 * waits on I/O, or is in a syscall); the stack-overflow report naming the G
 * and its stack size; WSRDEBUG=stacksize and wsr_set_stack_size; API misuse
 * (NULL handles included) that is fatal with the function's name; a NULL
 * channel blocking for ever. Every fatal error exits 2, as Go's do, and
 * with WSRTRACEBACK=crash aborts instead (SIGABRT, a core dump if allowed),
 * as with Go's GOTRACEBACK=crash.
 *
 * Invariants: children run with a fixed WSRMAXPROCS and a kill deadline
 *   (st_exec); the test process never starts the runtime itself.
 * Concurrency: none here; each child is a whole runtime.
 */
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synctest.h"
#include "wsrtest.h"

#define DEADLOCK_MSG "wsr: all goroutines are asleep - deadlock!"

/* Runs "sync-child SCENARIO [ARG]" (next to this executable), with
 * WSRTRACEBACK set to traceback (NULL: unset). */
static void run_tb(struct st_child *r, const char *scenario, const char *procs, const char *debug,
		   const char *traceback)
{
	char self[PATH_MAX], child[PATH_MAX + 16], sc[64], *arg;
	char *argv[4];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ASSERT(n > 0);
	self[n] = '\0';
	snprintf(child, sizeof(child), "%s/sync-child", dirname(self));
	snprintf(sc, sizeof(sc), "%s", scenario);
	arg = strchr(sc, ' ');
	if (arg != NULL)
		*arg++ = '\0';
	argv[0] = child;
	argv[1] = sc;
	argv[2] = arg;
	argv[3] = NULL;
	setenv("WSRMAXPROCS", procs, 1);
	if (debug != NULL)
		setenv("WSRDEBUG", debug, 1);
	else
		unsetenv("WSRDEBUG");
	if (traceback != NULL)
		setenv("WSRTRACEBACK", traceback, 1);
	else
		unsetenv("WSRTRACEBACK");
	st_exec(r, argv, 20);
}

static void run(struct st_child *r, const char *scenario, const char *procs, const char *debug)
{
	run_tb(r, scenario, procs, debug, NULL);
}

#define ASSERT_HAS(hay, needle)                                                 \
 do {                                                                           \
  if (strstr((hay), (needle)) == NULL)                                          \
   wsrtest_fail(__FILE__, __LINE__, "missing \"%s\" in:\n%s", (needle), (hay)); \
 } while (0)

#define ASSERT_HASNT(hay, needle)                                                  \
 do {                                                                              \
  if (strstr((hay), (needle)) != NULL)                                             \
   wsrtest_fail(__FILE__, __LINE__, "unexpected \"%s\" in:\n%s", (needle), (hay)); \
 } while (0)

WSR_TEST_TIMEOUT(deadlock_main_blocked_on_chan, 30)
{
	struct st_child r;
	const char *procs[] = {"1", "2"};
	int i;

	for (i = 0; i < 2; i++) {
		run(&r, "dl_recv", procs[i], NULL);
		ASSERT_EQ(st_code(&r), 2);
		ASSERT_HAS(r.err, DEADLOCK_MSG);
		ASSERT_HAS(r.err, "goroutine 1 [chan send/receive] (main)");
		st_child_free(&r);
	}
}

WSR_TEST_TIMEOUT(deadlock_report_lists_blocked_gs, 30)
{
	struct st_child r;

	/* At P=1 G ids are handed out in spawn order (one P's goid batch). */
	run(&r, "dl_many", "1", NULL);
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
	run(&r, "dl_many", "2", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [waitgroup wait] (main)");
	ASSERT_HAS(r.err, " [mutex]");
	ASSERT_HAS(r.err, " [chan send/receive]");
	ASSERT_HASNT(r.err, " [select]");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(deadlock_in_select_p1, 30)
{
	struct st_child r;

	run(&r, "dl_select", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [select] (main)");
	st_child_free(&r);
}

static void check_no_deadlock(const char *scenario, const char *procs)
{
	struct st_child r;

	run(&r, scenario, procs, NULL);
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HASNT(r.err, "deadlock");
	ASSERT_HAS(r.out, "woke");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_sleeps, 30)
{
	check_no_deadlock("nodl_sleep", "1");
	check_no_deadlock("nodl_sleep", "2");
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_waits_on_io, 30)
{
	check_no_deadlock("nodl_io", "1");
	check_no_deadlock("nodl_io", "2");
}

WSR_TEST_TIMEOUT(no_deadlock_while_a_g_is_in_a_syscall, 30)
{
	check_no_deadlock("nodl_syscall", "1");
	check_no_deadlock("nodl_syscall", "2");
}

static const char *no_overflow_report(void)
{
	if (st_asan())
		return "ASan reports stack overflows itself (the runtime's handler is off under ASan)";
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
	run(&r, "deep 100000", "2", "stacksize=65536"); /* 100 MB deep */
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, "stack overflow in goroutine 2");
	ASSERT_HAS(r.err, "stack size 65536");
	st_child_free(&r);
	/* The default size, at P=1. */
	run(&r, "deep 100000", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, "stack overflow in goroutine 2");
	ASSERT_HAS(r.err, "stack size 262144");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(wsrdebug_stacksize_is_used, 30)
{
	struct st_child r;

	/* About 1.5 MiB of frames (more under sanitizers' bigger frames): fine with 8m. */
	run(&r, "deep 1500", "2", "stacksize=8m");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.out, "result");
	st_child_free(&r);
	if (no_overflow_report() == NULL) {
		/* The same depth overflows the default 256 KiB. */
		run(&r, "deep 1500", "2", NULL);
		ASSERT_EQ(st_code(&r), 2);
		ASSERT_HAS(r.err, "stack overflow in goroutine 2");
		st_child_free(&r);
	}
}

WSR_TEST_TIMEOUT(stacksize_api_and_env_agree, 30)
{
	struct st_child r;

	run(&r, "stacksize_api", "1", "stacksize=1m");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.out, "api ok");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(misuse_throws, 30)
{
	struct st_child r;

	run(&r, "close_twice", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, "wsr: fatal error: chan_close: close of closed channel");
	st_child_free(&r);
	run(&r, "unlock_unlocked", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, "wsr: fatal error: mutex_unlock: unlock of unlocked mutex");
	st_child_free(&r);
	run(&r, "negative_wg", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, "wsr: fatal error: waitgroup_add: negative counter");
	st_child_free(&r);
}

/* Fatal at the call, not later (wsr_go(NULL) used to crash inside the new
 * G, or never, and exit 0) and not with a bare SIGSEGV. */
static void check_fatal(const char *scenario, const char *msg)
{
	struct st_child r;

	run(&r, scenario, "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, msg);
	ASSERT_HAS(r.err, "goroutine 1 [running]");
	ASSERT_HASNT(r.out, "after");
	ASSERT_HASNT(r.out, "nil G ran");
	st_child_free(&r);
}

WSR_TEST_TIMEOUT(nil_handles_are_fatal, 30)
{
	check_fatal("go_nil", "wsr: fatal error: wsr_go: go of nil func value");
	check_fatal("close_nil", "wsr: fatal error: chan_close: close of nil channel");
	check_fatal("mutex_nil", "wsr: fatal error: mutex_lock: nil mutex");
	check_fatal("waitgroup_nil", "wsr: fatal error: waitgroup_add: nil waitgroup");
}

WSR_TEST_TIMEOUT(nil_channel_blocks_for_ever, 30)
{
	struct st_child r;

	run(&r, "send_nil", "1", NULL);
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	ASSERT_HAS(r.err, "goroutine 1 [chan send/receive] (main)");
	ASSERT_HASNT(r.out, "after");
	st_child_free(&r);
	check_no_deadlock("recv_nil_other", "1");
	check_no_deadlock("recv_nil_other", "2");
}

/* WSRTRACEBACK=crash (Go's GOTRACEBACK=crash): the same report, then
 * abort() for a core dump; every fatal path honours it. */
WSR_TEST_TIMEOUT(traceback_crash_aborts, 30)
{
	struct st_child r;

	run_tb(&r, "close_twice", "1", NULL, "crash");
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, "wsr: fatal error: chan_close: close of closed channel");
	st_child_free(&r);
	run_tb(&r, "dl_recv", "1", NULL, "crash");
	ASSERT_EQ(st_code(&r), -SIGABRT);
	ASSERT_HAS(r.err, DEADLOCK_MSG);
	st_child_free(&r);
	if (no_overflow_report() == NULL) {
		run_tb(&r, "deep 100000", "1", NULL, "crash");
		ASSERT_EQ(st_code(&r), -SIGABRT);
		ASSERT_HAS(r.err, "stack overflow in goroutine 2");
		st_child_free(&r);
	}
	/* Any other value is Go's default: exit 2. */
	run_tb(&r, "close_twice", "1", NULL, "single");
	ASSERT_EQ(st_code(&r), 2);
	st_child_free(&r);
}
