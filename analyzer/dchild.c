/*
 * dchild.c - the decoder child and its protocol (dchild.h).
 *
 * Design. The bt2 graph source.ctf.fs -> muxer -> simple sink (decode.c)
 * runs in a forked child and hands framed records (recframe.h) to this
 * process. What is left of bt2's misbehaviour on damaged input (a loop, an
 * abort) then cannot take the analyzer down or hang it: the child is killed
 * after --timeout seconds without progress, and a crash is reported as a
 * corrupted trace. The two processes also run on the two cores: decoding
 * overlaps everything the reader does with the records.
 *
 * Transport. The records travel in NSEG segments of SEG_SIZE bytes of
 * memory shared by the two processes (mapped before the fork); a
 * SOCK_SEQPACKET socket pair carries only 8-byte tokens: "segment i holds
 * len bytes of whole records" from the child, "segment i is free" back. The
 * child fills a free segment in place and sends it; the reader hands its
 * records to the sink where they lie and sends the segment back. So the
 * 80-byte records (800 MB for a 10M-event trace) are written once and read
 * once, where a pipe copied them into the kernel and out again (about
 * 0.5 s of CPU on that trace, perf). The socket keeps what the pipe gave:
 * poll() for the progress timeout, EOF when the child ends or dies.
 *
 * Invariants: see dchild.h. A segment is the child's from the moment it is
 *   free until it sends its token, then the reader's until it sends it
 *   back; every record lies whole in one segment (REC_FRAME_MAX <=
 *   SEG_SIZE), and a token whose segment is not whole records is a
 *   protocol error.
 * Concurrency: the parent reads in the calling thread; the child only
 *   fills segments and never returns from child_main().
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dchild.h"
#include "decode.h"
#include "recframe.h"

/* 8 segments of 1 MiB (dchild.h): the child fills one while the reader takes
 * another, and each side wakes up once per MiB of records at most. */
#define SEG_SIZE DCHILD_SEG_SIZE
#define NSEG DCHILD_NSEG
_Static_assert(REC_FRAME_MAX <= SEG_SIZE, "a record must fit a segment");

/* One token: segment `seg` holds `len` bytes of records (child to parent),
 * or is free (parent to child, len 0). */
struct token {
	uint32_t seg, len;
};

/* Sends one token; false if the other side is gone (no SIGPIPE). */
static bool send_token(int sock, uint32_t seg, uint32_t len)
{
	struct token t = {seg, len};

	for (;;) {
		ssize_t n = send(sock, &t, sizeof(t), MSG_NOSIGNAL);
		if (n == (ssize_t)sizeof(t))
			return true;
		if (n < 0 && errno == EINTR)
			continue;
		return false;
	}
}

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
	int sock;
	char *segs;
	int cur; /* the segment being filled, -1: none */
	size_t len;
	uint32_t free[NSEG];
	int nfree;
};

/* Takes a free segment, waiting for the reader to return one. */
static int wtake(struct writer *w)
{
	while (w->nfree == 0) {
		struct token t;
		ssize_t n = recv(w->sock, &t, sizeof(t), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(t) || t.seg >= NSEG)
			return -1; /* the reader is gone */
		w->free[w->nfree++] = t.seg;
	}
	w->cur = (int)w->free[--w->nfree];
	w->len = 0;
	return 0;
}

/* Hands the segment being filled to the reader. */
static int wflush(struct writer *w)
{
	if (w->cur < 0)
		return 0;
	if (!send_token(w->sock, (uint32_t)w->cur, (uint32_t)w->len))
		return -1;
	w->cur = -1;
	return 0;
}

static int child_cb(void *ctx, const struct wsr_rec *r, const char *extra)
{
	struct writer *w = ctx;

	if (w->cur >= 0 && w->len + r->size > SEG_SIZE && wflush(w) < 0)
		return -1;
	if (w->cur < 0 && wtake(w) < 0)
		return -1;
	w->len += rec_put(w->segs + (size_t)w->cur * SEG_SIZE + w->len, r, extra);
	if (r->type == REC_END || r->type == REC_ERROR)
		return wflush(w);
	return 0;
}

static void child_main(int sock, char *segs, const struct pre *pr)
{
	struct writer w = {.sock = sock, .segs = segs, .cur = -1, .nfree = NSEG};
	struct wsr_err err;

	err_init(&err);
	for (int i = 0; i < NSEG; i++)
		w.free[i] = (uint32_t)i;
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
		w.len = 0; /* the records decoded so far are not wanted: only the error */
		child_cb(&w, &r, msg);
		_exit(2);
	}
	wflush(&w);
	_exit(0);
}

