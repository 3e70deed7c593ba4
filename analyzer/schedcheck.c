/*
 * schedcheck.c - the runtime's schedtrace snapshots against the
 * reconstruction, field by field, with the racing events named (see
 * schedcheck.h and docs/schema.md, "schedtrace_fields").
 *
 * The problem. A snapshot's loads race with the Ms that change what they
 * read (Go reads them the same way), and every change and its event are two
 * steps: `runqput` is emitted just before the tail store that makes the G
 * visible ("pre-announced"); every other change is made first and announced
 * after ("post-announced": steal, spill, globrunq_get, g_run, the counts
 * carried by p_idle, spin_stop, m_unpark, ...). So a snapshot and the
 * reconstruction at the same instant can differ by the changes in flight.
 *
 * The rule. Quantity q (a global count, or one P's ring length or
 * schedtick) was loaded somewhere in its window [b, e] (read_ts of the
 * snapshot). R = the reconstruction after every event with ts <= b, and the
 * snapshot's value must equal R plus the changes of some subset of the
 * events that may have raced with the loads:
 *   (a) an event on q with b < ts <= e (its change may be on either side);
 *   (b) a pre-announced event on q with ts <= b whose emitter's next event,
 *       of any kind, is after b (its store may not have happened yet): -d;
 *   (c) a post-announced event on q with ts > e whose emitter's previous
 *       event, spin_stop, steal_scan and the wakeup it makes of another M
 *       aside (they come between a change and its event: a spinning M that
 *       took a G stops spinning and wakes a spinner, spin_start, m_unpark,
 *       p_busy, m_create, before its g_run), is at or before e (the change
 *       may precede the loads): +d.
 * The emitter of sysmon's events (retake, handoff, preempt, schedtrace) and
 * of other events without an M is one pseudo-M, -1. In traces of runtimes
 * before 2026-12-01 one change was made by another thread on an M's behalf
 * and announced by the M itself: a waker lowered nmidle before the woken M
 * emitted m_unpark (the waker now emits it, under the lock). When the trace ends
 * before that m_unpark (the program crashed or exited meanwhile), the M's
 * m_park stands for it: (d) a parked M with no later event, -1 on
 * idlethreads for a window after its m_park. A field is "explained"
 * when such a subset exists (a small subset-sum, one per field); the subset
 * found is listed by event id. Candidates of kind (c) can come long after
 * the snapshot (an M parked at e), so snapshots are settled at the end.
 *
 * Invariants:
 *   - Events are fed in time order, each with the changes it made to the
 *     quantities (after minus before, as the reconstruction applied it).
 *   - Per quantity, a history of the last HIST changes gives R(b); a field
 *     whose window is older than that is not checkable (explained = -1,
 *     NULL in the table), and so is one whose subset-sum would need more
 *     than MAX_CELLS bits; neither counts as unexplained.
 *   - A field's candidates are unbounded (a snapshot whose reader was
 *     descheduled mid-read can race with hundreds of changes): the subset
 *     sum runs over [sum of the negative changes, sum of the positive ones],
 *     and a difference outside that range is unexplained at once.
 *   - Memory: HIST entries per quantity, plus per pending snapshot its
 *     fields and candidates (snapshots are few: one per schedtrace tick).
 * Concurrency: single-threaded (the deriver's).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedcheck.h"

#define HIST      512
#define MAX_CELLS (1ll << 30) /* bits of the subset-sum table: 128 MiB */

struct hent {
	int64_t ts, id, value; /* value after the change */
	int64_t delta;
	int64_t next_ts;   /* pre-announced: the emitter's next event (INT64_MAX: none yet) */
	int64_t prev_qual; /* the emitter's previous event (see (c) above for what is aside) */
	bool pre;
};

struct field;

struct qhist {
	struct hent h[HIST];
	int n, head; /* entries h[(head - n + k) % HIST], oldest first */
	bool dropped; /* older entries were overwritten */
	int64_t value;
	/* the fields of pending snapshots that read this quantity, in
	 * snapshot order (their windows' ends never decrease) */
	struct field **pf;
	int npf, pfcap;
};

struct emitter {
	int64_t last_qual_ts;
	bool seen;
	/* its last pre-announced entry (to fill next_ts): quantity, slot */
	int pre_q, pre_slot;
	/* (d): a change another thread may make for it before its next event */
	int pend_q;
	int64_t pend_delta, pend_id, pend_ts;
};

struct cand {
	int64_t id, sign_delta;
};

struct field {
	int q;
	int64_t rt, recon, b, e;
	bool checkable;
	struct cand *c;
	int nc, cap;
};

