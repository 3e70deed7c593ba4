/*
 * record.c - drives lttng-tools for `wsr run`: session daemon, session,
 * channel, events, process tracker, start/stop/destroy.
 *
 * Every step runs the `lttng` command-line tool with fork/exec and an argv
 * built here, never a shell string. The CLI was preferred to liblttng-ctl
 * because the CLI ships with lttng-tools (no extra -dev package) and its
 * messages are the ones users already know, quoted here as causes. Eight
 * short commands cost well under a second per recording.
 *
 * Loss counts are not taken from the tracer's statistics (`lttng --mi xml
 * list`): with lttng-tools 2.13.9 and per-UID buffers its discarded_events
 * came back with bit 63 set after some runs. The trace's own packet
 * indexes are exact and cheap (trace_index_read() in trace_index.c).
 *
 * Invariants:
 *   - A session created here is always destroyed by the caller, on every
 *     path (cmd_run.c), so no session outlives `wsr run`; if `wsr run` is
 *     killed (SIGKILL), its watchdog process destroys it, and the next
 *     `wsr run` destroys any session named like ours whose wsr run is gone
 *     (record_sweep_orphans: both may be killed at once).
 *   - The session daemon is stopped only if a wsr run started it, by the
 *     last of the wsr runs that use it, and only when it holds no session
 *     (record_daemon_acquire/release: a lock file shared by the runs).
 *   - As root there is one session daemon per machine (/var/run/lttng),
 *     whatever LTTNG_HOME says; concurrent recordings are told apart by
 *     session name and by the vpid tracker, not by private daemons.
 * Concurrency: single-threaded; record_spawn() waits for each tool (`lttng
 *   stop` and `lttng destroy` for at most 20 s: record_session_stop/destroy).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

/* Sleeps MS milliseconds (polling helpers only). */
static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Milliseconds since T0 (CLOCK_MONOTONIC). */
static long elapsed_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * record_spawn(), bounded: with TIMEOUT_MS >= 0, a tool still running after
 * that long is killed (SIGKILL) and reaped, and RECORD_TIMED_OUT is returned.
 */
static int spawn_bounded(struct wsr_err *err, char *const argv[], char **out, long timeout_ms)
{
	int pfd[2] = {-1, -1}, status, ret = -1;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct timespec t0;
	pid_t pid;

	if (out != NULL)
		*out = NULL;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		err_push(err, "pipe: %s", strerror(errno));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		sigset_t none;

		/* A tool (or a daemon) must not inherit wsr run's ignored or blocked signals. */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(out != NULL ? pfd[1] : devnull, STDOUT_FILENO);
		dup2(out != NULL ? pfd[1] : devnull, STDERR_FILENO);
		execvp(argv[0], argv);
		dprintf(pfd[1], "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (nb == NULL) {
				err_push(err, "out of memory");
				break;
			}
			buf = nb;
			cap += 65536;
		}
		if (timeout_ms >= 0) {
			struct pollfd pl = {.fd = pfd[0], .events = POLLIN};
			long left = timeout_ms - elapsed_ms(&t0);
			int pr = left > 0 ? poll(&pl, 1, (int)left) : 0;

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0) {
				kill(pid, SIGKILL);
				while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
					;
				err_push(err, "`%s %s` did not finish in %ld s: killed it", argv[0],
					 argv[1] != NULL ? argv[1] : "", timeout_ms / 1000);
				ret = RECORD_TIMED_OUT;
				goto out;
			}
		}
		n = read(pfd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err_push(err, "waitpid %s: %s", argv[0], strerror(errno));
			goto out;
		}
	}
	if (buf != NULL)
		buf[len] = '\0';
	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	else
		ret = 128 + WTERMSIG(status);
	if (ret == 127 && buf != NULL && strncmp(buf, "cannot run ", 11) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		err_push(err, "%s", buf);
		ret = -1;
		goto out;
	}
	if (out != NULL) {
		*out = buf;
		buf = NULL;
	}
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	free(buf);
	return ret;
}

