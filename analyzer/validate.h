/*
 * validate.h - the checks every record passes before any tracker sees it
 * (validate.c): streams declared, time non-decreasing per stream and
 * overall, one process, ids and enum values in range, catalog fields
 * present.
 *
 * Invariants:
 *   - A violation is bad input (err_input: exit 2) with a message naming
 *     the trace, the event's index, name, time and stream.
 *   - The ranges reject what random bytes decoded as fields would produce:
 *     p outside -1..gomaxprocs-1, m outside -1..WSR_MAX_M-1, G ids outside
 *     0..2^48, unknown enum values.
 * Concurrency: one thread.
 */
#ifndef WSR_ANALYZER_VALIDATE_H
#define WSR_ANALYZER_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "rec.h"

#define WSR_MAX_P   1024
#define WSR_MAX_M   (1 << 20)
#define WSR_MAX_G   ((int64_t)1 << 48)
#define MAX_STREAMS 4096

struct stream_info {
	char *name;
	int32_t cpu;
	int64_t last_ts;
	bool declared;
};

struct validator {
	const char *trace;
	char *trace_real; /* realpath(trace), for stream names relative to it */
	bool trace_real_done;
	struct stream_info streams[MAX_STREAMS];
	int64_t last_ts; /* of the last event accepted */
	bool any_ts;     /* an event was accepted */
	/* the one process analysed: want_vpid (--vpid) or the first seen */
	int64_t want_vpid, vpid;
	uint64_t skipped_other_vpid;
};

/* REC_STREAM: declares r->stream. Its name is the stream file's path as
 * babeltrace2 gives it (absolute), kept relative to the trace directory when
 * it is inside it, so that a database does not depend on where the trace
 * was when it was ingested. */
int validate_stream(struct validator *v, const struct wsr_rec *r, const char *extra,
		    struct wsr_err *err);
/* 1: the event is of the process analysed; 0: of another (skip it, counted);
 * -1: a second process without --vpid. */
int validate_vpid(struct validator *v, const struct wsr_rec *r, struct wsr_err *err);
/* index: the event's number from 0; gomaxprocs: 0 until init. */
int validate_event(const struct validator *v, const struct wsr_rec *r, const char *extra,
		   int gomaxprocs, uint64_t index, struct wsr_err *err);
/* The event passed: its time becomes its stream's and the trace's last. */
void validate_accept(struct validator *v, const struct wsr_rec *r);
void validate_free(struct validator *v);

#endif /* WSR_ANALYZER_VALIDATE_H */
