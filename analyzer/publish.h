/*
 * publish.h - the database's life from its temporary file to its name
 * (publish.c), shared by `wsr ingest` and the bt2 plugin sink.wsr.sqlite.
 *
 * Invariants:
 *   - OUT is created only by the final rename() of publish_finish(); until
 *     then the rows live in OUT.PID.tmp, created exclusive and flock()ed.
 *     publish_end() removes that file unless it was published, so a failed
 *     or interrupted ingestion leaves nothing behind; after a SIGKILL the
 *     next publish_begin() to the same OUT removes it.
 *   - An existing OUT is replaced only with force, and only if it is a wsr
 *     database (exit 2 otherwise).
 *   - publish_finish() refuses a trace without events or without wsr events
 *     (exit 2), then finishes the derivation, writes the meta rows of the
 *     run record, builds the indexes, commits, closes and renames.
 * Concurrency: one thread.
 */
#ifndef WSR_ANALYZER_PUBLISH_H
#define WSR_ANALYZER_PUBLISH_H

#include <limits.h>
#include <stdbool.h>

#include <sqlite3.h>

#include "derive.h"
#include "err.h"
#include "runinfo.h"

struct publish {
	char out[PATH_MAX];
	char tmp[PATH_MAX + 32];
	int lock_fd;
	sqlite3 *db; /* the open database (db_create()'s transaction) */
	bool done;   /* renamed to out */
};

/* force_opt: how the user asks to replace (for the message), e.g. "--force". */
int publish_begin(struct publish *pb, const char *out, bool force, const char *force_opt,
		  struct wsr_err *err);
/* Takes *dv (destroyed, set to NULL). what: the trace, for the messages; ri:
 * the run record or NULL; phase: called with each step's name ("closing the
 * intervals", "building the indexes") and "done", or NULL; init_missing:
 * set when the trace has no init event. */
int publish_finish(struct publish *pb, struct derive **dv, const char *what,
		   const struct run_info *ri, void (*phase)(void *ctx, const char *step), void *ctx,
		   bool *init_missing, struct wsr_err *err);
/* Closes what is open and removes the temporary file unless published. */
void publish_end(struct publish *pb);

#endif /* WSR_ANALYZER_PUBLISH_H */