int record_spawn(struct wsr_err *err, char *const argv[], char **out)
{
	return spawn_bounded(err, argv, out, -1);
}

/*
 * Pushes the most telling line of a failed lttng command's output: its
 * "Error: ..." line if there is one, else its last non-empty line.
 */
static void push_tool_output(struct wsr_err *err, const char *output)
{
	const char *best = NULL, *last = NULL, *line = output;

	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		size_t n = end != NULL ? (size_t)(end - line) : strlen(line);

		if (n > 0) {
			last = line;
			if (best == NULL && strncmp(line, "Error:", 6) == 0)
				best = line;
		}
		line = end != NULL ? end + 1 : NULL;
	}
	if (best == NULL)
		best = last;
	if (best != NULL)
		err_push(err, "%.*s", (int)strcspn(best, "\n"), best);
}

/*
 * Runs `lttng ARG0 AP...` (NULL-terminated), killed after TIMEOUT_MS when
 * that is >= 0. On failure pushes the tool's own message and then "lttng
 * CMD failed", and returns -1 (RECORD_TIMED_OUT when it was killed). With
 * OUT, keeps its output.
 */
static int lttng_v(struct wsr_err *err, char **out, long timeout_ms, const char *arg0, va_list ap)
{
	const char *argv[24];
	char *output = NULL;
	int argc = 0, status, ret = -1;

	argv[argc++] = "lttng";
	argv[argc++] = arg0;
	while (argc < 23) {
		const char *a = va_arg(ap, const char *);

		if (a == NULL)
			break;
		argv[argc++] = a;
	}
	argv[argc] = NULL;

	status = spawn_bounded(err, (char *const *)argv, &output, timeout_ms);
	if (status == RECORD_TIMED_OUT)
		return RECORD_TIMED_OUT;
	if (status < 0) {
		err_push(err, "lttng-tools is needed to record (Debian: apt install lttng-tools)");
		goto out;
	}
	if (status != 0) {
		push_tool_output(err, output != NULL ? output : "");
		err_push(err, "`lttng %s` failed (exit status %d)",
				strcmp(arg0, "--mi") == 0 ? argv[3] : arg0, status);
		goto out;
	}
	if (out != NULL) {
		*out = output;
		output = NULL;
	}
	ret = 0;
out:
	free(output);
	return ret;
}

/* lttng_v(), unbounded. */
static int lttng(struct wsr_err *err, char **out, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = lttng_v(err, out, -1, arg0, ap);
	va_end(ap);
	return ret;
}

/* lttng_v(), killed after TIMEOUT_MS. */
static int lttng_bounded(struct wsr_err *err, long timeout_ms, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = lttng_v(err, NULL, timeout_ms, arg0, ap);
	va_end(ap);
	return ret;
}

int record_sessiond_reachable(void)
{
	char *const argv[] = {"lttng", "list", NULL};
	struct wsr_err ignored;

	err_init(&ignored);
	return record_spawn(&ignored, argv, NULL) == 0;
}

/* The session daemon's run directory: /var/run/lttng for root, else $LTTNG_HOME|$HOME/.lttng. */
static int sessiond_rundir(char *path, size_t size)
{
	const char *home;

	if (geteuid() == 0) {
		snprintf(path, size, "/var/run/lttng");
		return 0;
	}
	home = getenv("LTTNG_HOME");
	if (home == NULL)
		home = getenv("HOME");
	if (home == NULL)
		return -1;
	snprintf(path, size, "%s/.lttng", home);
	return 0;
}

