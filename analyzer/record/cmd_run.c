/*
 * cmd_run.c - `wsr run [--out DIR] [--lossless] [--subbuf-size SIZE]
 * [--num-subbuf N] -- PROGRAM ARGS`: records a trace of PROGRAM with LTTng,
 * then ingests and reports it (run_postprocess) or prints where it is.
 *
 * The sequence, and why:
 *   1. Take a share of the session daemon (record_daemon_acquire): a
 *      shared lock, then find one (`lttng list`) or start one. Only a daemon
 *      a wsr run started is stopped, by the last concurrent wsr run to end,
 *      and only when it holds no session. Destroy the sessions of earlier wsr
 *      runs that were killed with their watchdog (record_sweep_orphans),
 *      then start this run's watchdog, which cleans up if we are SIGKILLed.
 *   2. Create a uniquely named session (wsr-PID-SECONDS-NANOS) writing to
 *      DIR, one per-UID channel "wsr" (4 MiB x 8 sub-buffers by default,
 *      blocking with --lossless), enable wsr:* (vtid and vpid are payload fields).
 *   3. Fork PROGRAM paused: the child blocks on a pipe before exec, so the
 *      session can track its vpid alone and start before its first event;
 *      PR_SET_PDEATHSIG makes it die with us.
 *      Two concurrent `wsr run`s therefore never see each other's events.
 *   4. Release it with LTTNG_UST_REGISTER_TIMEOUT=-1 in its environment
 *      (unless the user set one): lttng-ust then waits in its constructor
 *      until the session daemon has set the process up, so even a program
 *      that exits at once keeps its events. --lossless adds
 *      LTTNG_UST_ALLOW_BLOCKING=1, without which the channel's blocking
 *      timeout is ignored by the application.
 *   5. While it runs, SIGINT and SIGQUIT are ignored here (the terminal
 *      sends them to PROGRAM, which shares our process group), SIGTERM and
 *      SIGHUP are forwarded, so the session is always stopped and destroyed.
 *      Before and after that window (set-up, stop, destroy) the four are
 *      blocked, so they wait instead of leaving a session behind.
 *   6. `lttng stop` (returns once flushed), `lttng destroy`, then count
 *      the discarded events and lost packets from the trace's packet
 *      indexes (exact, and no event needs decoding) and warn if any.
 *   7. Write DIR/wsr-run.json (program, argv, vpid, exit status, wall time,
 *      channel geometry, losses): the trace does not name the program.
 *   8. run_postprocess(): ingest + report in this process (ingest_main,
 *      report_main), both on our stderr (stdout is PROGRAM's); with
 *      --no-ingest, the trace path and what its packet indexes say (the
 *      index read of step 6: no event is decoded twice).
 *
 * Exit status: PROGRAM's own (128 + n when killed by signal n), except 2 for
 * a usage error, 1 when recording failed before PROGRAM ran or when PROGRAM
 * succeeded but the trace could not be recorded or post-processed, and
 * 127 when PROGRAM cannot be executed (as env(1) and timeout(1) do).
 *
 * Invariants:
 *   - A session created here is destroyed on every path; if wsr run is
 *     killed (SIGKILL), its watchdog (record.c) destroys it and PROGRAM dies
 *     by PR_SET_PDEATHSIG.
 *   - The child never runs PROGRAM unless the session tracks it and has
 *     started; if setting that up fails it exits 127 without exec.
 * Concurrency: single-threaded; the signal handler only forwards a signal
 *   to the child pid, which is set before the handlers are installed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "ingest.h"
#include "record.h"
#include "sbuf.h"

#define PREFIX "wsr run"

enum {
	OPT_LOSSLESS = CLI_LONG,
	OPT_SUBBUF_SIZE,
	OPT_NUM_SUBBUF,
	OPT_NO_INGEST
};

static const struct cli_opt run_opts[] = {
	{"out", 'o', "DIR",
	 "trace directory (default ./wsr-traces/PROGRAM-YYYYMMDD-HHMMSS);\n"
	 "must not exist or be empty"},
	{"lossless", OPT_LOSSLESS, NULL,
	 "blocking mode: nothing is discarded, PROGRAM waits for the consumer"},
	{"subbuf-size", OPT_SUBBUF_SIZE, "SIZE",
	 "sub-buffer size, e.g. 4M (default), 256k; a power of two"},
	{"num-subbuf", OPT_NUM_SUBBUF, "N", "sub-buffers per CPU (default 8); a power of two"},
	{"no-ingest", OPT_NO_INGEST, NULL,
	 "only record: print the trace path and what its packet indexes\n"
	 "say, skip the ingest and the report"},
	{NULL, 0, NULL, NULL},
};

static const struct cli run_cli = {
	.prog = PREFIX,
	.synopsis = "wsr run [--out DIR] [--lossless] [--subbuf-size SIZE] [--num-subbuf N] "
		    "[--no-ingest]\n"
		    "               -- PROGRAM [ARGS...]",
	.about = "Records a trace of PROGRAM's scheduler events (LTTng provider `wsr`), then\n"
		 "ingests it (DIR/trace.db) and prints the report (see wsr-run(1)).",
	.epilog =
		"The report (or the summary) goes to stderr; stdout is PROGRAM's.\n"
		"Exit status: PROGRAM's (128+N if killed by signal N); 1 if recording failed; 2 usage.",
	.opts = run_opts,
	.in_order = true, /* options end at PROGRAM, whose own options are its own */
	.min_args = 1,
	.max_args = -1,
	.missing = "no PROGRAM to run",
};

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* Parses "4M", "256k", "1MiB", "65536" into bytes; -1 if malformed or zero. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v, mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || v == 0 || s[0] == '-')
		return -1;
	if (*end == 'k' || *end == 'K')
		mul = 1u << 10;
	else if (*end == 'm' || *end == 'M')
		mul = 1u << 20;
	else if (*end == 'g' || *end == 'G')
		mul = 1u << 30;
	if (mul != 1) {
		end++;
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
	}
	if (*end != '\0' || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* mkdir -p PATH (mode 0755); 0 or -1 with errno. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* 1 if DIR exists and holds anything (or is not a directory), 0 if absent or empty, -1 on error. */
static int dir_nonempty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (d == NULL)
		return errno == ENOENT ? 0 : errno == ENOTDIR ? 1 : -1;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			ret = 1;
			break;
		}
	}
	closedir(d);
	return ret;
}