struct snap {
	int64_t id, ts;
	struct field *f;
	int nf;
	struct snap *next;
};

struct schedcheck {
	struct qhist *q;
	int nq;
	struct emitter *em; /* index m + 1 */
	int nem;
	struct snap *pending, **tail;
	int64_t n_fields, n_unexplained, n_uncheckable;
};

struct schedcheck *schedcheck_create(void)
{
	struct schedcheck *sc = calloc(1, sizeof(*sc));

	if (sc != NULL)
		sc->tail = &sc->pending;
	return sc;
}

static void snap_free(struct snap *s)
{
	for (int i = 0; i < s->nf; i++)
		free(s->f[i].c);
	free(s->f);
	free(s);
}

void schedcheck_destroy(struct schedcheck *sc)
{
	if (sc == NULL)
		return;
	for (struct snap *s = sc->pending, *n; s != NULL; s = n) {
		n = s->next;
		snap_free(s);
	}
	for (int q = 0; q < sc->nq; q++)
		free(sc->q[q].pf);
	free(sc->q);
	free(sc->em);
	free(sc);
}

static int grow_q(struct schedcheck *sc, int q)
{
	if (q < sc->nq)
		return 0;
	int n = sc->nq == 0 ? 32 : sc->nq;
	while (n <= q)
		n *= 2;
	struct qhist *nq = realloc(sc->q, (size_t)n * sizeof(*nq));
	if (nq == NULL)
		return -1;
	memset(nq + sc->nq, 0, (size_t)(n - sc->nq) * sizeof(*nq));
	sc->q = nq;
	sc->nq = n;
	return 0;
}

/* Emitter k (m + 1) of an M not seen before: the table grows to hold it. */
static struct emitter *emitter_grow(struct schedcheck *sc, int k)
{
	int n = sc->nem == 0 ? 16 : sc->nem;

	while (n <= k)
		n *= 2;
	struct emitter *ne = realloc(sc->em, (size_t)n * sizeof(*ne));
	if (ne == NULL)
		return NULL;
	memset(ne + sc->nem, 0, (size_t)(n - sc->nem) * sizeof(*ne));
	sc->em = ne;
	sc->nem = n;
	return &sc->em[k];
}

static inline struct emitter *emitter(struct schedcheck *sc, int32_t m)
{
	int k = m < 0 ? 0 : m + 1;

	return k < sc->nem ? &sc->em[k] : emitter_grow(sc, k);
}

static int add_cand(struct field *f, int64_t id, int64_t sd)
{
	if (sd == 0)
		return 0;
	if (f->nc == f->cap) {
		int cap = f->cap == 0 ? 8 : 2 * f->cap;
		struct cand *nc = realloc(f->c, (size_t)cap * sizeof(*nc));
		if (nc == NULL)
			return -1;
		f->c = nc;
		f->cap = cap;
	}
	f->c[f->nc++] = (struct cand){id, sd};
	return 0;
}

/* Event id's changes into their quantities' histories (em: its emitter,
 * not updated yet for it). */
static int hist_add(struct schedcheck *sc, struct emitter *em, int64_t id, int64_t ts, bool pre,
		    const struct sc_change *ch, int nch)
{
	int64_t prev_qual = em->seen ? em->last_qual_ts : INT64_MIN;

	for (int k = 0; k < nch; k++) {
		if (ch[k].delta == 0)
			continue;
		if (grow_q(sc, ch[k].q) < 0)
			return -1;
		struct qhist *Q = &sc->q[ch[k].q];
		Q->value += ch[k].delta;
		int slot = Q->head;
		Q->h[slot] = (struct hent){ts, id, Q->value, ch[k].delta, INT64_MAX, prev_qual, pre};
		Q->head = (Q->head + 1) % HIST;
		if (Q->n < HIST)
			Q->n++;
		else
			Q->dropped = true;
		if (pre) {
			em->pre_q = ch[k].q;
			em->pre_slot = slot;
		}
		/* (c) for the snapshots still waiting: a post-announced change
		 * whose emitter's previous event is at or before their window
		 * (newest first: the windows' ends decrease going back). */
		for (int i = Q->npf - 1; !pre && i >= 0 && Q->pf[i]->e >= prev_qual; i--)
			if (ts > Q->pf[i]->e && add_cand(Q->pf[i], id, ch[k].delta) < 0)
				return -1;
	}
	return 0;
}