/* The running daemon's pid (its pid file), or 0. */
static pid_t sessiond_read_pid(void)
{
	char path[4096];
	FILE *f;
	long pid = 0;

	if (sessiond_rundir(path, sizeof(path) - 32) != 0)
		return 0;
	strcat(path, "/lttng-sessiond.pid");
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

int record_sessiond_start(struct wsr_err *err, pid_t *pid)
{
	char *const argv[] = {"lttng-sessiond", "--daemonize", NULL};
	char *output = NULL;
	int status, ret = -1;

	*pid = 0;
	/* --daemonize returns once the daemon answers client commands. */
	status = record_spawn(err, argv, &output);
	if (status < 0) {
		err_push(err, "lttng-tools is needed to record (Debian: apt install lttng-tools)");
		goto out;
	}
	if (status != 0) {
		/* Another `wsr run` may have started one at the same moment: use it. */
		for (int i = 0; i < 50; i++) {
			if (record_sessiond_reachable()) {
				ret = 0;
				goto out;
			}
			sleep_ms(100);
		}
		push_tool_output(err, output != NULL ? output : "");
		err_push(err, "cannot start lttng-sessiond (exit status %d)", status);
		goto out;
	}
	for (int i = 0; i < 100 && !record_sessiond_reachable(); i++)
		sleep_ms(100);
	if (!record_sessiond_reachable()) {
		err_push(err, "lttng-sessiond started but does not answer `lttng list`");
		goto out;
	}
	*pid = sessiond_read_pid();
	ret = 0;
out:
	free(output);
	return ret;
}

/* Whether process PID runs the program NAME (its /proc comm, which the
 * kernel cuts to 15 bytes). */
static bool has_comm(pid_t pid, const char *name)
{
	char comm[64], path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, name, strlen(name) < 15 ? strlen(name) : 15) == 0;
}

/* The pids (up to MAX) whose parent is PID: a session daemon's consumer
 * daemons. Read from /proc before the daemon is killed: once it is gone
 * they are init's children. */
static int children_of(pid_t pid, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while (n < max && (e = readdir(d)) != NULL) {
		char path[64], buf[512];
		long child = strtol(e->d_name, NULL, 10);
		if (child <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", child);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* "pid (comm) state ppid ...": comm may hold spaces, the last ')' ends it */
		char *rp = strrchr(buf, ')');
		char state;
		long ppid;
		if (rp != NULL && sscanf(rp + 1, " %c %ld", &state, &ppid) == 2 && ppid == pid)
			out[n++] = (pid_t)child;
	}
	closedir(d);
	return n;
}

/* Whether PID is gone within MS milliseconds. */
static bool gone_within(pid_t pid, long ms)
{
	for (long waited = 0;; waited += 50) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return true;
		if (waited >= ms)
			return false;
		sleep_ms(50);
	}
}

int record_sessiond_stop(struct wsr_err *err, pid_t pid)
{
	char *output = NULL;
	pid_t kids[16];
	int ret = -1, nkids;

	if (pid <= 0)
		return 0;
	if (lttng(err, &output, "--mi", "xml", "list", NULL) != 0) {
		err_push(err, "listing sessions before stopping lttng-sessiond %d", (int)pid);
		goto out;
	}
	if (strstr(output, "<session>") != NULL) {
		ret = 1;
		goto out;
	}
	nkids = children_of(pid, kids, 16);
	if (kill(pid, SIGTERM) != 0 && errno != ESRCH) {
		err_push(err, "stopping lttng-sessiond %d: %s", (int)pid, strerror(errno));
		goto out;
	}
	/* Not our child (it daemonized): poll until it is gone, 10 s at most. */
	if (gone_within(pid, 10000)) {
		ret = 0;
		goto out;
	}
	/*
	 * A daemon whose consumer waits for a sub-buffer that a killed thread
	 * never committed does not finish its teardown: seen after programs
	 * killed mid-event, each such daemon left running for good, its socket
	 * and pid file already removed, so that the next run started another.
	 * It is of no use to anyone now: kill it, and its consumer daemons,
	 * which it would have stopped.
	 */
	fprintf(stderr,
		"wsr run: warning: lttng-sessiond %d still ran 10 s after SIGTERM (its consumer "
		"waited for data that a killed program never committed?): killed it and its %d "
		"consumer daemon%s\n",
		(int)pid, nkids, nkids == 1 ? "" : "s");
	kill(pid, SIGKILL);
	for (int i = 0; i < nkids; i++)
		if (has_comm(kids[i], "lttng-consumerd"))
			kill(kids[i], SIGKILL);
	if (gone_within(pid, 2000)) {
		ret = 0;
		goto out;
	}
	err_push(err, "lttng-sessiond %d still runs after SIGKILL", (int)pid);
out:
	free(output);
	return ret;
}

