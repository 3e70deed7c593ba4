/*
 * store.h - the viewer's level-of-detail index over a trace database: the
 * per-P and per-M lanes held in memory as sorted interval arrays, and the
 * counters step function summarised in fixed-width buckets.
 *
 * Invariants:
 *   - Times are nanoseconds relative to meta.start_ts.
 *   - Within a lane, spans are sorted by start and do not overlap (the
 *     database tiles P and M states, and a P runs one G at a time), so both
 *     starts and ends are non-decreasing and binary search finds a window.
 *   - A window answer holds at most about two items per pixel and lane:
 *     spans narrower than a pixel are merged (store_timeline_json).
 *   - Counter buckets are STORE_BUCKETS wide slices of the trace; a window
 *     coarser than two buckets per pixel is answered from them, a finer one
 *     from the counters table through its primary key (ts).
 *   - A preview store (store_load_preview) holds the same lanes, in the same
 *     order, with sampled spans: one per cell of the trace at most, plus the
 *     real spans at least a cell wide. It is a picture, not the data.
 * Concurrency: store_init() first; store_load_runs() may then run on
 *   several threads, each into its own copy of the initialised store, merged
 *   by store_merge_runs(); store_load_counters() writes only the counter
 *   fields and may run beside them. Each part is read-only once loaded, so
 *   any number of threads may query it (the SQLite handle is the caller's).
 */
#ifndef WSR_VIEWER_STORE_H
#define WSR_VIEWER_STORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"
#include "sbuf.h"

/* Lane states (p_state.state and m_state.state), in the order of store_state_names. */
enum store_state {
	ST_IDLE,
	ST_RUNNING,
	ST_SPINNING,
	ST_SYSCALL,
	ST_PARKED,
	ST_NO_P,
	ST_OTHER,
	ST_NSTATES
};

extern const char *const store_state_names[ST_NSTATES];

/* The counters shown under the timeline, in this order. */
enum { STORE_NCOUNTERS = 5 };
extern const char *const store_counter_names[STORE_NCOUNTERS];

struct store_span {
	int64_t s, e;
	int32_t v; /* the G (run lanes) or an enum store_state (state lanes) */
};

/* Summary of STORE_BLOCK consecutive spans of a lane (see lane_json). */
#define STORE_BLOCK 64

struct store_block {
	int64_t busy;   /* sum of the spans' lengths */
	int64_t maxw;   /* the longest span */
	int64_t maxgap; /* the longest gap before a span (from the previous span's end) */
	int32_t maxv;   /* the v of the longest span */
};

struct store_lane {
	int64_t id; /* P or M id */
	size_t n, cap;
	struct store_span *v;
	struct store_block *blk; /* n / STORE_BLOCK full blocks; NULL if none */
};

struct store_cbucket {
	int32_t min[STORE_NCOUNTERS], max[STORE_NCOUNTERS], last[STORE_NCOUNTERS];
};

struct store {
	int64_t start_ts, end_ts, duration_ns;
	int gomaxprocs;
	size_t nps, nms;
	struct store_lane *p_runs;   /* per P: G running slices */
	struct store_lane *p_states; /* per P: p_state */
	struct store_lane *m_states; /* per M: m_state */
	int64_t bucket_ns;
	size_t nbuckets;
	struct store_cbucket *cb;
	int32_t first[STORE_NCOUNTERS]; /* counter values at t = 0 */
	size_t spans; /* total spans held (for the log line) */
	int preview;  /* a sampled overview (store_load_preview): answers say "preview":true */
	/* When non-NULL and set, loaders stop with an error (relaxed loads: a hint). */
	atomic_int *cancel;
};

/* Reads the trace bounds and gomaxprocs (fast). */
int store_init(struct store *st, sqlite3 *db, struct wsr_err *err);
/* g_interval's blocks into *n (the units of store_load_runs): 0, or -1 with the cause. */
int store_run_blocks(sqlite3 *db, uint32_t *n, struct wsr_err *err);
/* Loads the G runs of g_interval's blocks b0 <= b < b1 into p_runs. */
int store_load_runs(struct store *st, sqlite3 *db, uint32_t b0, uint32_t b1, struct wsr_err *err);
/* Appends the runs of part (loaded by another thread) to st, and frees part. */
int store_merge_runs(struct store *st, struct store *part, struct wsr_err *err);
/* Adds the lanes of every P and M, loads p_state and m_state, sorts every lane. */
int store_load_states(struct store *st, sqlite3 *db, struct wsr_err *err);
/*
 * Builds a sampled overview of every lane into st (after store_init) in a
 * fraction of a second: see store_preview.c. Answers from it say "preview":true.
 * The trace is cut into ncells cells; this call samples cells k0 <= k < k1,
 * so that two threads may each build a part (each into its own copy of the
 * initialised store, on its own connection). store_finish_preview() then
 * appends part (if not NULL; cells after st's) to st, frees it, and sorts
 * and summarises every lane.
 */
int store_load_preview(struct store *st, sqlite3 *db, int ncells, int k0, int k1,
		       struct wsr_err *err);
int store_finish_preview(struct store *st, struct store *part, struct wsr_err *err);
/* Builds the counter buckets (bucket_ns, nbuckets, cb, first). */
int store_load_counters(struct store *st, sqlite3 *db, struct wsr_err *err);
void store_free(struct store *st);
/* Writes {"t0","t1","nspp","p":[{"p","runs","states"}],"m":[{"m","states"}]}. */
void store_timeline_json(const struct store *st, int64_t t0, int64_t t1, int px, struct sbuf *out);
/*
 * Writes store_timeline_json(st, 0, duration, px)'s answer as the full store
 * would give it, in one pass over db that keeps each lane's items, not its
 * spans (store_stream.c): memory bounded by the lanes and px. st is
 * initialised (store_init) with no lanes; its lane ids (p_runs, m_states,
 * with no spans) are filled in, for /api/info. 0; 1 when a lane's rows
 * came out of order: only the full store sorts them, so it was loaded into
 * st and answered (the same items); -1 with the cause.
 */
int store_timeline_stream(struct store *st, sqlite3 *db, int px, struct sbuf *out,
			  struct wsr_err *err);
/* Writes {"t0","t1","px","series":{name:{"min":[],"max":[],"last":[]}}}. */
int store_counters_json(const struct store *st, sqlite3 *db, int64_t t0, int64_t t1, int px,
			struct sbuf *out, struct wsr_err *err);

#endif /* WSR_VIEWER_STORE_H */
