/*
 * synctest.c - the watchdog, st_run and the forking capture helpers for the
 * tests/sync cases (see synctest.h).
 *
 * Invariants:
 *   - Captured streams are read with poll() on both pipes until both hit
 *     EOF, so a child that fills one pipe never blocks on it.
 *   - A child that outlives its deadline is killed with SIGKILL and reported
 *     as -SIGKILL by st_code().
 * Concurrency: the watchdog thread is detached and never joined; the case
 *   process _exit()s when the test ends.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "san.h"
#include "synctest.h"
#include "throw.h"
#include "wsrtest.h"

struct wd {
	char msg[160];
	unsigned secs;
};

static void *watchdog_main(void *arg)
{
	struct wd *w = arg;
	struct timespec ts = {(time_t)w->secs, 0};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	wsr__throw(w->msg);
	return NULL;
}

static unsigned multiplier(void)
{
	const char *s = getenv("WSR_TEST_TIMEOUT_MULTIPLIER");
	long v = s != NULL ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (unsigned)v : 1;
}

void st_watchdog(const char *name, unsigned secs)
{
	static struct wd w;
	pthread_t t;

	snprintf(w.msg, sizeof(w.msg), "watchdog: %s hung", name);
	w.secs = secs * multiplier();
	if (pthread_create(&t, NULL, watchdog_main, &w) != 0)
		wsrtest_fail(__FILE__, __LINE__, "watchdog: pthread_create failed");
	pthread_detach(t);
}

void st_run(const char *name, int procs, int (*fn)(void *), void *arg, unsigned secs)
{
	char buf[16];
	int rc;

	if (procs > 0) {
		snprintf(buf, sizeof(buf), "%d", procs);
		setenv("WSRMAXPROCS", buf, 1);
	}
	st_watchdog(name, secs);
	rc = wsr_main(fn, arg);
	if (rc != 0)
		wsrtest_fail(__FILE__, __LINE__, "%s: main G returned %d", name, rc);
}

static void slurp(int fds[2], char *bufs[2])
{
	size_t len[2] = {0, 0}, cap[2] = {0, 0};
	int open = 2, i;

	for (i = 0; i < 2; i++) {
		cap[i] = 4096;
		bufs[i] = malloc(cap[i]);
		bufs[i][0] = '\0';
	}
	while (open > 0) {
		struct pollfd pf[2];
		int n = 0, map[2];

		for (i = 0; i < 2; i++)
			if (fds[i] >= 0) {
				pf[n].fd = fds[i];
				pf[n].events = POLLIN;
				map[n++] = i;
			}
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < n; k++) {
			ssize_t r;

			i = map[k];
			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (len[i] + 4096 + 1 > cap[i]) {
				cap[i] *= 2;
				bufs[i] = realloc(bufs[i], cap[i]);
			}
			r = read(fds[i], bufs[i] + len[i], cap[i] - len[i] - 1);
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				close(fds[i]);
				fds[i] = -1;
				open--;
				continue;
			}
			len[i] += (size_t)r;
			bufs[i][len[i]] = '\0';
		}
	}
}

static void collect(struct st_child *r, pid_t pid, int fds[2], unsigned secs)
{
	char *bufs[2];
	pid_t killer;

	/* A helper process kills the child if it outlives its deadline. */
	killer = fork();
	if (killer == 0) {
		sleep(secs * multiplier());
		kill(pid, SIGKILL);
		_exit(0);
	}
	slurp(fds, bufs);
	r->out = bufs[0];
	r->err = bufs[1];
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
		;
	if (killer > 0) {
		kill(killer, SIGKILL);
		waitpid(killer, NULL, 0);
	}
}

static pid_t fork_piped(int fds[2])
{
	int po[2], pe[2];
	pid_t pid;

	if (pipe(po) != 0 || pipe(pe) != 0)
		wsrtest_fail(__FILE__, __LINE__, "pipe failed");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		wsrtest_fail(__FILE__, __LINE__, "fork failed");
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return 0;
	}
	close(po[1]);
	close(pe[1]);
	fds[0] = po[0];
	fds[1] = pe[0];
	return pid;
}

void st_fork(struct st_child *r, void (*fn)(void *), void *arg, unsigned secs)
{
	int fds[2];
	pid_t pid = fork_piped(fds);

	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(0);
	}
	collect(r, pid, fds, secs);
}

void st_exec(struct st_child *r, char *const argv[], unsigned secs)
{
	int fds[2];
	pid_t pid = fork_piped(fds);

	if (pid == 0) {
		execv(argv[0], argv);
		perror("execv");
		_exit(127);
	}
	collect(r, pid, fds, secs);
}

void st_child_free(struct st_child *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int st_code(const struct st_child *r)
{
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return -WTERMSIG(r->status);
	return -1000;
}

bool st_asan(void)
{
	return WSR_SAN_ASAN != 0;
}

bool st_tsan(void)
{
	return WSR_SAN_TSAN != 0;
}

unsigned long long st_rand(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}
