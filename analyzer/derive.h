/*
 * derive.h - records (rec.h) to database rows: the events table and every
 * derived table of sql/schema.sql, in one pass in time order.
 *
 * Invariants:
 *   - derive_rec() takes the records of one trace in the decoder's order and
 *     validates each (ids in range, time non-decreasing per stream and
 *     overall, catalog fields present); a violation is bad input (exit 2).
 *   - Memory is bounded by the live Gs, the Ps and the Ms, never by the
 *     number of events: rows are inserted as soon as they are complete.
 *   - derive_finish() closes the intervals still open at the last event
 *     (cut = 1), writes g/p/m rows and meta; it does not commit.
 * Concurrency: call from one thread. The rows are stepped by rows.c's
 *   writer thread on the connection given to derive_create(): the caller
 *   must not use that connection between derive_create() and the return
 *   of derive_finish() (after it, the writer is idle until
 *   derive_destroy()).
 */
#ifndef WSR_ANALYZER_DERIVE_H
#define WSR_ANALYZER_DERIVE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"
#include "rec.h"

struct derive;

/* db: a database from db_create(); trace: the path written to meta. */
struct derive *derive_create(sqlite3 *db, const char *trace, struct wsr_err *err);
/* Keep only the events of process vpid (others are skipped and counted in
 * meta.other_process_events); without it, a second process is bad input. */
void derive_set_vpid(struct derive *dv, int64_t vpid);
/* all: write every strand and edge of the DAG to dag_strand and dag_edge
 * (default: the critical path's strands only; docs/workspan.md). */
void derive_set_dag_rows(struct derive *dv, bool all);
int derive_rec(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err);
int derive_finish(struct derive *dv, struct wsr_err *err);
void derive_destroy(struct derive *dv);

/* Progress: events so far and the last timestamp. */
uint64_t derive_event_count(const struct derive *dv);
int64_t derive_last_ts(const struct derive *dv);
/* Events of the wsr provider so far (0 after finish: not a wsr trace). */
uint64_t derive_wsr_event_count(const struct derive *dv);

#endif /* WSR_ANALYZER_DERIVE_H */