/*
 * Chooses and creates the trace directory; DIR gets its absolute path.
 * Returns 0, -1 (failure), or -2 (usage: --out names a non-empty directory).
 */
static int make_out_dir(struct wsr_err *err, const char *opt_out, const char *program,
			char *dir, size_t dirsz)
{
	char rel[PATH_MAX];

	if (opt_out != NULL) {
		int ne = dir_nonempty(opt_out);

		if (ne != 0) {
			err_push(err, ne > 0 ? "--out %s: exists and is not an empty directory"
						    : "--out %s: %s",
					opt_out, strerror(errno));
			return ne > 0 ? -2 : -1;
		}
		if (mkdir_p(opt_out) != 0) {
			err_push(err, "creating %s: %s", opt_out, strerror(errno));
			return -1;
		}
		snprintf(rel, sizeof(rel), "%s", opt_out);
	} else {
		const char *base = strrchr(program, '/');
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;

		base = base != NULL ? base + 1 : program;
		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		if (mkdir_p("wsr-traces") != 0) {
			err_push(err, "creating wsr-traces: %s", strerror(errno));
			return -1;
		}
		/* mkdir claims the name atomically; a concurrent run gets the next suffix. */
		for (int i = 1;; i++) {
			if (i == 1)
				snprintf(rel, sizeof(rel), "wsr-traces/%s-%s", base, stamp);
			else
				snprintf(rel, sizeof(rel), "wsr-traces/%s-%s-%d", base, stamp, i);
			if (mkdir(rel, 0755) == 0)
				break;
			if (errno != EEXIST || i > 1000) {
				err_push(err, "creating %s: %s", rel, strerror(errno));
				return -1;
			}
		}
	}
	if (realpath(rel, dir) == NULL || strlen(dir) >= dirsz) {
		err_push(err, "resolving %s: %s", rel, strerror(errno));
		return -1;
	}
	return 0;
}