/*
 * The session daemon shared by concurrent wsr runs. Without a protocol, a
 * run that started the daemon and ends first could stop it between another
 * run's `lttng list` (which found it) and that run's `lttng create` (which
 * then fails), or kill it with the other's new session inside. So:
 *   - every run holds a shared flock on RUNDIR/wsr-run.lock from before it
 *     looks for a daemon until its session is destroyed (the watchdog holds
 *     the same lock, inherited, until it exits);
 *   - a run that starts the daemon (under RUNDIR/wsr-run.start, held
 *     exclusively: start_serialized) writes its pid into that file: the fact
 *     "a wsr run started this daemon" belongs to the file, not to the run;
 *   - at its end a run tries to take the lock exclusively without waiting:
 *     only the last of the concurrent runs gets it, and it stops the daemon
 *     the file names, if that is still the running daemon and it holds no
 *     session (a user's own sessions, or a test's, keep it running).
 * The file is opened O_CLOEXEC: PROGRAM and the lttng tools never hold it.
 * A lock file that cannot be opened falls back to "stop what we started".
 */
/*
 * Starts the session daemon unless another user (a wsr run, a test) started
 * one meanwhile: two that both found none and both ran `lttng-sessiond
 * --daemonize` at once left two daemons, one of them unreachable and never
 * stopped (seen in the test suite, 2026-12-02). RUNDIR/wsr-run.start, held
 * exclusively around "reachable? else start", makes the second one find the
 * first one's daemon (tests/lib/lttngd.py takes the same lock). *PID is the
 * daemon this call started, 0 if none.
 */
static int start_serialized(struct wsr_err *err, pid_t *pid)
{
	char path[4096];
	int fd = -1, i, ret;

	*pid = 0;
	if (sessiond_rundir(path, sizeof(path) - 32) == 0) {
		strcat(path, "/wsr-run.start");
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	}
	/* A start takes 10 s at most (record_sessiond_start). */
	for (i = 0; fd >= 0 && i < 600 && flock(fd, LOCK_EX | LOCK_NB) != 0; i++) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			break; /* no locking here: start unserialized */
		sleep_ms(50);
	}
	ret = record_sessiond_reachable() ? 0 : record_sessiond_start(err, pid);
	if (fd >= 0)
		close(fd); /* and the lock with it */
	return ret;
}

