/*
 * dchild.h - the decoder child and its protocol (dchild.c): the bt2 graph
 * of decode.c runs in a forked child and hands framed records (recframe.h)
 * to this process through memory the two share, in 1 MiB segments passed
 * back and forth as tokens on a socket pair.
 *
 * Invariants:
 *   - Records reach sink->rec in the decoder's order, then dchild_decode()
 *     returns 0 only after a REC_END and a clean exit of the child.
 *   - The child is killed when it makes no progress for timeout_s seconds,
 *     when this process stops early (an error, dchild_interrupt()), and
 *     with this process (PR_SET_PDEATHSIG); a crash or a hang is bad input
 *     (exit 2) naming how far decoding got, never suffered.
 *   - Protocol: the child sends records a segment (1 MiB at most) at a
 *     time; a decoding error is one REC_ERROR record whose extra holds the
 *     causes, innermost first, one per line, and the child exits with
 *     status 2.
 * Concurrency: the calling thread runs the reader; the child only writes.
 */
#ifndef WSR_ANALYZER_DCHILD_H
#define WSR_ANALYZER_DCHILD_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "precheck.h"
#include "rec.h"

/* The transport: DCHILD_NSEG segments of DCHILD_SEG_SIZE bytes; the child
 * fills one segment with whole records in order and starts the next when a
 * record does not fit (tests/analyzer/test-dchild.c counts on that rule). */
#define DCHILD_SEG_SIZE (1u << 20)
#define DCHILD_NSEG 8

struct dchild_sink {
	/* each record but REC_END and REC_ERROR; -1 stops (cause pushed) */
	int (*rec)(void *ctx, const struct wsr_rec *r, const char *extra, struct wsr_err *err);
	/* events taken so far, for the messages */
	uint64_t (*events)(void *ctx);
	/* called about every 0.25 s while records come (may be NULL) */
	void (*tick)(void *ctx);
	void *ctx;
};

struct dchild_opts {
	int timeout_s; /* no progress for this long: the decoder hangs */
	bool verbose;  /* leave the child's stderr (bt2's own messages) open */
	int close_fd;  /* a descriptor the child must not keep (-1: none) */
};

/* The child: started by dchild_start(), read to its end by dchild_run(),
 * or stopped by dchild_stop() (killed and reaped, the memory unmapped;
 * safe to call twice). */
struct dchild {
	int pid, fd; /* fd: this side of the socket pair */
	char *segs;  /* the segments shared with the child */
};

/* Forks the decoder of pr's trace directories. Call it before this process
 * starts any thread (ingest starts the row writer after it): after fork()
 * the child may use only what no other thread held, and a thread inside
 * malloc at that moment (ASan's allocator, for one) left the child hung
 * (fuzz-check-expr's seed ingest, 2 runs in 40). */
int dchild_start(struct dchild *dc, const struct pre *pr, const struct dchild_opts *o,
		 struct wsr_err *err);
/* Reads the started child's records into sink until its end (dir: the
 * name for messages), then reaps it; the child is gone when it returns. */
int dchild_run(struct dchild *dc, const char *dir, const struct dchild_opts *o,
	       const struct dchild_sink *sink, struct wsr_err *err);
void dchild_stop(struct dchild *dc);
/* dchild_start() then dchild_run(), for a caller that has no thread. */
int dchild_decode(const struct pre *pr, const char *dir, const struct dchild_opts *o,
		  const struct dchild_sink *sink, struct wsr_err *err);
/* Async-signal-safe: the running dchild_decode() stops with "interrupted". */
void dchild_interrupt(int sig);
/* The signal dchild_interrupt() was called with, 0 if none. */
int dchild_interrupted(void);

#endif /* WSR_ANALYZER_DCHILD_H */