/* Prints where the trace is and what its packet indexes say (--no-ingest). */
static void print_summary(const char *trace_dir, const struct trace_index *ix)
{
	fprintf(stderr, PREFIX ": trace: %s\n", trace_dir);
	if (ix->streams == 0) {
		fprintf(stderr, PREFIX ": warning: no events were recorded (is PROGRAM linked with "
				"libwsr built with -Dtracing=enabled?)\n");
		return;
	}
	fprintf(stderr,
		PREFIX ": %" PRIu64 " streams, %" PRIu64 " packets, %" PRIu64 " bytes; "
		       "in the trace: %" PRIu64 " events discarded, %" PRIu64 " packets lost "
		       "(`wsr ingest` counts the events)\n",
		ix->streams, ix->packets, ix->bytes, ix->discarded_events, ix->lost_packets);
}

/*
 * Writes DIR/wsr-run.json: what was recorded and how, for the analyzer (the
 * trace itself does not name the program). Written to a temporary name and
 * renamed, so it is whole or absent.
 */
static int write_run_info(struct wsr_err *err, const char *dir, char **prog_argv, pid_t pid,
			  int exit_code, int exit_signal, double wall_s,
			  const struct record_opts *opts, const char *session, int unflushed,
			  const struct trace_index *ix)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	FILE *f;

	snprintf(path, sizeof(path), "%s/wsr-run.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		err_push(err, "writing %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"program\": ");
	json_fputs(f, prog_argv[0]);
	fprintf(f, ",\n  \"argv\": [");
	for (int i = 0; prog_argv[i] != NULL; i++) {
		if (i > 0)
			fputs(", ", f);
		json_fputs(f, prog_argv[i]);
	}
	fprintf(f,
		"],\n  \"vpid\": %d,\n  \"exit_status\": %d,\n  \"exit_signal\": %d,\n"
		"  \"wall_s\": %.6f,\n",
		(int)pid, exit_code, exit_signal, wall_s);
	fprintf(f, "  \"lossless\": %s,\n  \"subbuf_size\": %" PRIu64 ",\n  \"num_subbuf\": %" PRIu64
		   ",\n",
		opts->lossless ? "true" : "false", opts->subbuf_size, opts->num_subbuf);
	fprintf(f, "  \"flushed\": %s,\n", unflushed ? "false" : "true");
	fprintf(f, "  \"session\": ");
	json_fputs(f, session);
	fprintf(f,
		",\n  \"discarded_events\": %" PRIu64 ",\n  \"lost_packets\": %" PRIu64
		",\n  \"streams\": %" PRIu64 ",\n  \"packets\": %" PRIu64
		",\n  \"stream_bytes\": %" PRIu64 "\n}\n",
		ix->discarded_events, ix->lost_packets, ix->streams, ix->packets, ix->bytes);
	if (ferror(f) | fclose(f)) {
		err_push(err, "writing %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		err_push(err, "renaming %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * run_postprocess - the step after recording: `wsr ingest TRACE -o
 * TRACE/trace.db`, then `wsr report TRACE/trace.db`, both in this process
 * (ingest_main, report_main) with their output on stderr (stdout is
 * PROGRAM's). Returns 0, or the failing step's exit status (> 0).
 */
static int run_postprocess(struct wsr_err *err, const char *trace_dir)
{
	struct ingest_opts o = {.timeout_s = 30, .progress = isatty(STDERR_FILENO)};
	char db[PATH_MAX + 16];
	int rc;

	snprintf(db, sizeof(db), "%s/trace.db", trace_dir);
	fprintf(stderr, PREFIX ": trace: %s\n", trace_dir);
	rc = ingest_main(trace_dir, db, &o, false);
	if (rc != 0) {
		err_push(err, "`wsr ingest %s -o %s` failed (exit status %d)", trace_dir, db, rc);
		return rc;
	}
	rc = report_main(db, stderr);
	if (rc != 0) {
		err_push(err, "`wsr report %s` failed (exit status %d)", db, rc);
		return rc;
	}
	return 0;
}

/*
 * Forks PROGRAM paused on GO_FD; it execs once a byte arrives there, with
 * the signal mask MASK, and reports an exec failure's errno on EXEC_FD
 * (close-on-exec, so EOF there means the exec succeeded).
 */
static pid_t spawn_paused(struct wsr_err *err, char **prog_argv, int lossless,
			  const sigset_t *mask, int *go_fd, int *exec_fd)
{
	int go[2], ex[2];
	pid_t pid, parent = getpid();

	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0) {
		err_push(err, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;
		ssize_t r;
		int e;

		close(go[1]);
		close(ex[0]);
		/* PROGRAM dies with wsr run, even by SIGKILL (kept across exec). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		do
			r = read(go[0], &c, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127); /* the recorder gave up: never run untraced */
		if (getenv("LTTNG_UST_REGISTER_TIMEOUT") == NULL)
			setenv("LTTNG_UST_REGISTER_TIMEOUT", "-1", 1);
		if (lossless)
			setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 1);
		/* The caller's mask: a Ctrl-C that came during set-up is delivered now. */
		sigprocmask(SIG_SETMASK, mask, NULL);
		execvp(prog_argv[0], prog_argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	*go_fd = go[1];
	*exec_fd = ex[0];
	return pid;
}

struct run_args {
	struct record_opts opts;
	const char *out;
	int no_ingest;
};

static int run_opt(void *ctx, int key, const char *arg)
{
	struct run_args *a = ctx;

	switch (key) {
	case OPT_LOSSLESS:
		a->opts.lossless = 1;
		break;
	case OPT_NO_INGEST:
		a->no_ingest = 1;
		break;
	case 'o':
		if (*arg == '\0') {
			fprintf(stderr, PREFIX ": error: --out needs a value\n");
			return 2;
		}
		a->out = arg;
		break;
	case OPT_SUBBUF_SIZE:
		if (parse_size(arg, &a->opts.subbuf_size) != 0 || !is_pow2(a->opts.subbuf_size) ||
		    a->opts.subbuf_size < 4096) {
			fprintf(stderr,
				PREFIX ": error: --subbuf-size '%s': want a power of two >= 4k, "
				       "e.g. 4M\n",
				arg);
			return 2;
		}
		break;
	case OPT_NUM_SUBBUF:
		if (parse_size(arg, &a->opts.num_subbuf) != 0 || !is_pow2(a->opts.num_subbuf) ||
		    a->opts.num_subbuf < 2) {
			fprintf(stderr,
				PREFIX
				": error: --num-subbuf '%s': want a power of two >= 2, e.g. 8\n",
				arg);
			return 2;
		}
		break;
	}
	return 0;
}

/* One run's state, shared by its steps; the cleanup (run_fail, cmd_run's
 * epilogue) reads it to undo exactly what was done. */
struct run {
	struct wsr_err err;
	struct record_opts opts;
	char **prog_argv;
	char dir[PATH_MAX], session[96];
	sigset_t stop_sigs, old_mask; /* the four stop signals; the caller's mask */
	struct record_daemon daemon;  /* our share of the session daemon */
	pid_t watchdog;
	int watchdog_fd;
	pid_t pid;	       /* PROGRAM until reaped, else -1 */
	pid_t child_pid_saved; /* PROGRAM's pid, for wsr-run.json */
	int go_fd, exec_fd;    /* spawn_paused's pipes, -1 once closed */
	int session_made, child_ran, record_failed, no_ingest;
	int unflushed; /* `lttng stop` gave up on the last data (record_session_stop) */
	int status, exit_code;
	struct timespec t_start, t_end;
};

/* Steps 1-3 of the sequence: a session daemon, the watchdog, the session,
 * PROGRAM forked paused and tracked, the session started. */
static int run_setup(struct run *r)
{
	if (record_daemon_acquire(&r->err, &r->daemon) != 0) {
		err_push(&r->err, "no LTTng session daemon is reachable and none could be started");
		return -1;
	}
	if (r->daemon.started == 0) {
		/* Sessions of wsr runs that were killed with their watchdog. */
		struct wsr_err sweep;

		err_init(&sweep);
		record_sweep_orphans(&sweep);
	}
	r->watchdog = record_watchdog_start(&r->err, r->session, r->dir, r->daemon,
					    &r->watchdog_fd);
	if (r->watchdog < 0)
		return -1;
	if (record_session_create(&r->err, r->session, r->dir, &r->opts) != 0) {
		r->session_made = 1; /* create may have succeeded before a later step failed */
		err_push(&r->err, "setting up LTTng session %s", r->session);
		return -1;
	}
	r->session_made = 1;
	r->pid = spawn_paused(&r->err, r->prog_argv, r->opts.lossless, &r->old_mask, &r->go_fd,
			      &r->exec_fd);
	if (r->pid < 0)
		return -1;
	if (record_session_track(&r->err, r->session, r->pid) != 0 ||
	    record_session_start(&r->err, r->session) != 0) {
		err_push(&r->err, "setting up LTTng session %s", r->session);
		return -1;
	}

	/* A stop signal that came during set-up cancels the run before PROGRAM starts. */
	static const int stops[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	sigset_t pend;

	if (sigpending(&pend) == 0) {
		for (size_t k = 0; k < sizeof(stops) / sizeof(stops[0]); k++) {
			if (sigismember(&pend, stops[k])) {
				err_push(&r->err, "interrupted by signal %d (%s) before %s started",
					 stops[k], strsignal(stops[k]), r->prog_argv[0]);
				return -1; /* cleans up; unblocking in cmd_run delivers it */
			}
		}
	}
	return 0;
}

/* Steps 4-5: releases PROGRAM and waits for it, with the terminal's signals
 * its own and the polite ones forwarded; the stop signals are blocked again
 * on return. -1 if anything failed (r->err says what). */
static int run_program(struct run *r)
{
	struct sigaction ign = {0}, fwd = {0}, old_int, old_quit, old_term, old_hup;

	/* From here PROGRAM owns the terminal's signals; we forward the polite ones. */
	child_pid = r->pid;
	r->child_pid_saved = r->pid;
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	fwd.sa_handler = forward_signal;
	sigemptyset(&fwd.sa_mask);
	fwd.sa_flags = SA_RESTART;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	sigprocmask(SIG_SETMASK, &r->old_mask, NULL);

	clock_gettime(CLOCK_MONOTONIC, &r->t_start);
	if (write(r->go_fd, "g", 1) != 1) {
		err_push(&r->err, "releasing %s: %s", r->prog_argv[0], strerror(errno));
		goto restore;
	}
	close(r->go_fd);
	r->go_fd = -1;
	{
		int e = 0;
		ssize_t n;

		do
			n = read(r->exec_fd, &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(e)) {
			fprintf(stderr, PREFIX ": error: cannot run %s: %s\n", r->prog_argv[0],
				strerror(e));
			r->exit_code = 127;
		} else {
			r->child_ran = 1;
		}
	}
	while (waitpid(r->pid, &r->status, 0) < 0) {
		if (errno != EINTR) {
			err_push(&r->err, "waitpid: %s", strerror(errno));
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &r->t_end);
	r->pid = -1;
	if (r->child_ran)
		r->exit_code = WIFEXITED(r->status) ? WEXITSTATUS(r->status)
						    : 128 + WTERMSIG(r->status);
restore:
	sigprocmask(SIG_BLOCK, &r->stop_sigs, NULL);
	child_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return r->err.n > 0 ? -1 : 0;
}

/* Steps 6-8: stop and destroy the session, then (if PROGRAM ran) count the
 * losses, write wsr-run.json and post-process. */
static int run_finish(struct run *r)
{
	struct trace_index ix;
	double wall_s;
	int rc;

	rc = record_session_stop(&r->err, r->session);
	if (rc != 0 && rc != RECORD_UNFLUSHED) {
		err_push(&r->err, "finishing LTTng session %s", r->session);
		return -1;
	}
	r->unflushed = rc == RECORD_UNFLUSHED;
	rc = record_session_destroy(&r->err, r->session,
				    r->unflushed ? RECORD_DESTROY_UNFLUSHED : RECORD_DESTROY_STOPPED);
	r->session_made = 0;
	if (rc == RECORD_UNFLUSHED)
		r->unflushed = 1;
	else if (rc != 0)
		return -1;
	/* The watchdog first: it holds our lock too, and the last run stops the daemon. */
	record_watchdog_release(&r->watchdog_fd, &r->watchdog);
	if (record_daemon_release(&r->err, &r->daemon) < 0) {
		err_print(&r->err, PREFIX, stderr); /* not fatal: the trace is complete */
		r->err.n = 0;
	}
	/* The session is gone: a Ctrl-C that came meanwhile may end us now. */
	sigprocmask(SIG_SETMASK, &r->old_mask, NULL);
	if (!r->child_ran)
		return 0;
	wall_s = (double)(r->t_end.tv_sec - r->t_start.tv_sec) +
		 (double)(r->t_end.tv_nsec - r->t_start.tv_nsec) / 1e9;
	if (WIFSIGNALED(r->status))
		fprintf(stderr, PREFIX ": %s was killed by signal %d (%s) after %.3f s\n",
			r->prog_argv[0], WTERMSIG(r->status), strsignal(WTERMSIG(r->status)),
			wall_s);
	else
		fprintf(stderr, PREFIX ": %s exited with status %d after %.3f s\n",
			r->prog_argv[0], r->exit_code, wall_s);
	/* libwsr lets a dying process finish the events it is writing (its
	 * tpfreeze.c), but nothing can when SIGKILL ends it. */
	if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGKILL && !r->unflushed) {
		fprintf(stderr,
			PREFIX ": warning: SIGKILL ends a program wherever its threads are: one "
			       "killed while writing an event leaves the rest of its sub-buffer "
			       "unwritten, so the end of the trace may miss events that no loss "
			       "count includes\n");
		r->unflushed = 1;
	}
	if (trace_index_read(&r->err, r->dir, &ix) != 0) {
		err_push(&r->err, "reading the packet indexes of %s", r->dir);
		return -1;
	}
	if (write_run_info(&r->err, r->dir, r->prog_argv, r->child_pid_saved, r->exit_code,
			   WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0, wall_s, &r->opts,
			   r->session, r->unflushed, &ix) != 0)
		return -1;
	if (ix.discarded_events > 0 || ix.lost_packets > 0)
		fprintf(stderr,
			PREFIX ": warning: the tracer discarded %" PRIu64 " events and lost %" PRIu64
			       " packets; figures that depend on them are incomplete (raise "
			       "--subbuf-size/--num-subbuf%s)\n",
			ix.discarded_events, ix.lost_packets,
			r->opts.lossless ? "" : " or use --lossless");
	if (r->no_ingest) {
		print_summary(r->dir, &ix);
	} else if ((rc = run_postprocess(&r->err, r->dir)) != 0) {
		/* A stop signal interrupted the ingest: say so as a shell would (128 + N). */
		if (rc > 128 && r->exit_code == 0)
			r->exit_code = rc;
		return -1;
	}
	return 0;
}

/* After a failed step: says why, kills and reaps PROGRAM if it is still
 * there, destroys the session and stops a daemon we started. */
static void run_fail(struct run *r)
{
	r->record_failed = 1;
	err_print(&r->err, PREFIX, stderr);
	if (r->pid > 0) {
		/* Never released (or released and not reaped): kill, then reap. */
		if (r->go_fd >= 0) {
			close(r->go_fd);
			r->go_fd = -1;
		} else {
			kill(r->pid, SIGKILL);
		}
		while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
			;
	}
	if (r->session_made) {
		struct wsr_err cleanup;

		err_init(&cleanup);
		if (record_session_destroy(&cleanup, r->session, RECORD_DESTROY_RUNNING) != 0 &&
		    strstr(cleanup.msg[0], "not found") == NULL)
			err_print(&cleanup, PREFIX, stderr);
	}
	if (r->daemon.lock_fd >= 0 || r->daemon.started > 0) {
		struct wsr_err cleanup;

		err_init(&cleanup);
		record_watchdog_release(&r->watchdog_fd, &r->watchdog);
		if (record_daemon_release(&cleanup, &r->daemon) < 0)
			err_print(&cleanup, PREFIX, stderr);
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_args ra = {{RECORD_DEFAULT_SUBBUF_SIZE, RECORD_DEFAULT_NUM_SUBBUF, 0}, NULL, 0};
	struct run r;
	struct timespec now;
	int rc, i;

	memset(&r, 0, sizeof(r));
	err_init(&r.err);
	r.pid = -1;
	r.watchdog = -1;
	r.watchdog_fd = -1;
	r.daemon.lock_fd = -1;
	r.child_pid_saved = -1;
	r.go_fd = -1;
	r.exec_fd = -1;
	r.exit_code = 1;

	rc = cli_parse(&run_cli, argc, argv, run_opt, &ra, &i);
	if (rc >= 0)
		return rc;
	r.prog_argv = argv + i;
	r.opts = ra.opts;
	r.no_ingest = ra.no_ingest;

	rc = make_out_dir(&r.err, ra.out, r.prog_argv[0], r.dir, sizeof(r.dir));
	if (rc != 0) {
		err_print(&r.err, PREFIX, stderr);
		return rc == -2 ? 2 : 1;
	}
	/*
	 * Until the session is destroyed, stop signals wait (blocked) instead of
	 * killing us half-way and leaving a session behind; PROGRAM gets its own
	 * copies when it unblocks them before exec.
	 */
	sigemptyset(&r.stop_sigs);
	sigaddset(&r.stop_sigs, SIGINT);
	sigaddset(&r.stop_sigs, SIGQUIT);
	sigaddset(&r.stop_sigs, SIGTERM);
	sigaddset(&r.stop_sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &r.stop_sigs, &r.old_mask);

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(r.session, sizeof(r.session), "wsr-%d-%lld-%09ld", (int)getpid(),
		 (long long)now.tv_sec, now.tv_nsec);

	if (run_setup(&r) < 0 || run_program(&r) < 0 || run_finish(&r) < 0)
		run_fail(&r);

	record_watchdog_release(&r.watchdog_fd, &r.watchdog);
	sigprocmask(SIG_SETMASK, &r.old_mask, NULL);
	if (r.go_fd >= 0)
		close(r.go_fd);
	if (r.exec_fd >= 0)
		close(r.exec_fd);
	if (r.record_failed && (!r.child_ran || r.exit_code == 0))
		r.exit_code = 1;
	return r.exit_code;
}
