/*
 * store_impl.h - what store.c shares with the store's other files
 * (store_preview.c, the sampled overview; store_query.c, the window
 * answers): the lanes' primitives and the loaders' SQL helpers. Not for
 * anything outside viewer/store*.c, which goes through store.h.
 *
 * Invariants:
 *   - A lane array is sorted by id (store_lane_get keeps it so); a lane's
 *     spans are only guaranteed sorted and non-overlapping, and its block
 *     summaries only valid, after store_lane_finish().
 *   - store_step() and store_load_ids() push the SQLite error on err and
 *     return -1; store_cancelled() pushes "cancelled" and returns 1.
 * Concurrency: as store.h: each function works on the store or lanes it is
 *   given, which belong to the calling thread until published.
 */
#ifndef WSR_VIEWER_STORE_IMPL_H
#define WSR_VIEWER_STORE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"
#include "store.h"

/* The enum store_state of a p_state/m_state name (ST_OTHER if unknown or NULL). */
enum store_state store_state_code(const unsigned char *s);
/* The lane with this id in a sorted array of lanes, inserted if new; NULL when out of memory. */
struct store_lane *store_lane_get(struct store_lane **lanes, size_t *n, int64_t id);
/* Appends [s, e) holding v (e < s is taken as e = s); 0, or -1 when out of memory. */
int store_lane_push(struct store_lane *l, int64_t s, int64_t e, int32_t v);
/* Sorts a lane by start if needed, clips overlaps, drops empty spans, builds its blocks. */
void store_lane_finish(struct store_lane *l);
/*
 * A timeline item being built from spans narrower than a pixel (nspp ns):
 * store_fold_span() takes the spans of one lane in order, sorted by start
 * and not overlapping. A span at least a pixel wide (clipped to [t0, t1))
 * is written as itself, [s, e, v, 1, w]; narrower ones merge with their
 * neighbours into one item of at most about a pixel while the gaps between
 * them are under a pixel: [s, e, v, n, busy], n the spans, busy their time,
 * v the G of the longest (run lanes) or the state that takes most time
 * (state lanes). store_fold_flush() writes the open item, if any. Items
 * are written followed by a comma. The one rule of the timeline's items,
 * for the store's windows (store_query.c) and the report's single pass
 * (store_stream.c).
 */
struct store_fold {
	int active;
	int64_t s, e, busy, vlen;
	int32_t v;
	uint32_t n;
	int64_t st_t[ST_NSTATES];
};
void store_fold_span(struct sbuf *out, struct store_fold *a, const struct store_span *sp,
		     int64_t t0, int64_t t1, int64_t nspp, int is_state);
void store_fold_flush(struct sbuf *out, struct store_fold *a, int is_state);
/* 1 (and "cancelled" on err) if st->cancel is set, else 0. */
int store_cancelled(const struct store *st, struct wsr_err *err);
/* Steps q: *row = 1 on a row, 0 when done; 0, or -1 with the cause. */
int store_step(sqlite3 *db, sqlite3_stmt *q, struct wsr_err *err, int *row);
/*
 * Calls fn(arg, p, g, s, e) for each running row with a P of g_interval's
 * blocks [b0, b1), in storage order, s and e from the trace's start; a
 * non-zero return of fn ends the scan. 0, fn's value, or -1 with the cause.
 */
typedef int (*store_run_fn)(void *arg, int64_t p, int32_t g, int64_t s, int64_t e);
int store_scan_runs(struct store *st, sqlite3 *db, uint32_t b0, uint32_t b1, store_run_fn fn,
		    void *arg, struct wsr_err *err);
/* The id of g_state_name 'running' into *id: 0, or -1 with the cause. */
int store_running_code(sqlite3 *db, int64_t *id, struct wsr_err *err);
/* Adds a lane for each id that sql returns (one column). */
int store_load_ids(sqlite3 *db, const char *sql, struct store_lane **lanes, size_t *n,
		   struct wsr_err *err);

#endif /* WSR_VIEWER_STORE_IMPL_H */
