/*
 * go-crash-child.c - the programs go-crash.c runs as child processes, one
 * per scenario (argv[1]), as Go's crash_test.go runs testdata/testprog:
 * SimpleDeadlock (main blocks in an empty select), NetpollDeadlock (the
 * network poller was used, then main returns), GoNil (wsr_go(NULL)),
 * MutexUnlock2 (sync's misuse test: unlock twice), Hello (for
 * TestBigGOMAXPROCS: a program that just starts and exits).
 *
 * A separate executable rather than a fork: the test process already runs
 * threads, and TSan refuses to start threads after a multi-threaded fork.
 *
 * Invariants: each scenario is the whole program; WSRMAXPROCS comes from the
 *   environment; the exit status is wsr_main's (or the runtime's own).
 * Concurrency: the runtime's.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <wsr.h>

static int simple_deadlock_main(void *arg)
{
	(void)arg;
	wsr_select(NULL, 0, 1); /* Go: select {} */
	printf("not reached\n");
	return 0;
}

static int pipefd[2];

static void late_writer(void *arg)
{
	(void)arg;
	wsr_sleep_ns(5000000);
	if (wsr_write(pipefd[1], "x", 1) != 1)
		fprintf(stderr, "write failed\n");
}

/* Go's NetpollDeadlock resolves an address in init (the poller starts);
 * main then just prints "done". Here main parks in wsr_read until a G
 * writes, so the poller has really waited, then prints "done". */
static int netpoll_main(void *arg)
{
	char c;

	(void)arg;
	if (pipe(pipefd) != 0)
		return 3;
	wsr_go(late_writer, NULL);
	if (wsr_read(pipefd[0], &c, 1) != 1)
		return 4;
	close(pipefd[0]);
	close(pipefd[1]);
	printf("done\n");
	return 0;
}

static int go_nil_main(void *arg)
{
	(void)arg;
	wsr_go(NULL, NULL);
	wsr_sleep_ns(10000000);
	printf("not reached\n");
	return 0;
}

static int unlock2_main(void *arg)
{
	wsr_mutex *mu = wsr_mutex_make();

	(void)arg;
	wsr_mutex_lock(mu);
	wsr_mutex_unlock(mu);
	wsr_mutex_unlock(mu);
	printf("test completed\n");
	return 0;
}

static int hello_main(void *arg)
{
	(void)arg;
	printf("hello from %d Ps\n", wsr_gomaxprocs());
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void *);
} scenarios[] = {
	{"SimpleDeadlock", simple_deadlock_main},
	{"NetpollDeadlock", netpoll_main},
	{"GoNil", go_nil_main},
	{"MutexUnlock2", unlock2_main},
	{"Hello", hello_main},
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: go-crash-child SCENARIO\n");
		return 125;
	}
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(argv[1], scenarios[i].name) == 0)
			return wsr_main(scenarios[i].fn, NULL);
	fprintf(stderr, "go-crash-child: no scenario %s\n", argv[1]);
	return 125;
}
