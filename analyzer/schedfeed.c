/*
 * schedfeed.c - what the schedtrace cross-check (schedcheck.c) needs of
 * each event, and the schedtrace_fields rows it produces.
 *
 * Every event is handed to the cross-check with the changes it made to the
 * quantities a schedtrace snapshot reads: the five global counts (SQ_*),
 * then per P its ring length (SQ_P0 + 2p) and its schedtick (SQ_P0 + 2p +
 * 1). The snapshot itself comes with the schedtrace event.
 *
 * Invariants: sq_take() runs before the trackers apply an event and
 *   sq_event() after, so the difference is that event's change alone.
 * Concurrency: one thread.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive_int.h"
#include "schedcheck.h"

enum {
	SQ_IDLEPROCS,
	SQ_THREADS,
	SQ_SPINNING,
	SQ_IDLETHREADS,
	SQ_RUNQUEUE,
	SQ_P0
};

_Static_assert(SQ_P0 == sizeof(((struct sq_before *)0)->c) / sizeof(int64_t),
	       "struct sq_before holds the globals");

static const char *const sq_names[SQ_P0] = {"idleprocs", "threads", "spinningthreads",
					    "idlethreads", "runqueue"};

static void sq_globals(const struct derive *dv, int64_t *c)
{
	c[SQ_IDLEPROCS] = dv->cur.idle_ps;
	c[SQ_THREADS] = dv->cur.threads;
	c[SQ_SPINNING] = dv->cur.spinning_ms;
	c[SQ_IDLETHREADS] = dv->cur.idle_ms;
	c[SQ_RUNQUEUE] = dv->cur.global_len;
}

/* What an event may change: the globals and the rings of its P and, for a
 * steal, the victim. */
void sq_take(const struct derive *dv, const struct wsr_rec *r, struct sq_before *b)
{
	sq_globals(dv, b->c);
	b->p[0] = r->p;
	b->p[1] = r->ev == EV_STEAL ? (int)r->a1 : -1;
	for (int k = 0; k < 2; k++) {
		int p = b->p[k];
		bool have = p >= 0 && p < dv->np;
		b->ring[k] = have ? dv->ps[p].ring : 0;
		b->ticks[k] = have ? dv->ps[p].schedticks : 0;
	}
}

static int sq_feed(struct derive *dv, const struct wsr_rec *r, const struct sq_before *b)
{
	struct sc_change ch[SQ_P0 + 4];
	int64_t c[SQ_P0];
	int n = 0;

	sq_globals(dv, c);
	for (int k = 0; k < SQ_P0; k++)
		if (c[k] != b->c[k])
			ch[n++] = (struct sc_change){k, c[k] - b->c[k]};
	for (int k = 0; k < 2; k++) {
		int p = b->p[k];
		if (p < 0 || p >= dv->np)
			continue;
		if (dv->ps[p].ring != b->ring[k])
			ch[n++] = (struct sc_change){SQ_P0 + 2 * p, dv->ps[p].ring - b->ring[k]};
		if (dv->ps[p].schedticks != b->ticks[k])
			ch[n++] = (struct sc_change){SQ_P0 + 2 * p + 1,
						     dv->ps[p].schedticks - b->ticks[k]};
	}
	bool sysmon = r->ev == EV_RETAKE || r->ev == EV_HANDOFF || r->ev == EV_PREEMPT ||
		      r->ev == EV_SCHEDTRACE;
	/* Not "qualifying" for rule (c): what an M emits between taking a G
	 * and its g_run (schedcheck.c). */
	bool aside = r->ev == EV_SPIN_STOP || r->ev == EV_STEAL_SCAN || r->ev == EV_SPIN_START ||
		     r->ev == EV_M_UNPARK || r->ev == EV_P_BUSY || r->ev == EV_M_CREATE;
	return schedcheck_event(dv->sc, (int64_t)dv->events - 1, r->ts, sysmon ? -1 : r->m,
				r->ev == EV_RUNQPUT, !aside, ch, n);
}

/* Integers of the JSON array at "key":[...] in the schedtrace record (at
 * most max); -1 when absent or not an array. */
static int json_ints(const char *json, const char *key, int64_t *out, int max)
{
	char pat[32];
	const char *q;
	int n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	q = json != NULL ? strstr(json, pat) : NULL;
	if (q == NULL)
		return -1;
	q += strlen(pat);
	if (*q != '[')
		return -1;
	q++;
	while (*q != ']' && *q != '\0' && n < max) {
		char *end;
		long long v = strtoll(q, &end, 10);
		if (end == q)
			return -1;
		out[n++] = v;
		q = end;
		if (*q == ',')
			q++;
	}
	return n;
}

