/*
 * dchild.c - the decoder child and its pipe protocol (dchild.h).
 *
 * Design. The bt2 graph source.ctf.fs -> muxer -> simple sink (decode.c)
 * runs in a forked child and streams framed records (recframe.h) through a
 * pipe. What is left of bt2's misbehaviour on damaged input (a loop, an
 * abort) then cannot take the analyzer down or hang it: the child is killed
 * after --timeout seconds without progress, and a crash is reported as a
 * corrupted trace. The two processes also run on the two cores: decoding
 * overlaps everything the reader does with the records.
 *
 * Invariants: see dchild.h. The reader's buffer holds at most one partial
 *   record after each read (it is moved to the front), so 8 MiB is always
 *   room for the next whole record (REC_FRAME_MAX).
 * Concurrency: the parent reads in the calling thread; the child only
 *   writes the pipe and never returns from child_main().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dchild.h"
#include "decode.h"
#include "recframe.h"

#define READ_BUF (8u << 20)

static volatile sig_atomic_t interrupted;

void dchild_interrupt(int sig)
{
	interrupted = sig;
}

int dchild_interrupted(void)
{
	return (int)interrupted;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the child ---- */

struct writer {
	int fd;
	char *buf;
	size_t len, cap;
};

static int wflush(struct writer *w)
{
	size_t off = 0;

	while (off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	w->len = 0;
	return 0;
}

static int child_cb(void *ctx, const struct wsr_rec *r, const char *extra)
{
	struct writer *w = ctx;

	if (w->len + r->size > w->cap && wflush(w) < 0)
		return -1;
	w->len += rec_put(w->buf + w->len, r, extra);
	if (r->type == REC_END || r->type == REC_ERROR)
		return wflush(w);
	return 0;
}

static void child_main(int fd, const struct pre *pr)
{
	struct writer w = {.fd = fd, .cap = 1 << 20};
	struct wsr_err err;

	err_init(&err);
	w.buf = malloc(w.cap);
	if (w.buf == NULL)
		_exit(1);
	if (decode_trace_dirs((const char *const *)pr->dirs, pr->ndirs, child_cb, &w, &err) < 0) {
		/* The causes, innermost first, one per line (the parent pushes
		 * them one by one so none is cut short). */
		char msg[WSR_REC_MAX_EXTRA / 2];
		size_t off = 0;
		msg[0] = '\0';
		for (int i = 0; i < err.n && off + 2 < sizeof(msg); i++) {
			int k = snprintf(msg + off, sizeof(msg) - off, "%s%s", i ? "\n" : "",
					 err.msg[i]);
			if (k < 0)
				break;
			off += (size_t)k;
		}
		struct wsr_rec r = {.type = REC_ERROR};
		rec_frame(&r, strlen(msg) + 1);
		w.len = 0;
		child_cb(&w, &r, msg);
		_exit(2);
	}
	wflush(&w);
	_exit(0);
}

static pid_t spawn(const struct pre *pr, const struct dchild_opts *o, int fds[2],
		   struct wsr_err *err)
{
	pid_t parent = getpid();

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	close(fds[0]);
	if (o->close_fd >= 0)
		close(o->close_fd);
	/* Killed with the parent, whatever kills it (a parent that died
	 * before the prctl is seen by the check after it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
	/* bt2 may print assertion failures: keep them off the user's terminal
	 * unless asked; the parent reports a crash itself. */
	if (!o->verbose) {
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0) {
			dup2(dn, 2);
			close(dn);
		}
	}
	child_main(fds[1], pr);
	_exit(1);
}

/* ---- the parent ---- */

struct reader {
	int fd;
	char *buf;
	size_t len;
	bool got_end, timed_out;
	char child_msg[WSR_REC_MAX_EXTRA];
};

/* Hands the whole records in rd->buf to the sink; keeps a partial one. */
static int take_records(struct reader *rd, const struct dchild_sink *sink, struct wsr_err *err)
{
	size_t off = 0;
	const struct wsr_rec *r;
	const char *extra;
	int k;

	while ((k = rec_next(rd->buf + off, rd->len - off, &r, &extra)) > 0) {
		if (r->type == REC_END)
			rd->got_end = true;
		else if (r->type == REC_ERROR)
			snprintf(rd->child_msg, sizeof(rd->child_msg), "%s",
				 extra != NULL ? extra : "");
		else if (sink->rec(sink->ctx, r, extra, err) < 0)
			return -1;
		off += r->size;
	}
	if (k < 0) {
		err_push(err, "internal: bad record from the decoder");
		return -1;
	}
	memmove(rd->buf, rd->buf + off, rd->len - off);
	rd->len -= off;
	return 0;
}

/* Reads until the child closes the pipe or stalls for o->timeout_s. */
static int read_loop(struct reader *rd, const struct dchild_opts *o, const struct dchild_sink *sink,
		     struct wsr_err *err)
{
	double last_data = now_s(), last_tick = 0;

