/*
 * test-colblock.c - the block codec (analyzer/colblock.c): random rows
 * round-trip exactly (NULLs, INT64_MIN/MAX, long runs, blocks whose texts
 * are all distinct), and a truncated or altered blob or zone map is an
 * error, never other values.
 *
 * Invariants: each case seeds its own generator (fixed seeds: a failure
 * repeats). Concurrency: none.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colblock.h"
#include "sbuf.h"
#include "wsrtest.h"

#define NCOLS 6

static uint64_t rng;

static uint64_t rnd(void)
{
	return wsrtest_xorshift(&rng);
}

/* Rows of NCOLS columns: 0 sorted ids, 1 non-decreasing ts, 2 a text of
 * few values, 3 integers of every kind, 4 a text of many values, 5 mostly NULL. */
struct rows {
	uint32_t n;
	int64_t v[NCOLS][CB_MAX_ROWS];
	uint32_t len[NCOLS][CB_MAX_ROWS];
	uint8_t null[NCOLS][CB_MAX_ROWS];
	struct sbuf text;
};

static const uint8_t types[NCOLS] = {CB_INT, CB_INT, CB_TEXT, CB_INT, CB_TEXT, CB_INT};

static int64_t wild(void)
{
	static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1,
				       INT64_MAX - 1};
	switch (rnd() % 5) {
	case 0:
		return edge[rnd() % 7];
	case 1:
		return (int64_t)rnd();
	case 2:
		return (int64_t)(rnd() % 200) - 100;
	default:
		return (int64_t)(rnd() >> (rnd() % 64));
	}
}

static void put_text(struct rows *r, int c, uint32_t i, const char *s, size_t n)
{
	r->v[c][i] = (int64_t)r->text.len;
	r->len[c][i] = (uint32_t)n;
	sb_add(&r->text, s, n);
}

static void fill(struct rows *r, uint32_t n, int style)
{
	static const char *const names[] = {"g_run", "g_stop", "", "runqput", "steal"};
	int64_t id = (int64_t)(rnd() % 1000), ts = (int64_t)rnd() / 4;
	int64_t run = wild();

	memset(r->null, 0, sizeof(r->null));
	r->text.len = 0;
	r->n = n;
	for (uint32_t i = 0; i < n; i++) {
		r->v[0][i] = id;
		id += style == 1 ? 1 : 1 + (int64_t)(rnd() % 3);
		r->v[1][i] = ts;
		ts += style == 1 ? 0 : (int64_t)(rnd() % 4000);
		const char *nm = names[rnd() % 5];
		put_text(r, 2, i, nm, strlen(nm));
		if (style == 1) {
			/* long runs: one value, then runs of NULLs */
			r->v[3][i] = run;
			r->null[3][i] = (i / 100) % 2 == 1;
		} else {
			r->v[3][i] = wild();
			r->null[3][i] = rnd() % 7 == 0;
		}
		char buf[64];
		/* all distinct (a dictionary as long as the block), with NUL bytes and "" */
		int len = 0;
		if (i % 17 != 0) {
			len = snprintf(buf, sizeof(buf), "x%u", i) + 1; /* and its NUL */
			len += snprintf(buf + len, sizeof(buf) - (size_t)len, "y%llu",
					(unsigned long long)rnd());
		}
		put_text(r, 4, i, buf, (size_t)len);
		r->null[4][i] = style != 1 && rnd() % 5 == 0;
		r->v[5][i] = wild();
		r->null[5][i] = style == 1 || rnd() % 10 != 0;
	}
}

static void encode(const struct rows *r, struct sbuf *blob, struct sbuf *zone)
{
	struct cb_col_in cols[NCOLS];

	for (int c = 0; c < NCOLS; c++)
		cols[c] = (struct cb_col_in){types[c], r->null[c], r->v[c], r->len[c], r->text.buf,
					     types[c] == CB_INT && c % 2 == 1, 0};
	ASSERT_EQ(cb_encode(cols, NCOLS, r->n, blob, zone), 0);
}