int record_daemon_acquire(struct wsr_err *err, struct record_daemon *d)
{
	char path[4096];
	int i;

	d->lock_fd = -1;
	d->started = 0;
	if (sessiond_rundir(path, sizeof(path) - 32) == 0) {
		/* lttng-sessiond creates the same directory with these modes. */
		mkdir(path, geteuid() == 0 ? 0755 : 0700);
		strcat(path, "/wsr-run.lock");
		d->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	}
	/* An exclusive holder is stopping the daemon: at most the 10 s of record_sessiond_stop. */
	for (i = 0; d->lock_fd >= 0 && i < 600; i++) {
		if (flock(d->lock_fd, LOCK_SH | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(d->lock_fd); /* no locking here (a file system without it) */
			d->lock_fd = -1;
			break;
		}
		sleep_ms(50);
	}
	if (d->lock_fd >= 0 && i == 600) {
		err_push(err, "%s stayed locked for 30 s (a wsr run stopping lttng-sessiond?)", path);
		close(d->lock_fd);
		d->lock_fd = -1;
		return -1;
	}
	if (record_sessiond_reachable())
		return 0;
	if (start_serialized(err, &d->started) != 0)
		return -1;
	if (d->started > 0 && d->lock_fd >= 0) {
		char buf[32];
		int n = snprintf(buf, sizeof(buf), "%d\n", (int)d->started);

		if (ftruncate(d->lock_fd, 0) != 0 || pwrite(d->lock_fd, buf, (size_t)n, 0) != n) {
			/* Then the daemon is stopped as before: by this run, if no session. */
		}
	}
	return 0;
}

/* The pid in the lock file if it names the running lttng-sessiond, else 0. */
static pid_t daemon_named(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	if (pid <= 0 || (pid_t)pid != sessiond_read_pid())
		return 0;
	return has_comm((pid_t)pid, "lttng-sessiond") ? (pid_t)pid : 0;
}

int record_daemon_release(struct wsr_err *err, struct record_daemon *d)
{
	pid_t pid;
	int ret = 0;

	if (d->lock_fd < 0) {
		ret = d->started > 0 ? record_sessiond_stop(err, d->started) : 0;
		d->started = 0;
		return ret < 0 ? -1 : 0;
	}
	/* Not the last wsr run (the conversion drops our shared lock either way). */
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) != 0)
		goto out;
	pid = daemon_named(d->lock_fd);
	if (pid > 0)
		ret = record_sessiond_stop(err, pid);
	if (pid == 0 || ret == 0) {
		if (ftruncate(d->lock_fd, 0) != 0) {
			/* A stale pid is checked against the running daemon anyway. */
		}
	}
out:
	close(d->lock_fd);
	d->lock_fd = -1;
	d->started = 0;
	return ret < 0 ? -1 : 0;
}

int record_session_create(struct wsr_err *err, const char *session, const char *out_dir,
			  const struct record_opts *opts)
{
	char output_arg[4200], subbuf[64], nsubbuf[64];

	snprintf(output_arg, sizeof(output_arg), "--output=%s", out_dir);
	snprintf(subbuf, sizeof(subbuf), "--subbuf-size=%" PRIu64, opts->subbuf_size);
	snprintf(nsubbuf, sizeof(nsubbuf), "--num-subbuf=%" PRIu64, opts->num_subbuf);

	if (lttng(err, NULL, "create", session, output_arg, NULL) != 0)
		return -1;
	/*
	 * Per-UID buffers outlive the traced process, so a program that exits
	 * right after its last event loses nothing; the vpid tracker keeps
	 * other processes of the same user out of this session's buffers.
	 */
	if (lttng(err, NULL, "enable-channel", "--userspace", "--session", session,
		  "--buffers-uid", subbuf, nsubbuf,
		  opts->lossless ? "--blocking-timeout=inf" : "--discard", RECORD_CHANNEL,
		  NULL) != 0)
		return -1;
	if (lttng(err, NULL, "enable-event", "--userspace", "--session", session, "--channel",
		  RECORD_CHANNEL, "wsr:*", NULL) != 0)
		return -1;
	/*
	 * No context fields: every wsr event carries vtid and vpid in its
	 * payload (tracepoints/wsr_tp.h), at no cost beyond its one write, and
	 * cpu_id is in every packet context (one stream per CPU).
	 */
	return 0;
}

int record_session_track(struct wsr_err *err, const char *session, pid_t pid)
{
	char vpid[64];

	/* The inclusion set starts as "all"; tracking one vpid makes it {pid}. */
	snprintf(vpid, sizeof(vpid), "--vpid=%d", (int)pid);
	return lttng(err, NULL, "track", "--userspace", "--session", session, vpid, NULL);
}