static pid_t spawn(const struct pre *pr, const struct dchild_opts *o, int fds[2], char *segs,
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
	child_main(fds[1], segs, pr);
	_exit(1);
}

/* ---- the parent ---- */

struct reader {
	int sock;
	char *segs;
	bool got_end, timed_out;
	bool reset; /* the child's reset was reported (read_loop) */
	char child_msg[WSR_REC_MAX_EXTRA];
};

/* Hands the records of segment t to the sink where they lie, then gives
 * the segment back to the child. */
static int take_segment(struct reader *rd, const struct token *t,
			const struct dchild_sink *sink, struct wsr_err *err)
{
	const char *seg = rd->segs + (size_t)t->seg * SEG_SIZE;
	size_t off = 0;
	const struct wsr_rec *r;
	const char *extra;

	if (t->seg >= NSEG || t->len > SEG_SIZE) {
		err_push(err, "internal: bad segment token from the decoder");
		return -1;
	}
	while (off < t->len) {
		if (rec_next(seg + off, t->len - off, &r, &extra) <= 0) {
			err_push(err, "internal: bad record from the decoder");
			return -1;
		}
		if (r->type == REC_END)
			rd->got_end = true;
		else if (r->type == REC_ERROR)
			snprintf(rd->child_msg, sizeof(rd->child_msg), "%s",
				 extra != NULL ? extra : "");
		else if (sink->rec(sink->ctx, r, extra, err) < 0)
			return -1;
		off += r->size;
	}
	/* A child that is gone takes no token: its end comes as EOF. */
	(void)send_token(rd->sock, t->seg, 0);
	return 0;
}

/* Reads until the child closes its socket or stalls for o->timeout_s. */
static int read_loop(struct reader *rd, const struct dchild_opts *o, const struct dchild_sink *sink,
		     struct wsr_err *err)
{
	double last_data = now_s(), last_tick = 0;

	for (;;) {
		if (interrupted) {
			err_push(err, "interrupted by signal %d", (int)interrupted);
			return -1;
		}
		struct pollfd pfd = {.fd = rd->sock, .events = POLLIN};
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
		struct token tok;
		ssize_t n = recv(rd->sock, &tok, sizeof(tok), 0);
		if (n < 0 && errno == EINTR)
			continue;
		/* The end is EOF, after every token the child sent. A child that
		 * exits with "segment is free" tokens unread also resets the
		 * connection, and Linux reports that once, to the next send or
		 * recv here, before the tokens still queued (unix_release_sock()
		 * sets sk_err; the receive path returns it first): read on
		 * (test-dchild.c). A second reset cannot come; it would end here. */
		if (n < 0 && errno == ECONNRESET && !rd->reset) {
			rd->reset = true;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		if (n < 0) {
			err_push(err, "reading from the decoder: %s", strerror(errno));
			return -1;
		}
		if (n != (ssize_t)sizeof(tok)) {
			err_push(err, "internal: bad token from the decoder");
			return -1;
		}
		last_data = t;
		if (take_segment(rd, &tok, sink, err) < 0)
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
	dc->segs = NULL;
	if (nt > 1) {
		err_push(err, "internal error: the decoder is forked beside %d other threads "
			      "(dchild.h: start it before any thread)", nt - 1);
		return -1;
	}
	void *segs = mmap(NULL, (size_t)NSEG * SEG_SIZE, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (segs == MAP_FAILED) {
		err_push(err, "mmap of the decoder's %u MiB: %s", NSEG * (SEG_SIZE >> 20),
			 strerror(errno));
		return -1;
	}
	dc->segs = segs;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0) {
		err_push(err, "socketpair: %s", strerror(errno));
		dchild_stop(dc);
		return -1;
	}
	dc->pid = spawn(pr, o, fds, dc->segs, err);
	close(fds[1]);
	dc->fd = fds[0];
	if (dc->pid < 0) {
		dchild_stop(dc);
		return -1;
	}
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
	if (dc->segs != NULL)
		munmap(dc->segs, (size_t)NSEG * SEG_SIZE);
	dc->pid = -1;
	dc->fd = -1;
	dc->segs = NULL;
}

int dchild_run(struct dchild *dc, const char *dir, const struct dchild_opts *o,
	       const struct dchild_sink *sink, struct wsr_err *err)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	int ret = -1;

	if (rd == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	rd->sock = dc->fd;
	rd->segs = dc->segs;
	if (read_loop(rd, o, sink, err) < 0)
		goto out;
	ret = reap(dc->pid, rd, dir, o, sink, err);
	dc->pid = -1; /* reaped */
out:
	dchild_stop(dc);
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
