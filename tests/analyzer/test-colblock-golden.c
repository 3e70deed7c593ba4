/*
 * test-colblock-golden.c - the block encoder (cb_encode) writes the bytes it
 * always wrote: 601 blocks of random columns of every shape (runs of every
 * length around the codec's MIN_RUN, literal sections whose header takes 1
 * to 3 bytes, packing on 0 to 64 bits, NULL runs and bitmaps on row counts
 * that are not multiples of 8 or 64, texts of every length, set filters),
 * their blobs and zone maps digested (64-bit FNV-1a, every 50 blocks) and
 * compared with the digests of the straightforward encoder of 2026-12-01
 * (colblock.c before it was made fast; it checked the fast one byte for
 * byte on these blocks, then was dropped rather than kept as a second copy
 * of the format). A column without NULLs is also given as null = NULL, and
 * integers also spread in memory (cb_col_in.stride): the same bytes.
 * Round trips are test-colblock.c's.
 *
 * A digest that differs means the format changed: if on purpose, bump
 * CB_VERSION (colblock.c, docs/schema.md) and put the new digests here.
 *
 * Invariants: fixed seeds (a failure repeats). Concurrency: none.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colblock.h"
#include "sbuf.h"
#include "wsrtest.h"

/* ---- the cases ---- */

#define NCOLS 12

static uint64_t rng;

static uint64_t rnd(void)
{
	return wsrtest_xorshift(&rng);
}

static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1};

/* Column values of one of 10 shapes. */
static void fill_ints(int64_t *v, uint32_t n, int shape)
{
	int64_t x = (int64_t)(rnd() % 1000) - 500, d = (int64_t)(rnd() % 5) - 2;
	uint64_t span = (uint64_t)1 << (rnd() % 64);

	for (uint32_t i = 0; i < n; i++) {
		switch (shape) {
		case 0: /* ids: delta 1 */
			v[i] = x + i;
			break;
		case 1: /* time stamps */
			x += (int64_t)(rnd() % 4000);
			v[i] = x;
			break;
		case 2: /* a constant */
			v[i] = x;
			break;
		case 3: /* a few values */
			v[i] = x + (int64_t)(rnd() % 5);
			break;
		case 4: /* stretches of equal deltas, 1 to 6 long */
			if (rnd() % 3 == 0)
				d = (int64_t)(rnd() % 7) - 3;
			x += d;
			v[i] = x;
			break;
		case 5: /* anything */
			v[i] = rnd() % 3 == 0 ? edge[rnd() % 7] : (int64_t)rnd();
			break;
		case 6: /* within a span of 2^0..2^63: packed on any width */
			v[i] = (int64_t)(rnd() % span) - (int64_t)(span / 2);
			break;
		case 7: /* the extremes, alternating runs */
			v[i] = edge[(i / (1 + rnd() % 4)) % 2];
			break;
		case 8: /* long runs and long literal stretches */
			if (i % 500 == 0)
				d = rnd() % 2 ? 0 : (int64_t)(rnd() % 1000) + 1;
			x += d != 0 ? (int64_t)(rnd() % (uint64_t)d) : 0;
			v[i] = x;
			break;
		default: /* big deltas: varints of up to 10 bytes */
			v[i] = (int64_t)(rnd() >> (rnd() % 64));
		}
	}
}

/* NULLs of one of 7 patterns (some rows with 2 or 255 rather than 1). */
static void fill_nulls(uint8_t *null, uint32_t n, int pattern)
{
	uint32_t len = 1 + (uint32_t)(rnd() % 300);

	for (uint32_t i = 0; i < n; i++) {
		switch (pattern) {
		case 0:
			null[i] = 0;
			break;
		case 1:
			null[i] = 1;
			break;
		case 2: /* sparse */
			null[i] = rnd() % 20 == 0;
			break;
		case 3: /* dense */
			null[i] = rnd() % 20 != 0 ? 255 : 0;
			break;
		case 4: /* runs, some longer than 127 */
			null[i] = (i / len) % 2 ? 2 : 0;
			break;
		case 5: /* the first and the last row */
			null[i] = i == 0 || i == n - 1;
			break;
		default: /* half */
			null[i] = rnd() % 2;
		}
	}
}

struct block {
	uint32_t n;
	int64_t v[NCOLS][CB_MAX_ROWS];
	uint32_t len[NCOLS][CB_MAX_ROWS];
	uint8_t null[NCOLS][CB_MAX_ROWS];
	struct sbuf text;
};

static struct block B;
/* Columns 0 and 1 spread 3 values apart, as rows of a struct are */
static int64_t spread[2][3 * CB_MAX_ROWS];

/* Texts of 0 to 20 bytes (NUL bytes and all), from a pool of `pool`. */
static void fill_texts(int c, uint32_t n, uint32_t pool)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t = rnd() % pool, h = t * 0x9e3779b97f4a7c15ull;
		uint32_t len = (uint32_t)(t % 21);
		char s[21];
		for (uint32_t k = 0; k < len; k++)
			s[k] = (char)(h >> (8 * (k % 8))) ^ (char)(k / 8);
		B.v[c][i] = (int64_t)B.text.len;
		B.len[c][i] = len;
		sb_add(&B.text, s, len);
	}
}