int record_session_start(struct wsr_err *err, const char *session)
{
	return lttng(err, NULL, "start", session, NULL);
}

/*
 * Without --no-wait, `lttng stop` returns once the consumer has written every
 * buffer. When the program was killed while one of its threads was writing
 * an event (abort() or a fault beside a running M), that event's sub-buffer
 * is never committed, the consumer reports data pending forever, and `lttng
 * stop` never returns (seen: a program that abort()s after a burst, lossy
 * run, 1 in about 20 on a loaded machine). So the wait is bounded: after
 * RECORD_STOP_TIMEOUT_MS the tool is killed and the session stopped with
 * --no-wait; the trace then lacks what the consumer had not written, and
 * RECORD_UNFLUSHED says so.
 */
int record_session_stop(struct wsr_err *err, const char *session)
{
	struct wsr_err again;
	int n0 = err->n;
	int rc = lttng_bounded(err, RECORD_STOP_TIMEOUT_MS, "stop", session, NULL);

	if (rc != RECORD_TIMED_OUT)
		return rc;
	err->n = n0;
	err_init(&again);
	/* The daemon stopped the session before the client began to wait: this
	 * one says "already stopped" then, which is what we want. */
	(void)lttng(&again, NULL, "stop", "--no-wait", session, NULL);
	fprintf(stderr,
		"wsr run: warning: the tracer still had data to write %d s after `lttng stop %s` "
		"(a thread of the program was killed while writing an event?): stopped without "
		"it, so the end of the trace may miss events that no loss count includes\n",
		RECORD_STOP_TIMEOUT_MS / 1000, session);
	return RECORD_UNFLUSHED;
}

/* 1 when `lttng list` (reached) no longer lists SESSION, 0 when it does, -1 unknown. */
static int session_gone(const char *session)
{
	struct wsr_err ignored;
	char *output = NULL, name[160];
	int gone;

	err_init(&ignored);
	if (lttng(&ignored, &output, "--mi", "xml", "list", NULL) != 0)
		return -1;
	snprintf(name, sizeof(name), "<name>%s</name>", session);
	gone = strstr(output, name) == NULL;
	free(output);
	return gone;
}

/*
 * `lttng destroy` returns when the session daemon reports the destruction
 * complete. lttng-sessiond 2.13.9 never reports it while its consumer waits
 * for a sub-buffer that the traced program never committed: a thread of it
 * was killed between reserving an event and committing it (seen in 1 run of
 * 20 to 150 of a program that abort()s after a burst, on a loaded machine;
 * tests/tracing/crash-midwrite.c makes it happen every time with a program
 * that the runtime's freeze does not cover). That sub-buffer's events are
 * then missing from the trace, with no loss count. So the wait is bounded:
 * after RECORD_DESTROY_TIMEOUT_MS the tool is killed, `lttng destroy
 * --no-wait` makes sure the session is gone, and the destroy succeeds once
 * `lttng list` no longer lists it, returning RECORD_UNFLUSHED (with a
 * warning) when the session had been stopped: its trace may miss events.
 */
int record_session_destroy(struct wsr_err *err, const char *session, enum record_destroy how)
{
	struct wsr_err again;
	int n0 = err->n;
	int rc = how != RECORD_DESTROY_UNFLUSHED
			 ? lttng_bounded(err, RECORD_DESTROY_TIMEOUT_MS, "destroy", session, NULL)
			 : lttng(err, NULL, "destroy", "--no-wait", session, NULL);

	if (rc != RECORD_TIMED_OUT)
		return rc;
	err_init(&again);
	(void)lttng(&again, NULL, "destroy", "--no-wait", session, NULL); /* "not found" if gone */
	if (session_gone(session) != 1) {
		err_push(err, "LTTng session %s is still there", session);
		return -1;
	}
	fprintf(stderr,
		"wsr run: warning: `lttng destroy %s` did not finish in %d s: the session daemon "
		"never reported the destruction complete (its consumer waits for data that a "
		"thread killed while writing an event never committed?); the session is gone, %s\n",
		session, RECORD_DESTROY_TIMEOUT_MS / 1000,
		how == RECORD_DESTROY_STOPPED
			? "and the end of the trace may miss events that no loss count includes"
			: "but it was still recording, so the trace may miss its last data");
	err->n = n0;
	return how == RECORD_DESTROY_STOPPED ? RECORD_UNFLUSHED : 0;
}

