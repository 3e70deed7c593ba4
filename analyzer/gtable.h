/*
 * gtable.h - the live Gs of a trace: a dense array of entries found through
 * an open-addressing hash of their ids (gtable.c).
 *
 * Invariants:
 *   - An entry with g = 0 is a free slot; every other entry is a live G,
 *     found by gtable_find() until gtable_delete().
 *   - A struct gs pointer stays valid until the next gtable_insert() (which
 *     may move the array).
 *   - Memory is about sizeof(struct gs) + 12 bytes per G at the live peak.
 * Concurrency: one thread.
 */
#ifndef WSR_ANALYZER_GTABLE_H
#define WSR_ANALYZER_GTABLE_H

#include <stdint.h>

/* No time: a G that never ran or has not ended. Every int64 is a valid
 * time (ns from the clock's origin, which a CTF clock may put after the run,
 * so times can be negative), except this one. */
#define TS_NONE INT64_MIN

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The states of a G; their values are the ids of g_state_name (schema.sql). */
enum gstate {
	GS_RUNNABLE,
	GS_RUNNING,
	GS_WAITING,
	GS_SYSCALL,
	GS_UNKNOWN /* after lost events: see "losses" in gstate.c */
};

/* Why a G is in its state (g_interval.reason, the ids of g_reason in
 * schema.sql): a g_stop reason is its enumerator (WSR_REASON_*, the ids of
 * enum_g_reason); the analyzer's own reasons are above them. */
enum {
	GR_NONE = -1, /* NULL */
	GR_CREATE = 100,
	GR_READY = 101
};

/* Where a runnable G was queued. */
enum gq {
	Q_NONE,
	Q_RING,
	Q_RUNNEXT,
	Q_GLOBAL
};

struct dagg; /* the DAG tracker's state of the G (dag.c) */

struct gs {
	int64_t g; /* 0: empty slot */
	int64_t parent;
	int64_t created_ts, first_run_ts, start; /* first_run_ts: TS_NONE until it runs */
	int64_t runs, stolen, ns[5];
	int32_t create_p, p, m, qp;
	struct dagg *dag;
	uint8_t state, q;
	int8_t reason; /* GR_NONE, a WSR_REASON_*, GR_CREATE, GR_READY */
	bool has_parent, pending_ready;
};

struct gtable {
	struct gs *gtab;
	uint32_t *gidx, *gfree;
	size_t gn, galloc, nfree, gcap, gcount, gpeak;
	uint64_t gtotal;
	/* The end of the last interval closed (gstate.c g_close): g_interval is
	 * written in end order, which its readers rely on (schema.sql). */
	int64_t last_end;
	uint32_t hint[2]; /* gtable_find's last two slots (gtable.c) */
};

int gtable_init(struct gtable *t);
void gtable_free(struct gtable *t);
struct gs *gtable_find(struct gtable *t, int64_t g);
/* A new zeroed entry for g (p, m, qp, create_p = -1, first_run_ts = TS_NONE,
 * reason = GR_NONE). */
struct gs *gtable_insert(struct gtable *t, int64_t g, struct wsr_err *err);
void gtable_delete(struct gtable *t, struct gs *e);

#endif /* WSR_ANALYZER_GTABLE_H */
