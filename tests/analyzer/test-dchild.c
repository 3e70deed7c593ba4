/*
 * test-dchild.c - the decoder child's transport (analyzer/dchild.c) on a
 * real trace: a reader that falls behind a decoder which has finished and
 * exited still gets every record.
 *
 * The defect it keeps out (CI, analyzer-sim: "the decoder exited with
 * status 0" after 98,737 events): the child exits without reading the
 * "segment is free" tokens it no longer needs, so its end resets the socket
 * pair, and Linux reports that reset once, to the next call on the reader's
 * side, before the tokens still queued for it. A reader that took the reset
 * for the end lost the last segments whenever it was descheduled, between
 * giving a segment back and reading the next token, while the child
 * finished.
 *
 * How it makes that order certain instead of likely: a first pass counts
 * the records and the segments the child packs them into (the child's rule,
 * dchild.h: a record that does not fit starts the next segment). In the
 * second pass the sink's first tick (dchild.c calls it right after the
 * first segment is taken and given back, then every 0.25 s) waits, without
 * reaping it, until the child has exited. With m segments taken then and N
 * in all, the child never needed a token back (N <= DCHILD_NSEG), has not
 * read the m it was given, and N - m >= 1 segments, the REC_END among them,
 * are queued behind the reset: 2 <= N <= DCHILD_NSEG. The analyzer corpus's
 * largest trace is such a trace.
 *
 * Usage: test-dchild CORPUS_TARBALL TRACE (the name of a trace in it);
 * exit 0 when both passes give every record, 1 (with the reason) otherwise.
 * Concurrency: none (the child is a process).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dchild.h"
#include "err.h"
#include "precheck.h"
#include "rec.h"

struct pass {
	uint64_t records;
	uint64_t seg;	/* the segment the last record lies in */
	size_t seg_len; /* bytes of it so far */
	pid_t pid;	/* the second pass: the child to wait for at the first tick */
	bool waited, exited;
	uint64_t taken; /* segments taken when the first tick came */
};

/* Waits up to 120 s, without reaping it, for the child to exit. */
static bool wait_exit(pid_t pid)
{
	for (int i = 0; i < 12000; i++) {
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) == 0 &&
		    si.si_pid == pid)
			return true;
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	return false;
}

static int take(void *ctx, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	struct pass *p = ctx;

	(void)extra;
	(void)err;
	if (p->records > 0 && p->seg_len + r->size > DCHILD_SEG_SIZE) {
		p->seg++;
		p->seg_len = 0;
	}
	p->seg_len += r->size;
	p->records++;
	return 0;
}

static void tick(void *ctx)
{
	struct pass *p = ctx;

	if (p->pid <= 0 || p->waited)
		return;
	p->waited = true;
	p->taken = p->seg + 1;
	p->exited = wait_exit(p->pid);
}

static uint64_t events(void *ctx)
{
	return ((struct pass *)ctx)->records;
}

/* One decoding of dir into p; 0 on success, else the causes printed. */
static int decode(const char *dir, struct pass *p, bool wait)
{
	struct pre pr = {0};
	struct wsr_err err;
	struct dchild dc;
	struct dchild_opts o = {.timeout_s = 120, .verbose = true, .close_fd = -1};
	struct dchild_sink sink = {.rec = take, .events = events, .tick = tick, .ctx = p};
	int ret = -1;

	err_init(&err);
	pr.err = &err;
	pr.root = dir;
	if (precheck(&pr, dir) == 0 && dchild_start(&dc, &pr, &o, &err) == 0) {
		if (wait)
			p->pid = dc.pid;
		ret = dchild_run(&dc, dir, &o, &sink, &err);
	}
	for (int i = err.n - 1; ret < 0 && i >= 0; i--)
		fprintf(stderr, "  %s\n", err.msg[i]);
	precheck_free(&pr);
	return ret;
}

static int check(const char *dir)
{
	struct pass first = {0}, second = {0};

	if (decode(dir, &first, false) < 0) {
		fprintf(stderr, "the first pass failed\n");
		return 1;
	}
	uint64_t nseg = first.seg + 1;
	if (nseg < 2 || nseg > DCHILD_NSEG) {
		fprintf(stderr, "%" PRIu64 " records in %" PRIu64
				" segments: the check needs 2 to %d (another trace)\n",
			first.records, nseg, DCHILD_NSEG);
		return 1;
	}
	int rc = decode(dir, &second, true);
	printf("%" PRIu64 " records in %" PRIu64 " segments of %u bytes; at the first tick, "
	       "%" PRIu64 " taken, the reader waited for the decoder to exit: %s; it took %" PRIu64
	       " records in all\n",
	       first.records, nseg, DCHILD_SEG_SIZE, second.taken,
	       second.exited ? "it did" : "it did not (in 120 s)", second.records);
	if (!second.exited || second.taken >= nseg) {
		fprintf(stderr, "the reader did not wait for the decoder's exit with segments "
				"still queued\n");
		return 1;
	}
	if (rc < 0 || second.records != first.records) {
		fprintf(stderr, "the reader behind the exited decoder lost records\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/wsr-test-dchild-XXXXXX", cmd[4096], dir[4096];

	if (argc != 3) {
		fprintf(stderr, "usage: test-dchild CORPUS_TARBALL TRACE\n");
		return 2;
	}
	if (mkdtemp(tmp) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "tar -xJf '%s' -C '%s' './%s'", argv[1], tmp, argv[2]);
	snprintf(dir, sizeof(dir), "%s/%s", tmp, argv[2]);
	int rc = system(cmd) == 0 ? check(dir) : (fprintf(stderr, "%s failed\n", cmd), 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return rc;
}
