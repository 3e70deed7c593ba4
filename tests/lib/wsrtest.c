/*
 * wsrtest.c - runs every WSR_TEST case in a child process under alarm(),
 * prints TAP.
 *
 * Each child is this executable re-executed (fork + exec) with
 * WSRTEST_CASE=name: a plain fork of a process that already runs threads
 * (LTTng-UST starts its listener threads at load) is unsafe, and
 * ThreadSanitizer refuses to start threads after one.
 *
 * Invariants:
 *   - A case passes only if its child exits 0; a signal, a non-zero exit or
 *     the alarm is a failure, reported with the reason as a TAP comment.
 *   - A child that exits WSRTEST_SKIP_STATUS (wsrtest_skip) is reported as
 *     "ok N - name # SKIP"; a known-bug case is reported so without running
 *     unless WSR_TEST_KNOWN_BUGS=1.
 *   - The process exits 1 if any case failed, 0 otherwise.
 * Concurrency: the parent is single-threaded; each child is one case.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wsrtest.h"

extern const struct wsrtest_case __start_wsr_tests[];
extern const struct wsrtest_case __stop_wsr_tests[];

void wsrtest_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "# %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	_exit(1);
}

/* Exit status of a skipped case (the autotools/meson convention). */
#define WSRTEST_SKIP_STATUS 77

void wsrtest_skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stderr);
	printf("# skip: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	_exit(WSRTEST_SKIP_STATUS);
}

long wsrtest_scale(void)
{
	const char *s = getenv("WSR_STRESS_SCALE");
	long v = s != NULL ? strtol(s, NULL, 10) : 1;

	return v > 0 ? v : 1;
}

long wsrtest_sanitizer_divisor(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return 10;
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	return 10;
# endif
#endif
	return 1;
}

static unsigned timeout_multiplier(void)
{
	const char *s = getenv("WSR_TEST_TIMEOUT_MULTIPLIER");
	long v = s != NULL ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (unsigned)v : 1;
}

static char **self_argv;
static char self_path[4096]; /* this executable (readlink: valgrind virtualises it) */

/* 1 passed, 0 failed, -1 skipped. */
static int run_case(const struct wsrtest_case *tc)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("# fork");
		return 0;
	}
	if (pid == 0) {
		setenv("WSRTEST_CASE", tc->name, 1);
		alarm(tc->timeout_s * timeout_multiplier());
		execv(self_path, self_argv);
		perror("# exec");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == WSRTEST_SKIP_STATUS)
		return -1;
	if (WIFSIGNALED(status))
		printf("# %s: killed by signal %d (%s)%s\n", tc->name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)),
		       WTERMSIG(status) == SIGALRM ? " - timed out" : "");
	else
		printf("# %s: exit status %d\n", tc->name, WEXITSTATUS(status));
	return 0;
}

static int by_line(const void *a, const void *b)
{
	const struct wsrtest_case *x = *(const struct wsrtest_case *const *)a;
	const struct wsrtest_case *y = *(const struct wsrtest_case *const *)b;

	return (x->line > y->line) - (x->line < y->line);
}

int main(int argc, char **argv)
{
	const char *filter = getenv("WSR_TEST_FILTER");
	size_t total = (size_t)(__stop_wsr_tests - __start_wsr_tests), k;
	const struct wsrtest_case **cases = calloc(total + 1, sizeof(*cases));
	const struct wsrtest_case *tc;
	int n = 0, i = 0, failed = 0;

	const char *only = getenv("WSRTEST_CASE");
	const char *bugs = getenv("WSR_TEST_KNOWN_BUGS");
	int run_bugs = bugs != NULL && strcmp(bugs, "1") == 0;

	(void)argc;
	self_argv = argv;
	{
		ssize_t len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

		if (len <= 0) {
			perror("# readlink /proc/self/exe");
			return 1;
		}
		self_path[len] = '\0';
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cases == NULL)
		return 1;
	if (only != NULL) {
		/* The child side of run_case: run one case, exit 0 if it returns. */
		free(cases);
		for (k = 0; k < total; k++)
			if (strcmp(__start_wsr_tests[k].name, only) == 0) {
				__start_wsr_tests[k].fn();
				fflush(stdout);
				return 0;
			}
		fprintf(stderr, "# no test case named %s\n", only);
		return 1;
	}
	for (k = 0; k < total; k++)
		cases[k] = &__start_wsr_tests[k];
	qsort(cases, total, sizeof(*cases), by_line);
	for (k = 0; k < total; k++)
		if (filter == NULL || strstr(cases[k]->name, filter) != NULL)
			n++;
	printf("1..%d\n", n);
	for (k = 0; k < total; k++) {
		tc = cases[k];
		if (filter != NULL && strstr(tc->name, filter) == NULL)
			continue;
		i++;
		if (tc->known_bug != NULL && !run_bugs) {
			printf("ok %d - %s # SKIP known bug: %s\n", i, tc->name, tc->known_bug);
			continue;
		}
		switch (run_case(tc)) {
		case 1:
			printf("ok %d - %s\n", i, tc->name);
			break;
		case -1:
			printf("ok %d - %s # SKIP\n", i, tc->name);
			break;
		default:
			printf("not ok %d - %s\n", i, tc->name);
			failed++;
		}
	}
	free(cases);
	return failed != 0;
}