/* The snapshot of a schedtrace event: each field with the window in which
 * the runtime read it (read_ts; the event's time in older traces). */
static int sq_snapshot(struct derive *dv, const struct wsr_rec *r, const char *extra,
		       struct wsr_err *err)
{
	int np = dv->gomaxprocs > 0 ? dv->gomaxprocs : 0;
	int64_t *buf = malloc((size_t)(3 * np + 1) * sizeof(*buf));
	struct sc_read *rd = malloc((size_t)(SQ_P0 + 2 * np) * sizeof(*rd));
	int n = 0, ret = -1;

	if (buf == NULL || rd == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	int64_t *runq = buf, *ticks = buf + np, *rts = buf + 2 * np;
	int nq = json_ints(extra, "runq", runq, np);
	int nt = json_ints(extra, "schedticks", ticks, np);
	int nr = json_ints(extra, "read_ts", rts, np);
	if (nr != np)
		nr = 0;
		/* read_ts[i]..read_ts[i+1] brackets P i (the globals with P0). */
#define WIN_B(i) (nr > 0 ? rts[(i)] : r->ts)
#define WIN_E(i) (nr > 0 && (i) + 1 < np ? rts[(i) + 1] : r->ts)
	static const char *const gkey[SQ_P0] = {"idleprocs", "threads", "spinningthreads",
						"idlethreads", "runqueue"};
	for (int k = 0; k < SQ_P0; k++) {
		char pat[32];
		const char *q;
		snprintf(pat, sizeof(pat), "\"%s\":", gkey[k]);
		q = extra != NULL ? strstr(extra, pat) : NULL;
		if (q == NULL)
			continue;
		rd[n++] =
			(struct sc_read){k, strtoll(q + strlen(pat), NULL, 10), WIN_B(0), WIN_E(0)};
	}
	for (int i = 0; i < np; i++) {
		if (i < nq)
			rd[n++] = (struct sc_read){SQ_P0 + 2 * i, runq[i], WIN_B(i), WIN_E(i)};
		if (i < nt)
			rd[n++] = (struct sc_read){SQ_P0 + 2 * i + 1, ticks[i], WIN_B(i), WIN_E(i)};
	}
#undef WIN_B
#undef WIN_E
	if (schedcheck_snapshot(dv->sc, (int64_t)dv->events - 1, r->ts, rd, n) < 0) {
		err_push(err, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(buf);
	free(rd);
	return ret;
}

static int sq_row(void *ctx, const struct sc_row *f)
{
	struct derive *dv = ctx;
	struct row_sched_field row = {
		.snap_id = f->snap_id,
		.snap_ts = f->snap_ts,
		.field = f->q < SQ_P0              ? sq_names[f->q]
			 : (f->q - SQ_P0) % 2 == 0 ? "runq"
						   : "schedticks",
		.p = f->q < SQ_P0 ? ROW_NULL : (f->q - SQ_P0) / 2,
		.rt = f->rt,
		.recon = f->recon,
		.read_b = f->b,
		.read_e = f->e,
		.racing = f->racing,
		.explained = f->explained < 0 ? ROW_NULL : f->explained,
	};

	return rows_add(dv->rows, ROWS_SCHED_FIELDS, &row, dv->sc_err);
}

int sq_event(struct derive *dv, const struct wsr_rec *r, const char *extra,
	     const struct sq_before *b, struct wsr_err *err)
{
	if (sq_feed(dv, r, b) < 0) {
		err_push(err, "out of memory");
		return -1;
	}
	/* A waker lowers nmidle before this M's m_unpark (schedcheck.c, (d)). */
	if (r->ev == EV_M_PARK && r->m >= 0 &&
	    schedcheck_pending(dv->sc, r->m, SQ_IDLETHREADS, -1, (int64_t)dv->events - 1, r->ts) <
		    0) {
		err_push(err, "out of memory");
		return -1;
	}
	if (r->ev == EV_SCHEDTRACE)
		return sq_snapshot(dv, r, extra, err);
	return 0;
}

/* The schedtrace_fields rows. */
int sq_finish(struct derive *dv, struct wsr_err *err)
{
	dv->sc_err = err;
	return schedcheck_finish(dv->sc, sq_row, dv);
}