/*
 * The watchdog. A SIGKILL of `wsr run` runs none of its clean-up, so a
 * child process does it: it waits on a pipe whose write end only `wsr run`
 * holds. `wsr run` writes one byte when the session is gone
 * (record_watchdog_release); EOF without that byte means `wsr run` died,
 * and the watchdog destroys the session and releases the session daemon as
 * `wsr run` would have (record_daemon_release). PROGRAM itself dies with
 * `wsr run` by PR_SET_PDEATHSIG (cmd_run.c). The watchdog ignores the
 * terminal's signals: it must outlive a Ctrl-C that ends `wsr run`.
 */
pid_t record_watchdog_start(struct wsr_err *err, const char *session, const char *trace_dir,
			    struct record_daemon daemon, int *fd)
{
	int pfd[2];
	pid_t pid;

	*fd = -1;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		err_push(err, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		struct wsr_err werr;
		char c;
		ssize_t r;
		int devnull = open("/dev/null", O_RDWR);

		close(pfd[1]);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
			close(devnull);
		}
		do
			r = read(pfd[0], &c, 1);
		while (r < 0 && errno == EINTR);
		if (r == 1)
			_exit(0); /* released: wsr run cleaned up itself */
		err_init(&werr);
		if (record_session_destroy(&werr, session, RECORD_DESTROY_RUNNING) == 0)
			fprintf(stderr,
				"wsr run: the recorder was killed; destroyed its LTTng session %s "
				"(the trace in %s may be incomplete)\n",
				session, trace_dir);
		err_init(&werr);
		record_daemon_release(&werr, &daemon);
		_exit(0);
	}
	close(pfd[0]);
	*fd = pfd[1];
	return pid;
}

void record_watchdog_release(int *fd, pid_t *pid)
{
	if (*fd >= 0) {
		if (write(*fd, "d", 1) != 1) {
			/* The watchdog is gone: nothing to release. */
		}
		close(*fd);
		*fd = -1;
	}
	if (*pid > 0) {
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		*pid = -1;
	}
}

int record_sweep_orphans(struct wsr_err *err)
{
	char *output = NULL;
	const char *p;
	int n = 0;

	if (lttng(err, &output, "--mi", "xml", "list", NULL) != 0)
		return -1;
	for (p = output; (p = strstr(p, "<session><name>wsr-")) != NULL;) {
		char name[128];
		long long pid, sec, nsec;
		size_t len;
		const char *start = p + strlen("<session><name>");
		const char *end = strstr(start, "</name>");
		char tail;

		p = start;
		if (end == NULL)
			break;
		len = (size_t)(end - start);
		if (len >= sizeof(name))
			continue;
		memcpy(name, start, len);
		name[len] = '\0';
		/* Only names of the form `wsr run` gives its sessions. */
		if (sscanf(name, "wsr-%lld-%lld-%lld%c", &pid, &sec, &nsec, &tail) != 3 ||
		    pid <= 0 || pid > INT32_MAX)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* its wsr run may still be running */
		struct wsr_err derr;

		err_init(&derr);
		if (record_session_destroy(&derr, name, RECORD_DESTROY_RUNNING) == 0) {
			fprintf(stderr,
				"wsr run: destroyed LTTng session %s, left by a wsr run (pid %lld) "
				"that was killed\n",
				name, pid);
			n++;
		}
	}
	free(output);
	return n;
}