/* 0 when blob decodes to exactly r, -1 when decoding fails; aborts on other values. */
static int check_decode(struct cb_block *b, const struct rows *r, const void *blob, size_t len)
{
	char err[128];

	if (cb_open(b, blob, len, NCOLS, types, err, sizeof(err)) < 0) {
		ASSERT(err[0] != '\0');
		return -1;
	}
	for (uint32_t c = 0; c < NCOLS; c++)
		if (cb_decode_col(b, c, err, sizeof(err)) < 0) {
			ASSERT(strstr(err, "column") != NULL);
			return -1;
		}
	ASSERT_EQ(b->nrows, r->n);
	for (uint32_t c = 0; c < NCOLS; c++) {
		const struct cb_col *col = &b->cols[c];
		for (uint32_t i = 0; i < r->n; i++) {
			ASSERT_EQ(col->null[i], r->null[c][i] != 0);
			if (r->null[c][i])
				continue;
			if (types[c] == CB_INT) {
				ASSERT(col->v[i] == r->v[c][i]);
			} else {
				ASSERT_EQ(col->dlen[col->v[i]], r->len[c][i]);
				ASSERT(memcmp(col->dict[col->v[i]], r->text.buf + r->v[c][i],
					      r->len[c][i]) == 0);
			}
		}
	}
	return 0;
}

static struct rows R;

WSR_TEST_TIMEOUT(colblock_round_trip_random, 60)
{
	struct cb_block b = {0};
	struct sbuf blob, zone;

	sb_init(&R.text);
	sb_init(&blob);
	sb_init(&zone);
	rng = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 300; round++) {
		uint32_t n = round % 50 == 0 ? CB_MAX_ROWS : 1 + (uint32_t)(rnd() % 3000);
		fill(&R, n, round % 3);
		blob.len = zone.len = 0;
		encode(&R, &blob, &zone);
		ASSERT_EQ(check_decode(&b, &R, blob.buf, blob.len), 0);
		/* the zone map agrees with the rows */
		struct cb_zone z[NCOLS];
		uint32_t zn = 0;
		char err[128];
		ASSERT_EQ(cb_zone_decode(zone.buf, zone.len, NCOLS, types, &zn, z, err, sizeof(err)),
			  0);
		ASSERT_EQ(zn, n);
		for (int c = 0; c < NCOLS; c++) {
			uint32_t nn = 0;
			for (uint32_t i = 0; i < n; i++) {
				nn += R.null[c][i] != 0;
				if (!R.null[c][i] && types[c] == CB_INT)
					ASSERT(R.v[c][i] >= z[c].min && R.v[c][i] <= z[c].max);
				/* a set filter never lacks a value the block has */
				if (!R.null[c][i] && types[c] == CB_INT && c % 2 == 1)
					ASSERT(cb_set_may_hold((const uint8_t *)zone.buf + z[c].set_at,
							       z[c].set_log, R.v[c][i]));
				if (!R.null[c][i] && types[c] == CB_TEXT)
					ASSERT((z[c].mask & cb_text_bit(R.text.buf + R.v[c][i],
									R.len[c][i])) != 0);
			}
			ASSERT_EQ(nn, z[c].nnull);
		}
	}
	/* runs cost little: ids by 1, a constant ts, runs of 100 values and
	 * 100 NULLs, a column of NULLs are a few bytes each */
	fill(&R, 4000, 1);
	blob.len = 0;
	encode(&R, &blob, NULL);
	ASSERT_EQ(check_decode(&b, &R, blob.buf, blob.len), 0);
	ASSERT_LT(b.cols[0].size, 8);
	ASSERT_LT(b.cols[1].size, 16);
	ASSERT_LT(b.cols[3].size, 40 * 4 + 16);
	ASSERT_LT(b.cols[5].size, 8);
	cb_free(&b);
	sb_free(&R.text);
	sb_free(&blob);
	sb_free(&zone);
}