int schedcheck_event(struct schedcheck *sc, int64_t id, int64_t ts, int32_t m, bool pre,
		     bool qualifying, const struct sc_change *ch, int nch)
{
	struct emitter *em = emitter(sc, m);

	if (em == NULL)
		return -1;
	em->pend_q = -1;
	/* Its previous pre-announced change is now surely visible. */
	if (em->seen && em->pre_q >= 0) {
		struct hent *h = &sc->q[em->pre_q].h[em->pre_slot];
		if (h->id >= 0 && h->next_ts == INT64_MAX)
			h->next_ts = ts;
		em->pre_q = -1;
	}
	if (nch > 0 && hist_add(sc, em, id, ts, pre, ch, nch) < 0)
		return -1;
	if (!em->seen)
		em->pre_q = -1;
	em->seen = true;
	if (qualifying)
		em->last_qual_ts = ts;
	return 0;
}

/* R(b) of quantity q and the candidates of kinds (a) and (b) from its
 * history; (c) that already happened (ts in (e, now]) too. */
static int field_open(struct schedcheck *sc, struct field *f)
{
	f->checkable = true;
	f->recon = 0;
	if (f->q >= sc->nq)
		return 0;
	struct qhist *Q = &sc->q[f->q];
	bool found = false;
	for (int k = Q->n - 1; k >= 0; k--) {
		const struct hent *h = &Q->h[(Q->head - Q->n + k + 2 * HIST) % HIST];
		if (h->ts <= f->b) {
			if (!found) {
				f->recon = h->value;
				found = true;
			}
			if (h->pre && h->next_ts > f->b && add_cand(f, h->id, -h->delta) < 0)
				return -1;
		} else if (h->ts <= f->e && add_cand(f, h->id, h->delta) < 0) {
			return -1; /* (a) */
		}
	}
	if (!found && Q->dropped)
		f->checkable = false; /* the window is older than the history */
	/* (c) that already happened: between e and the snapshot event (the
	 * rest of its reads). Later ones come through schedcheck_event. */
	for (int k = 0; k < Q->n; k++) {
		const struct hent *h = &Q->h[(Q->head - Q->n + k + 2 * HIST) % HIST];
		if (h->ts > f->e && !h->pre && h->prev_qual <= f->e &&
		    add_cand(f, h->id, h->delta) < 0)
			return -1;
	}
	return 0;
}

int schedcheck_pending(struct schedcheck *sc, int32_t m, int q, int64_t delta, int64_t id,
		       int64_t ts)
{
	struct emitter *em = emitter(sc, m);

	if (em == NULL)
		return -1;
	em->pend_q = q;
	em->pend_delta = delta;
	em->pend_id = id;
	em->pend_ts = ts;
	return 0;
}

int schedcheck_snapshot(struct schedcheck *sc, int64_t id, int64_t ts, const struct sc_read *rd,
			int n)
{
	struct snap *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -1;
	s->f = calloc((size_t)(n > 0 ? n : 1), sizeof(*s->f));
	if (s->f == NULL) {
		free(s);
		return -1;
	}
	s->id = id;
	s->ts = ts;
	s->nf = n;
	*sc->tail = s; /* owned by the list from here (freed at finish or destroy) */
	sc->tail = &s->next;
	for (int i = 0; i < n; i++) {
		struct field *f = &s->f[i];
		f->q = rd[i].q;
		f->rt = rd[i].value;
		f->b = rd[i].b;
		f->e = rd[i].e;
		if (field_open(sc, f) < 0 || grow_q(sc, f->q) < 0)
			return -1;
		struct qhist *Q = &sc->q[f->q];
		if (Q->npf == Q->pfcap) {
			int cap = Q->pfcap == 0 ? 64 : 2 * Q->pfcap;
			struct field **np = realloc(Q->pf, (size_t)cap * sizeof(*np));
			if (np == NULL)
				return -1;
			Q->pf = np;
			Q->pfcap = cap;
		}
		Q->pf[Q->npf++] = f;
	}
	return 0;
}

/* A subset of f's candidates whose changes add up to rt - recon. Layer k
 * of the table is the set of sums reachable with the first k candidates,
 * over [lo, hi] (the sums of the negative and of the positive changes); a
 * sum reachable at layer k but not k-1 takes candidate k-1, which walks the
 * subset back. used[k] = candidate k is in it. Returns 1 (explained), 0
 * (no subset), -1 (the table would exceed MAX_CELLS), -2 (out of memory). */
