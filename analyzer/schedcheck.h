/*
 * schedcheck.h - the runtime's schedtrace snapshots against the
 * reconstruction, field by field (schedcheck.c has the rule).
 *
 * Use: feed every event in time order with the changes it made to the
 * quantities (schedcheck_event), each schedtrace snapshot when it comes
 * (schedcheck_snapshot, after the event that carries it was fed), and
 * settle every snapshot at the end (schedcheck_finish), which calls cb once
 * per field.
 * Quantities are small integers chosen by the caller (derive.c: the global
 * counts, then two per P).
 * Concurrency: one thread.
 */
#ifndef WSR_ANALYZER_SCHEDCHECK_H
#define WSR_ANALYZER_SCHEDCHECK_H

#include <stdbool.h>
#include <stdint.h>

struct schedcheck;

struct sc_change {
	int q;
	int64_t delta;
};

/* One field of a snapshot: quantity q held value when loaded in [b, e]. */
struct sc_read {
	int q;
	int64_t value, b, e;
};

struct sc_row {
	int64_t snap_id, snap_ts;
	int q;
	int64_t rt, recon, b, e;
	const char *racing; /* JSON array of event ids, NULL when rt == recon or unexplained */
	int explained;      /* 1: rt == recon, or racing adds up to the difference; 0: no
			     * subset does; -1: not checkable (the window is older than
			     * the history kept, or the subset-sum is too large) */
};

typedef int (*sc_row_cb)(void *ctx, const struct sc_row *row);

struct schedcheck *schedcheck_create(void);
void schedcheck_destroy(struct schedcheck *sc);
/* Event id at ts by M m (-1: no M); pre: announced before its change is
 * visible (runqput); qualifying: not spin_stop or steal_scan. */
int schedcheck_event(struct schedcheck *sc, int64_t id, int64_t ts, int32_t m, bool pre,
		     bool qualifying, const struct sc_change *ch, int nch);
/* Another thread may change q by delta for M m before m's next event (the
 * event id at ts, m's last, stands for that change if the trace ends first). */
int schedcheck_pending(struct schedcheck *sc, int32_t m, int q, int64_t delta, int64_t id,
		       int64_t ts);
int schedcheck_snapshot(struct schedcheck *sc, int64_t id, int64_t ts, const struct sc_read *rd,
			int n);
int schedcheck_finish(struct schedcheck *sc, sc_row_cb cb, void *ctx);
int64_t schedcheck_fields(const struct schedcheck *sc);
int64_t schedcheck_unexplained(const struct schedcheck *sc);
int64_t schedcheck_uncheckable(const struct schedcheck *sc);

#endif /* WSR_ANALYZER_SCHEDCHECK_H */
