/*
 * ingest.h - one trace directory to one database file (ingest.c).
 *
 * Invariants: ingest_trace() creates `out` only on success (via OUT.PID.tmp
 *   and rename); a bad trace fails with err->exit_code = 2; an existing
 *   `out` is replaced only with force and only if it is a wsr database.
 * Concurrency: call from one thread; it forks a decoder child.
 */
#ifndef WSR_ANALYZER_INGEST_H
#define WSR_ANALYZER_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct ingest_opts {
	bool force;    /* replace an existing output */
	bool progress; /* progress line on stderr */
	bool verbose;  /* let babeltrace2 print on stderr */
	bool dag_rows; /* every DAG strand and edge to dag_strand / dag_edge */
	int timeout_s; /* decoder inactivity limit */
	long vpid;     /* > 0: keep only this process's events */
};

struct ingest_stats {
	uint64_t events;
	double seconds;
	bool init_missing; /* the trace has no init event (meta.init_missing) */
};

int ingest_trace(const char *dir, const char *out, const struct ingest_opts *o,
		 struct ingest_stats *stats, struct wsr_err *err);

#endif /* WSR_ANALYZER_INGEST_H */