static int explain(const struct field *f, bool *used)
{
	int64_t want = f->rt - f->recon, lo = 0, hi = 0;

	if (want == 0)
		return 1;
	for (int k = 0; k < f->nc; k++) {
		if (f->c[k].sign_delta < 0)
			lo += f->c[k].sign_delta;
		else
			hi += f->c[k].sign_delta;
	}
	if (want < lo || want > hi)
		return 0;
	int64_t w = hi - lo + 1, words = (w + 63) / 64;
	if ((int64_t)(f->nc + 1) * words * 64 > MAX_CELLS)
		return -1;
	uint64_t *t = calloc((size_t)((f->nc + 1) * words), sizeof(*t));
	if (t == NULL)
		return -2;
#define BIT(k, v)    (t[(int64_t)(k) * words + ((v) - lo) / 64] >> (((v) - lo) % 64) & 1)
#define SETBIT(k, v) (t[(int64_t)(k) * words + ((v) - lo) / 64] |= 1ull << (((v) - lo) % 64))
	SETBIT(0, 0);
	for (int k = 0; k < f->nc; k++) {
		int64_t d = f->c[k].sign_delta;
		memcpy(t + (int64_t)(k + 1) * words, t + (int64_t)k * words,
		       (size_t)words * sizeof(*t));
		for (int64_t v = lo; v <= hi; v++)
			if (BIT(k, v) && v + d >= lo && v + d <= hi)
				SETBIT(k + 1, v + d);
	}
	int ok = BIT(f->nc, want) ? 1 : 0;
	for (int64_t k = f->nc, v = want; ok && k > 0; k--) {
		used[k - 1] = !BIT(k - 1, v); /* not reachable without candidate k-1 */
		if (used[k - 1])
			v -= f->c[k - 1].sign_delta;
	}
#undef BIT
#undef SETBIT
	free(t);
	return ok;
}

/* The racing list of a field: the ids of the subset, "[id,...]". */
static char *racing_json(const struct field *f, const bool *used)
{
	size_t cap = 3, off = 0;
	for (int k = 0; k < f->nc; k++)
		cap += used[k] ? 21 : 0;
	char *s = malloc(cap);
	if (s == NULL)
		return NULL;
	s[off++] = '[';
	for (int k = 0; k < f->nc; k++)
		if (used[k])
			off += (size_t)snprintf(s + off, cap - off, "%s%" PRId64, off > 1 ? "," : "",
						f->c[k].id);
	snprintf(s + off, cap - off, "]");
	return s;
}

/* Settles one field: its row through cb. */
static int settle(struct schedcheck *sc, const struct snap *s, const struct field *f,
		  sc_row_cb cb, void *ctx)
{
	bool *used = calloc((size_t)f->nc + 1, sizeof(*used));
	char *racing = NULL;
	int r = used == NULL ? -2 : f->checkable ? explain(f, used) : -1;

	if (r == -2 || (r == 1 && f->rt != f->recon && (racing = racing_json(f, used)) == NULL)) {
		free(used);
		return -1; /* out of memory */
	}
	struct sc_row row = {s->id, s->ts, f->q, f->rt, f->recon, f->b, f->e, racing, r};
	sc->n_fields++;
	if (r == 0)
		sc->n_unexplained++;
	else if (r < 0)
		sc->n_uncheckable++;
	int ret = cb(ctx, &row);
	free(racing);
	free(used);
	return ret;
}

int schedcheck_finish(struct schedcheck *sc, sc_row_cb cb, void *ctx)
{
	/* (d): changes still owed at the end of the trace. */
	for (int k = 0; k < sc->nem; k++) {
		const struct emitter *em = &sc->em[k];
		if (!em->seen || em->pend_q < 0 || em->pend_q >= sc->nq)
			continue;
		const struct qhist *Q = &sc->q[em->pend_q];
		for (int i = Q->npf - 1; i >= 0 && Q->pf[i]->e >= em->pend_ts; i--)
			if (add_cand(Q->pf[i], em->pend_id, em->pend_delta) < 0)
				return -1;
	}
	for (int q = 0; q < sc->nq; q++)
		sc->q[q].npf = 0; /* every pending snapshot is settled below */
	for (struct snap *s = sc->pending, *n; s != NULL; s = n) {
		n = s->next;
		for (int i = 0; i < s->nf; i++)
			if (settle(sc, s, &s->f[i], cb, ctx) < 0)
				return -1;
		snap_free(s);
		sc->pending = n;
	}
	sc->tail = &sc->pending;
	return 0;
}

int64_t schedcheck_unexplained(const struct schedcheck *sc)
{
	return sc->n_unexplained;
}

int64_t schedcheck_uncheckable(const struct schedcheck *sc)
{
	return sc->n_uncheckable;
}

int64_t schedcheck_fields(const struct schedcheck *sc)
{
	return sc->n_fields;
}