static uint64_t digest = 0xcbf29ce484222325ull;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Encodes B (cols: of these types) as given, and again with a column
 * without NULLs given as null = NULL and columns 0 and 1 spread apart; the
 * two must be the same bytes, which go into the digest. */
static void encode_block(const uint8_t *types, const uint8_t *set, uint32_t ncols)
{
	struct cb_col_in plain[NCOLS], other[NCOLS];
	struct sbuf pb, pz, ob, oz;

	sb_init(&pb);
	sb_init(&pz);
	sb_init(&ob);
	sb_init(&oz);
	sb_add(&ob, "x", 1); /* the block is appended */
	for (uint32_t c = 0; c < ncols; c++) {
		bool any = false;
		for (uint32_t i = 0; i < B.n; i++)
			any |= B.null[c][i] != 0;
		plain[c] = (struct cb_col_in){types[c], B.null[c], B.v[c], B.len[c], B.text.buf,
					      set[c], 0};
		other[c] = plain[c];
		if (!any && rnd() % 2)
			other[c].null = NULL;
		if (c < 2 && types[c] == CB_INT) {
			for (uint32_t i = 0; i < B.n; i++)
				spread[c][3 * i] = B.v[c][i];
			other[c].v = spread[c];
			other[c].stride = 3 * sizeof(int64_t);
		}
	}
	ASSERT_EQ(cb_encode(plain, ncols, B.n, &pb, &pz), 0);
	ASSERT_EQ(cb_encode(other, ncols, B.n, &ob, &oz), 0);
	ASSERT_EQ(ob.len, pb.len + 1);
	ASSERT(memcmp(ob.buf + 1, pb.buf, pb.len) == 0);
	ASSERT_EQ(oz.len, pz.len);
	ASSERT(memcmp(oz.buf, pz.buf, pz.len) == 0);
	digest = fnv(digest, pb.buf, pb.len);
	digest = fnv(digest, pz.buf, pz.len);
	sb_free(&pb);
	sb_free(&pz);
	sb_free(&ob);
	sb_free(&oz);
}

/* The reference encoder's digests after blocks 49, 99, ... 599, then after
 * the last block (texts of no bytes). */
static const uint64_t golden[] = {
	0x25ea5ef5812768b0ull, 0x9429232425a061b2ull, 0x15c884284973bcb4ull,
	0x10a2020672806c5bull, 0x9fb66abbb65f982cull, 0xef17ceffab88afa3ull,
	0x7dc274ce97f3cfa8ull, 0x4155373e4621735bull, 0xa8bcbd4007d72f61ull,
	0x27dca9b609461540ull, 0xb7680e376435407cull, 0xffc5da7e859659c9ull,
	0xf2557b1445dcca56ull,
};

static void check_digest(int k, const char *after)
{
	if (digest != golden[k])
		printf("# digest after %s: 0x%016llx, want 0x%016llx\n", after,
		       (unsigned long long)digest, (unsigned long long)golden[k]);
	ASSERT_EQ(digest, golden[k]);
}

WSR_TEST_TIMEOUT(colblock_encodes_as_it_always_did, 120)
{
	static const uint32_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000, 1024, 3000};
	uint8_t types[NCOLS], set[NCOLS];

	sb_init(&B.text);
	rng = 0x2545f4914f6cdd1dull;
	for (int round = 0; round < 600; round++) {
		B.n = round % 100 == 99 ? CB_MAX_ROWS : sizes[rnd() % (sizeof(sizes) / sizeof(sizes[0]))];
		B.text.len = 0;
		for (int c = 0; c < NCOLS; c++) {
			types[c] = c % 4 == 3 ? CB_TEXT : CB_INT;
			set[c] = types[c] == CB_INT && rnd() % 3 == 0;
			if (types[c] == CB_INT)
				fill_ints(B.v[c], B.n, (int)(rnd() % 10));
			else
				fill_texts(c, B.n, 1 + (uint32_t)(rnd() % (rnd() % 2 ? 8 : 5000)));
			fill_nulls(B.null[c], B.n, (int)(rnd() % 7));
		}
		encode_block(types, set, NCOLS);
		if (round % 50 == 49) {
			char after[32];
			snprintf(after, sizeof(after), "block %d", round);
			check_digest(round / 50, after);
		}
	}
	/* texts of no bytes at all: the text pointer may be NULL */
	B.n = 100;
	types[0] = CB_TEXT;
	set[0] = 0;
	sb_free(&B.text);
	memset(B.len[0], 0, sizeof(B.len[0]));
	memset(B.v[0], 0, sizeof(B.v[0]));
	fill_nulls(B.null[0], B.n, 2);
	encode_block(types, set, 1);
	check_digest(12, "the last block");
}