WSR_TEST_TIMEOUT(colblock_corrupt_is_an_error, 120)
{
	struct cb_block b = {0};
	struct sbuf blob, zone;
	char err[128];

	sb_init(&R.text);
	sb_init(&blob);
	sb_init(&zone);
	rng = 12345;
	fill(&R, 300, 0);
	encode(&R, &blob, &zone);
	uint8_t *copy = malloc(blob.len);
	ASSERT(copy != NULL);
	/* every truncation */
	for (size_t len = 0; len < blob.len; len++) {
		memcpy(copy, blob.buf, len);
		ASSERT_EQ(check_decode(&b, &R, copy, len), -1);
	}
	/* every byte altered, in three ways: an error, or (never seen) the same rows */
	int errors = 0, same = 0;
	for (size_t i = 0; i < blob.len; i++) {
		static const uint8_t flips[] = {0x01, 0x80, 0xff};
		for (int f = 0; f < 3; f++) {
			memcpy(copy, blob.buf, blob.len);
			copy[i] ^= flips[f];
			if (check_decode(&b, &R, copy, blob.len) < 0)
				errors++;
			else
				same++;
		}
	}
	ASSERT_EQ(errors, (int)blob.len * 3);
	ASSERT_EQ(same, 0);
	/* zone maps: every truncation and every altered byte is an error (a
	 * wrong min or max would skip a block silently) */
	struct cb_zone z[NCOLS];
	uint32_t zn;
	for (size_t len = 0; len < zone.len; len++)
		ASSERT_EQ(cb_zone_decode(zone.buf, len, NCOLS, types, &zn, z, err, sizeof(err)),
			  -1);
	for (size_t i = 0; i < zone.len; i++) {
		zone.buf[i] ^= 0x10;
		ASSERT_EQ(cb_zone_decode(zone.buf, zone.len, NCOLS, types, &zn, z, err, sizeof(err)),
			  -1);
		zone.buf[i] ^= 0x10;
	}
	ASSERT_EQ(cb_zone_decode(zone.buf, zone.len, NCOLS, types, &zn, z, err, sizeof(err)), 0);
	ASSERT_EQ(cb_zone_decode(zone.buf, zone.len, NCOLS - 1, types, &zn, z, err, sizeof(err)),
		  -1);
	/* a blob of other column types, or another column count */
	static const uint8_t other[NCOLS] = {CB_INT, CB_INT, CB_INT, CB_INT, CB_TEXT, CB_INT};
	ASSERT_EQ(cb_open(&b, blob.buf, blob.len, NCOLS, other, err, sizeof(err)), -1);
	ASSERT_EQ(cb_open(&b, blob.buf, blob.len, NCOLS + 1, types, err, sizeof(err)), -1);
	ASSERT_EQ(cb_open(&b, NULL, 0, NCOLS, types, err, sizeof(err)), -1);
	free(copy);
	cb_free(&b);
	sb_free(&R.text);
	sb_free(&blob);
	sb_free(&zone);
}

/* The zone map of one integer column of n rows (set: with a set filter);
 * zone keeps its bytes, where the filter's are. */
static struct cb_zone int_zone(const int64_t *v, const uint8_t *null, uint32_t n, uint8_t set,
			       struct sbuf *zone)
{
	static const uint8_t itype[1] = {CB_INT};
	struct cb_col_in col = {CB_INT, null, v, NULL, NULL, set, 0};
	struct sbuf blob;
	struct cb_zone z;
	uint32_t zn;
	char err[128];

	sb_init(&blob);
	zone->len = 0;
	ASSERT_EQ(cb_encode(&col, 1, n, &blob, zone), 0);
	ASSERT_EQ(cb_zone_decode(zone->buf, zone->len, 1, itype, &zn, &z, err, sizeof(err)), 0);
	sb_free(&blob);
	return z;
}

/* A block's set filter holds every value it has, is sized to the distinct
 * values (a block of one value gets the smallest), and lets few absent
 * values through: a lookup by G id reads few blocks that lack the G. */
WSR_TEST_TIMEOUT(colblock_set_filter_sizes_and_false_hits, 60)
{
	enum { N = 1024 };
	static int64_t v[N];
	static uint8_t null[N];
	struct sbuf zone;
	const int distinct[] = {1, 40, 437, 1024};

	sb_init(&zone);
	for (size_t t = 0; t < sizeof(distinct) / sizeof(distinct[0]); t++) {
		int d = distinct[t];
		for (int i = 0; i < N; i++)
			v[i] = 1000000 + 7 * (int64_t)(i % d);
		struct cb_zone z = int_zone(v, null, N, 1, &zone);
		const uint8_t *set = (const uint8_t *)zone.buf + z.set_at;
		for (int i = 0; i < d; i++)
			ASSERT(cb_set_may_hold(set, z.set_log, v[i]));
		int hits = 0, tries = 20000;
		for (int k = 0; k < tries; k++)
			hits += cb_set_may_hold(set, z.set_log, 1000000 + 7 * (int64_t)d + 3 + k);
		/* at most 40% of the bits set: fill^4 <= 2.6% of absent values pass */
		ASSERT(hits * 100 <= tries * 4);
		/* 16 bits a value at most before folding, and the smallest for one */
		ASSERT((1 << z.set_log) <= (d * 16 < 64 ? 64 : 2 * 16 * d));
		if (d == 1)
			ASSERT_EQ(z.set_log, 6);
	}
	/* no filter asked for: none written */
	ASSERT_EQ(int_zone(v, null, N, 0, &zone).set_log, 0);
	sb_free(&zone);
}