	for (;;) {
		if (interrupted) {
			err_push(err, "interrupted by signal %d", (int)interrupted);
			return -1;
		}
		struct pollfd pfd = {.fd = rd->fd, .events = POLLIN};
		int prc = poll(&pfd, 1, 250);
		if (prc < 0 && errno != EINTR) {
			err_push(err, "poll: %s", strerror(errno));
			return -1;
		}
		double t = now_s();
		if (prc <= 0) {
			if (t - last_data > o->timeout_s) {
				rd->timed_out = true;
				return 0;
			}
			continue;
		}
		ssize_t n = read(rd->fd, rd->buf + rd->len, READ_BUF - rd->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_push(err, "reading from the decoder: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		last_data = t;
		rd->len += (size_t)n;
		if (take_records(rd, sink, err) < 0)
			return -1;
		if (sink->tick != NULL && t - last_tick > 0.25) {
			sink->tick(sink->ctx);
			last_tick = t;
		}
	}
}

/* How the child ended, as the user should hear it. */
static int reap(pid_t pid, struct reader *rd, const char *dir, const struct dchild_opts *o,
		const struct dchild_sink *sink, struct wsr_err *err)
{
	int status = 0;
	uint64_t n = sink->events(sink->ctx);

	if (rd->timed_out) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		err_input(err,
			  "%s: babeltrace2 made no progress for %d s after %" PRIu64
			  " events: the metadata or a stream is probably truncated or corrupted",
			  dir, o->timeout_s, n);
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0) {
		err_push(err, "waitpid: %s", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		err_input(err,
			  "%s: babeltrace2 crashed (%s) after %" PRIu64
			  " events: a stream or the metadata is corrupted",
			  dir, strsignal(WTERMSIG(status)), n);
		return -1;
	}
	if (rd->child_msg[0] != '\0' || WEXITSTATUS(status) != 0 || !rd->got_end) {
		if (rd->child_msg[0] == '\0')
			err_push(err, "the decoder exited with status %d", WEXITSTATUS(status));
		for (char *line = rd->child_msg; line != NULL && *line != '\0';) {
			char *nl = strchr(line, '\n');
			if (nl != NULL)
				*nl = '\0';
			err_push(err, "%s", line);
			line = nl != NULL ? nl + 1 : NULL;
		}
		err_input(err, "%s: cannot decode the trace after %" PRIu64 " events", dir, n);
		return -1;
	}
	return 0;
}

/* This process's thread count (/proc/self/status), 0 if unknown (and under
 * TSan, whose runtime keeps a thread of its own and handles fork). */
static int thread_count(void)
{
#if defined(__SANITIZE_THREAD__)
	return 0;
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
	return 0;
# endif
#endif
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

int dchild_start(struct dchild *dc, const struct pre *pr, const struct dchild_opts *o,
		 struct wsr_err *err)
{
	int fds[2] = {-1, -1};
	int nt = thread_count();

	dc->pid = -1;
	dc->fd = -1;
	if (nt > 1) {
		err_push(err, "internal error: the decoder is forked beside %d other threads "
			      "(dchild.h: start it before any thread)", nt - 1);
		return -1;
	}
	if (pipe(fds) < 0) {
		err_push(err, "pipe: %s", strerror(errno));
		return -1;
	}
	/* A 1 MiB pipe (the default is 64 KiB): the decoder writes 1 MiB at a
	 * time, so each side sleeps and wakes up 16 times less often. Best
	 * effort: the limit may be lower (/proc/sys/fs/pipe-max-size). */
	(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	dc->pid = spawn(pr, o, fds, err);
	close(fds[1]);
	if (dc->pid < 0) {
		close(fds[0]);
		return -1;
	}
	dc->fd = fds[0];
	return 0;
}

void dchild_stop(struct dchild *dc)
{
	if (dc->pid > 0) {
		kill(dc->pid, SIGKILL);
		waitpid(dc->pid, NULL, 0);
	}
	if (dc->fd >= 0)
		close(dc->fd);
	dc->pid = -1;
	dc->fd = -1;
}

int dchild_run(struct dchild *dc, const char *dir, const struct dchild_opts *o,
	       const struct dchild_sink *sink, struct wsr_err *err)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	int ret = -1;

	if (rd == NULL || (rd->buf = malloc(READ_BUF)) == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	rd->fd = dc->fd;
	if (read_loop(rd, o, sink, err) < 0)
		goto out;
	ret = reap(dc->pid, rd, dir, o, sink, err);
	dc->pid = -1; /* reaped */
out:
	dchild_stop(dc);
	if (rd != NULL)
		free(rd->buf);
	free(rd);
	return ret;
}

int dchild_decode(const struct pre *pr, const char *dir, const struct dchild_opts *o,
		  const struct dchild_sink *sink, struct wsr_err *err)
{
	struct dchild dc;

	if (dchild_start(&dc, pr, o, err) < 0)
		return -1;
	return dchild_run(&dc, dir, o, sink, err);
}
