/*
 * go-crash.c - the deadlock and nil cases of Go's runtime/crash_test.go,
 * sync's TestMutexMisuse (Mutex.Unlock2) and proc_test.go's
 * TestBigGOMAXPROCS, each run as a child process (go-crash-child SCENARIO)
 * whose status and output are checked; and TestMainGoroutineID in process.
 * Each case names the Go test. Already in tests/sync/test-fatal.c: the
 * deadlock report's contents, TestStackOverflow (stack_overflow_is_reported),
 * TestWaitGroupMisuse and TestMutexMisuse's Mutex.Unlock (misuse_throws).
 * Not ported (wsr lacks the piece, see tests/README.md): TestInitDeadlock
 * (no init phase), TestLockedDeadlock/2 (LockOSThread), TestGoexitDeadlock
 * (Goexit), the panic tests (no panic/recover).
 *
 * Invariants: children run at this test's WSRMAXPROCS (TestBigGOMAXPROCS at
 *   1024) with a kill deadline (st_exec); Go's messages are matched on
 *   their text after the "wsr: " / "fatal error: " prefixes.
 * Concurrency: none here; each child is a whole runtime.
 */
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotest.h"

#define DEADLOCK "all goroutines are asleep - deadlock!"

static void child(struct st_child *r, const char *scenario)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	char *argv[3];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ASSERT(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/go-crash-child", dirname(self));
	argv[0] = path;
	argv[1] = (char *)scenario;
	argv[2] = NULL;
	st_exec(r, argv, 20);
}

#define ASSERT_HAS(hay, needle)                                                 \
 do {                                                                           \
  if (strstr((hay), (needle)) == NULL)                                          \
   wsrtest_fail(__FILE__, __LINE__, "missing \"%s\" in:\n%s", (needle), (hay)); \
 } while (0)

/* ---- TestSimpleDeadlock, TestNoHelperGoroutines ----
 * main blocks in an empty select: the runtime reports the deadlock (exit
 * 2), and the report lists goroutine 1 only - no helper G of the runtime. */
WSR_TEST_TIMEOUT(TestSimpleDeadlock, 30)
{
	struct st_child r;
	regex_t re;
	regmatch_t m;
	const char *p;
	int count = 0;

	child(&r, "SimpleDeadlock");
	ASSERT_EQ(st_code(&r), 2);
	ASSERT_HAS(r.err, DEADLOCK);
	ASSERT_EQ(regcomp(&re, "goroutine [0-9]+ \\[", REG_EXTENDED), 0);
	for (p = r.err; regexec(&re, p, 1, &m, 0) == 0; p += m.rm_eo) {
		if (strncmp(p + m.rm_so, "goroutine 1 [", 13) != 0)
			wsrtest_fail(__FILE__, __LINE__, "want to see only goroutine 1, see:\n%s",
				     r.err);
		count++;
	}
	ASSERT_EQ(count, 1);
	regfree(&re);
	st_child_free(&r);
}

/* ---- TestNetpollDeadlock ----
 * A program that has used the network poller and then ends normally must
 * not be taken for a deadlock: it prints "done" and exits 0. */
WSR_TEST_TIMEOUT(TestNetpollDeadlock, 30)
{
	struct st_child r;
	size_t n;

	child(&r, "NetpollDeadlock");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	n = strlen(r.out);
	ASSERT(n >= 5 && strcmp(r.out + n - 5, "done\n") == 0);
	ASSERT(strstr(r.err, "deadlock") == NULL);
	st_child_free(&r);
}

/* ---- TestGoNil ----
 * Go: "go of nil func value", a fatal error (exit 2). */
WSR_TEST_TIMEOUT(TestGoNil, 30)
{
	struct st_child r;

	child(&r, "GoNil");
	if (st_code(&r) != 2)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.err, "go of nil func value");
	st_child_free(&r);
}

/* ---- TestMutexMisuse (Mutex.Unlock2) ----
 * Lock, unlock, unlock: the program must fail, with a message about an
 * unlocked lock (Go checks only those two things). */
WSR_TEST_TIMEOUT(TestMutexMisuse_Unlock2, 30)
{
	struct st_child r;

	child(&r, "MutexUnlock2");
	ASSERT_NE(st_code(&r), 0);
	ASSERT_HAS(r.err, "unlocked");
	ASSERT(strstr(r.out, "test completed") == NULL);
	st_child_free(&r);
}

/* ---- TestBigGOMAXPROCS ----
 * WSRMAXPROCS=1024 must not crash at start-up (Go issue 38474); Go skips
 * when the machine cannot make the threads, so does this. */
WSR_TEST_TIMEOUT(TestBigGOMAXPROCS, 30)
{
	struct st_child r;

	setenv("WSRMAXPROCS", "1024", 1);
	child(&r, "Hello");
	if (strstr(r.err, "cannot allocate memory") != NULL ||
	    strstr(r.err, "Resource temporarily unavailable") != NULL)
		wsrtest_skip("failed to create 1024 threads");
	if (st_code(&r) != 0)
		wsrtest_fail(__FILE__, __LINE__, "exit %d, stderr:\n%s", st_code(&r), r.err);
	ASSERT_HAS(r.out, "hello from 1024 Ps");
	st_child_free(&r);
}

/* ---- TestMainGoroutineID ----
 * The main G is goroutine 1 (Go checks the panic traceback's header;
 * tests/sync/test-fatal.c checks the deadlock report's). */
static int mainid_main(void *arg)
{
	(void)arg;
	ASSERT_EQ(wsr_self_id(), 1);
	return 0;
}

WSR_TEST_TIMEOUT(TestMainGoroutineID, 30)
{
	GT_RUN("TestMainGoroutineID", mainid_main, NULL);
}
