/*
 * gtable.c - the live-G table (gtable.h).
 *
 * Live Gs are packed in a dense array (gtab[0..gn), a free slot has g = 0
 * and its index on the gfree stack) and found through an open-addressing
 * hash of 32-bit indices (gidx: 0 empty, else index + 1; load <= 1/2;
 * backward-shift deletion). Memory is about sizeof(struct gs) + 12 bytes
 * per G at the live peak, where a table of whole entries at load 1/2 took
 * 2-4 times sizeof(struct gs) per G (fib 29: 31 MB -> 11 MB).
 *
 * Invariants: gidx has no tombstones (deletion shifts the chain back), so
 *   a probe stops at the first empty slot; gcount <= gcap / 2. hint[] are
 *   slots of Gs found lately, trusted only when the slot still holds the G
 *   sought (a freed slot has g = 0, a reused one another G).
 * Concurrency: one thread.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gtable.h"

int gtable_init(struct gtable *t)
{
	memset(t, 0, sizeof(*t));
	t->last_end = TS_NONE;
	t->gcap = 1024;
	t->gidx = calloc(t->gcap, sizeof(*t->gidx));
	t->galloc = 512;
	t->gtab = malloc(t->galloc * sizeof(*t->gtab));
	t->gfree = malloc(t->galloc * sizeof(*t->gfree));
	return t->gidx != NULL && t->gtab != NULL && t->gfree != NULL ? 0 : -1;
}

void gtable_free(struct gtable *t)
{
	free(t->gtab);
	free(t->gidx);
	free(t->gfree);
	memset(t, 0, sizeof(*t));
}

static inline size_t ghash(const struct gtable *t, int64_t g)
{
	return (size_t)(((uint64_t)g * 0x9E3779B97F4A7C15ull) >> 17) & (t->gcap - 1);
}

struct gs *gtable_find(struct gtable *t, int64_t g)
{
	/* the two Gs found last: an event's handlers look up the same few */
	for (int c = 0; c < 2; c++)
		if (t->hint[c] < t->gn && t->gtab[t->hint[c]].g == g && g != 0)
			return &t->gtab[t->hint[c]];
	size_t i = ghash(t, g);
	uint32_t x;

	while ((x = t->gidx[i]) != 0) {
		if (t->gtab[x - 1].g == g) {
			t->hint[1] = t->hint[0];
			t->hint[0] = x - 1;
			return &t->gtab[x - 1];
		}
		i = (i + 1) & (t->gcap - 1);
	}
	return NULL;
}

static int grow_index(struct gtable *t)
{
	size_t ncap = t->gcap * 2;
	uint32_t *nidx = calloc(ncap, sizeof(*nidx));

	if (nidx == NULL)
		return -1;
	free(t->gidx);
	t->gidx = nidx;
	t->gcap = ncap;
	for (size_t k = 0; k < t->gn; k++) {
		if (t->gtab[k].g == 0)
			continue;
		size_t i = ghash(t, t->gtab[k].g);
		while (t->gidx[i] != 0)
			i = (i + 1) & (t->gcap - 1);
		t->gidx[i] = (uint32_t)k + 1;
	}
	return 0;
}

struct gs *gtable_insert(struct gtable *t, int64_t g, struct wsr_err *err)
{
	if ((t->gcount + 1) * 2 > t->gcap && grow_index(t) < 0)
		goto oom;
	uint32_t k;
	if (t->nfree > 0) {
		k = t->gfree[--t->nfree];
	} else {
		if (t->gn == t->galloc) {
			size_t n = t->galloc * 2;
			struct gs *nt = realloc(t->gtab, n * sizeof(*nt));
			if (nt == NULL)
				goto oom;
			t->gtab = nt;
			uint32_t *nf = realloc(t->gfree, n * sizeof(*nf));
			if (nf == NULL)
				goto oom;
			t->gfree = nf;
			t->galloc = n;
		}
		k = (uint32_t)t->gn++;
	}
	size_t i = ghash(t, g);
	while (t->gidx[i] != 0)
		i = (i + 1) & (t->gcap - 1);
	t->gidx[i] = k + 1;
	struct gs *e = &t->gtab[k];
	memset(e, 0, sizeof(*e));
	e->g = g;
	e->p = e->m = e->qp = e->create_p = -1;
	e->first_run_ts = TS_NONE;
	e->reason = GR_NONE;
	t->gcount++;
	t->gtotal++;
	if (t->gcount > t->gpeak)
		t->gpeak = t->gcount;
	return e;
oom:
	err_push(err, "out of memory (%zu live Gs)", t->gcount);
	return NULL;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void gtable_delete(struct gtable *t, struct gs *e)
{
	uint32_t k = (uint32_t)(e - t->gtab);
	size_t mask = t->gcap - 1;
	size_t i = ghash(t, e->g);

	while (t->gidx[i] != k + 1)
		i = (i + 1) & mask;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (t->gidx[j] == 0)
			break;
		size_t h = ghash(t, t->gtab[t->gidx[j] - 1].g);
		/* Move j to i if h is cyclically outside (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			t->gidx[i] = t->gidx[j];
			i = j;
		}
	}
	t->gidx[i] = 0;
	e->g = 0;
	t->gfree[t->nfree++] = k;
	t->gcount--;
}
