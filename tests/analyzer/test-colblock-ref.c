/*
 * test-colblock-ref.c - the block encoder (cb_encode) writes, byte for byte,
 * the blobs and zone maps of the straightforward encoder below (colblock.c
 * as it was before it was made fast, unchanged but for its name), on columns
 * of every shape: runs of every length around MIN_RUN, literal sections
 * whose header takes 1 to 3 bytes, packing on 0 to 64 bits, NULL runs and
 * bitmaps on row counts that are not multiples of 8 or 64, texts of every
 * length, set filters. A column without NULLs is also given as null = NULL,
 * and integers also spread in memory (cb_col_in.stride).
 *
 * Invariants: fixed seeds (a failure repeats). Concurrency: none.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colblock.h"
#include "sbuf.h"
#include "wsrtest.h"

#define CB_VERSION 1
#define MIN_RUN 3
#define SET_MIN_LOG 6
#define SET_MAX_LOG 16
#define SET_PROBES 4

/* ---- the reference encoder ---- */

/* A 32-bit checksum of n bytes, 8 at a time (little-endian words). */
static uint32_t ref_cb_sum(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (; n > 0; p += n >= 8 ? 8 : n, n -= n >= 8 ? 8 : n) {
		uint64_t w = 0;
		size_t k = n >= 8 ? 8 : n;
		for (size_t i = 0; i < k; i++)
			w |= (uint64_t)p[i] << (8 * i);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

static void ref_put_varint(struct sbuf *o, uint64_t x)
{
	uint8_t b[10];
	int n = 0;

	while (x >= 0x80) {
		b[n++] = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	b[n++] = (uint8_t)x;
	sb_add(o, b, (size_t)n);
}

static uint64_t ref_zig(uint64_t d)
{
	int64_t s = (int64_t)d;
	return (d << 1) ^ (uint64_t)(s >> 63);
}

/* x as a varint at p; the byte after it. */
static inline uint8_t *ref_vput(uint8_t *p, uint64_t x)
{
	while (x >= 0x80) {
		*p++ = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	*p++ = (uint8_t)x;
	return p;
}

/* The delta runs of the m values v (their deltas into d, m entries), at p:
 * at most 2 varints of a run's header and value per value. */
static uint8_t *ref_enc_deltas(uint8_t *p, const uint64_t *v, uint32_t m, uint64_t *d)
{
	uint64_t prev = 0;

	for (uint32_t k = 0; k < m; k++) {
		d[k] = v[k] - prev;
		prev = v[k];
	}
	uint32_t lit = 0, k = 0;
	while (k < m) {
		uint32_t r = 1;
		while (k + r < m && d[k + r] == d[k])
			r++;
		if (r < MIN_RUN) {
			k++;
			continue;
		}
		if (k > lit) {
			p = ref_vput(p, (uint64_t)(k - lit) << 1 | 1);
			for (uint32_t j = lit; j < k; j++)
				p = ref_vput(p, ref_zig(d[j]));
		}
		p = ref_vput(p, (uint64_t)r << 1);
		p = ref_vput(p, ref_zig(d[k]));
		k += r;
		lit = k;
	}
	if (m > lit) {
		p = ref_vput(p, (uint64_t)(m - lit) << 1 | 1);
		for (uint32_t j = lit; j < m; j++)
			p = ref_vput(p, ref_zig(d[j]));
	}
	return p;
}

static size_t ref_varint_len(uint64_t x)
{
	size_t n = 1;
	while (x >= 0x80) {
		x >>= 7;
		n++;
	}
	return n;
}

/* The m values v packed on w bits each from min, at p. */
static uint8_t *ref_enc_packed(uint8_t *p, const uint64_t *v, uint32_t m, uint64_t min, int w)
{
	uint64_t acc = 0;
	int bits = 0;

	p = ref_vput(p, ref_zig(min));
	*p++ = (uint8_t)w;
	if (w == 0)
		return p;
	if (w <= 56) {
		/* whole values fit the accumulator beside the bits not yet out */
		for (uint32_t k = 0; k < m; k++) {
			acc |= (v[k] - min) << bits;
			bits += w;
			while (bits >= 8) {
				*p++ = (uint8_t)acc;
				acc >>= 8;
				bits -= 8;
			}
		}
	} else {
		for (uint32_t k = 0; k < m; k++) {
			uint64_t x = v[k] - min;
			int left = w;
			while (left > 0) {
				int take = left < 64 - bits ? left : 64 - bits;
				uint64_t part = take == 64 ? x : x & (((uint64_t)1 << take) - 1);
				acc |= bits == 64 ? 0 : part << bits;
				bits += take;
				left -= take;
				x = take == 64 ? 0 : x >> take;
				while (bits >= 8) {
					*p++ = (uint8_t)acc;
					acc >>= 8;
					bits -= 8;
				}
			}
		}
	}
	if (bits > 0)
		*p++ = (uint8_t)acc;
	return p;
}

/* An integer payload of n rows (v, null; d: scratch of 2 n entries). */
static void ref_enc_ints(struct sbuf *o, const int64_t *v, const uint8_t *null, uint32_t n,
		     uint64_t *d)
{
	uint64_t *vals = d + n; /* the values that are not NULL */
	uint32_t m = 0, runs = 0;
	size_t rle = 0;
	bool in_null = false;
	uint32_t len = 0;

	/* the NULLs: count the runs (values first) and their bytes */
	for (uint32_t r = 0; r < n; r++) {
		bool isnull = null != NULL && null[r];
		if (isnull != in_null) {
			rle += ref_varint_len(len);
			runs++;
			len = 0;
			in_null = isnull;
		}
		len++;
		if (!isnull)
			vals[m++] = (uint64_t)v[r];
	}
	rle += ref_varint_len(len) + ref_varint_len(runs + 1);
	int nullmode = m == n ? 0 : m == 0 ? 1 : rle <= (n + 7) / 8 ? 2 : 3;
	/* the values: packed from min on w bits, or delta runs, whichever is smaller */
	uint64_t min = 0, max = 0;
	for (uint32_t k = 0; k < m; k++) {
		if (k == 0 || (int64_t)vals[k] < (int64_t)min)
			min = vals[k];
		if (k == 0 || (int64_t)vals[k] > (int64_t)max)
			max = vals[k];
	}
	int w = 0;
	for (uint64_t span = max - min; span != 0; span >>= 1)
		w++;
	size_t packed = ref_varint_len(ref_zig(min)) + 1 + ((size_t)m * (size_t)w + 7) / 8;
	/* the most it takes: the mode, the NULLs (a varint per run, or the
	 * bitmap), then the deltas (two varints per value at most) or packed */
	size_t most = 1 + 10 * ((size_t)runs + 2) + (n + 7) / 8 + 20 * (size_t)m + packed + 16;
	uint8_t *p0 = (uint8_t *)sb_room(o, most), *p = p0;
	if (p == NULL)
		return;
	*p++ = 0;
	if (nullmode == 2) {
		p = ref_vput(p, runs + 1);
		in_null = false;
		len = 0;
		for (uint32_t r = 0; r < n; r++) {
			bool isnull = null[r] != 0;
			if (isnull != in_null) {
				p = ref_vput(p, len);
				len = 0;
				in_null = isnull;
			}
			len++;
		}
		p = ref_vput(p, len);
	} else if (nullmode == 3) {
		for (uint32_t r = 0; r < n; r += 8) {
			uint8_t b = 0;
			for (uint32_t k = 0; k < 8 && r + k < n; k++)
				b |= (uint8_t)((null[r + k] != 0) << k);
			*p++ = b;
		}
	}
	int valmode = 0;
	if (m > 0) {
		uint8_t *before = p;
		p = ref_enc_deltas(p, vals, m, d);
		if ((size_t)(p - before) > packed) {
			p = ref_enc_packed(before, vals, m, min, w);
			valmode = 1;
		}
	}
	p0[0] = (uint8_t)(nullmode | valmode << 2);
	sb_commit(o, (size_t)(p - p0));
}

struct ref_dict {
	uint32_t *slot; /* index + 1 of the entry, 0: empty */
	uint32_t mask;
	uint32_t n;
	uint32_t *first; /* the first row of each entry */
};

static uint64_t ref_hash_text(const void *s, uint32_t len)
{
	const uint8_t *p = s;
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (uint32_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Row r's text ("" when the column has no bytes at all). */
static const char *ref_text_of(const struct cb_col_in *c, uint32_t r)
{
	return c->text != NULL ? c->text + c->v[r] : "";
}

/* The dictionary and indices of a text column (idx: nrows entries). */
static int ref_enc_text(struct sbuf *o, const struct cb_col_in *c, uint32_t n, int64_t *idx,
		    uint64_t *d, struct cb_zone *z)
{
	struct ref_dict dc = {0};
	uint32_t size = 16;

	while (size < 2 * n)
		size *= 2;
	dc.slot = calloc(size, sizeof(*dc.slot));
	dc.first = malloc(n * sizeof(*dc.first));
	if (dc.slot == NULL || dc.first == NULL) {
		free(dc.slot);
		free(dc.first);
		return -1;
	}
	dc.mask = size - 1;
	for (uint32_t r = 0; r < n; r++) {
		if (c->null[r]) {
			idx[r] = 0;
			continue;
		}
		const char *s = ref_text_of(c, r);
		uint32_t len = c->len[r];
		uint64_t h = ref_hash_text(s, len);
		uint32_t at = (uint32_t)h & dc.mask;
		for (;;) {
			uint32_t e = dc.slot[at];
			if (e == 0) {
				dc.first[dc.n] = r;
				dc.slot[at] = ++dc.n;
				idx[r] = dc.n - 1;
				z->mask |= (uint64_t)1 << (h >> 58);
				break;
			}
			uint32_t f = dc.first[e - 1];
			if (c->len[f] == len && memcmp(ref_text_of(c, f), s, len) == 0) {
				idx[r] = e - 1;
				break;
			}
			at = (at + 1) & dc.mask;
		}
	}
	ref_put_varint(o, dc.n);
	for (uint32_t i = 0; i < dc.n; i++) {
		uint32_t f = dc.first[i];
		ref_put_varint(o, c->len[f]);
		sb_add(o, ref_text_of(c, f), c->len[f]);
	}
	ref_enc_ints(o, idx, c->null, n, d);
	free(dc.slot);
	free(dc.first);
	return 0;
}

/* The SET_PROBES bit numbers of v in a set filter of 2^log bits: p + j * q
 * modulo 2^log, p and q the halves of splitmix64's finalizer of v (q odd).
 * The writer (ref_put_set) and the readers (cb_set_may_hold) use only this. */
static void ref_set_probes(int64_t v, unsigned log, uint64_t bit[SET_PROBES])
{
	uint64_t x = (uint64_t)v + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	uint64_t p = x & 0xffffffffu, q = (x >> 32) | 1, m = ((uint64_t)1 << log) - 1;
	for (int j = 0; j < SET_PROBES; j++)
		bit[j] = (p + (uint64_t)j * q) & m;
}

static uint32_t ref_popcount_bytes(const uint8_t *b, size_t n)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += (uint32_t)__builtin_popcount(b[i]);
	return k;
}

/* Appends column c's set filter (varint L, then its bytes) to zone. */
static void ref_put_set(struct sbuf *zone, const struct cb_col_in *c, uint32_t nrows)
{
	uint8_t set[((size_t)1 << SET_MAX_LOG) / 8];
	uint32_t nv = 0, log = SET_MIN_LOG;

	for (uint32_t r = 0; r < nrows; r++)
		nv += !c->null[r];
	while (log < SET_MAX_LOG && ((uint64_t)1 << log) < 16 * (uint64_t)nv)
		log++;
	size_t bytes = ((size_t)1 << log) / 8;
	memset(set, 0, bytes);
	for (uint32_t r = 0; r < nrows; r++) {
		if (c->null[r])
			continue;
		uint64_t bit[SET_PROBES];
		ref_set_probes(c->v[r], log, bit);
		for (int j = 0; j < SET_PROBES; j++)
			set[bit[j] >> 3] |= (uint8_t)(1u << (bit[j] & 7));
	}
	/* fold while the half stays at most 40% set */
	while (log > SET_MIN_LOG) {
		size_t half = bytes / 2;
		uint8_t folded[((size_t)1 << SET_MAX_LOG) / 16];
		for (size_t i = 0; i < half; i++)
			folded[i] = set[i] | set[i + half];
		if (10 * (uint64_t)ref_popcount_bytes(folded, half) > 4 * 8 * (uint64_t)half)
			break;
		memcpy(set, folded, half);
		bytes = half;
		log--;
	}
	ref_put_varint(zone, log);
	sb_add(zone, set, bytes);
}

static int ref_encode(const struct cb_col_in *cols, uint32_t ncols, uint32_t nrows,
		      struct sbuf *blob, struct sbuf *zone)
{
	struct sbuf pay;
	struct cb_zone zs[CB_MAX_COLS];
	size_t sizes[CB_MAX_COLS];
	uint64_t *d = malloc(2 * (size_t)nrows * sizeof(*d));
	int64_t *idx = malloc((size_t)nrows * sizeof(*idx));
	int ret = -1;

	sb_init(&pay);
	if (d == NULL || idx == NULL || ncols > CB_MAX_COLS || nrows == 0 || nrows > CB_MAX_ROWS)
		goto out;
	for (uint32_t c = 0; c < ncols; c++) {
		const struct cb_col_in *ci = &cols[c];
		struct cb_zone *z = &zs[c];
		size_t before = pay.len;
		memset(z, 0, sizeof(*z));
		bool any = false;
		for (uint32_t r = 0; r < nrows; r++) {
			if (ci->null[r]) {
				z->nnull++;
			} else if (ci->type == CB_INT) {
				if (!any || ci->v[r] < z->min)
					z->min = ci->v[r];
				if (!any || ci->v[r] > z->max)
					z->max = ci->v[r];
				any = true;
			}
		}
		if (ci->type == CB_INT)
			ref_enc_ints(&pay, ci->v, ci->null, nrows, d);
		else if (ref_enc_text(&pay, ci, nrows, idx, d, z) < 0)
			goto out;
		sizes[c] = pay.len - before;
	}
	sb_add(blob, "WB", 2);
	sb_putc(blob, CB_VERSION);
	ref_put_varint(blob, nrows);
	ref_put_varint(blob, ncols);
	size_t at = 0;
	for (uint32_t c = 0; c < ncols; c++) {
		uint32_t sum = ref_cb_sum((const uint8_t *)pay.buf + at, sizes[c]);
		uint8_t sb[4] = {(uint8_t)sum, (uint8_t)(sum >> 8), (uint8_t)(sum >> 16),
				 (uint8_t)(sum >> 24)};
		sb_putc(blob, (char)cols[c].type);
		ref_put_varint(blob, sizes[c]);
		sb_add(blob, sb, 4);
		at += sizes[c];
	}
	sb_add(blob, pay.buf, pay.len);
	if (zone != NULL) {
		size_t zat = zone->len;
		ref_put_varint(zone, nrows);
		ref_put_varint(zone, ncols);
		for (uint32_t c = 0; c < ncols; c++) {
			ref_put_varint(zone, zs[c].nnull);
			if (zs[c].nnull == nrows)
				continue;
			if (cols[c].type == CB_INT) {
				ref_put_varint(zone, ref_zig((uint64_t)zs[c].min));
				ref_put_varint(zone, ref_zig((uint64_t)zs[c].max));
				if (cols[c].set)
					ref_put_set(zone, &cols[c], nrows);
				else
					ref_put_varint(zone, 0);
			} else {
				ref_put_varint(zone, zs[c].mask);
			}
		}
		if (!zone->oom) {
			uint32_t sum = ref_cb_sum((const uint8_t *)zone->buf + zat, zone->len - zat);
			uint8_t sb[4] = {(uint8_t)sum, (uint8_t)(sum >> 8), (uint8_t)(sum >> 16),
					 (uint8_t)(sum >> 24)};
			sb_add(zone, sb, 4);
		}
	}
	ret = blob->oom || (zone != NULL && zone->oom) || pay.oom ? -1 : 0;
out:
	sb_free(&pay);
	free(d);
	free(idx);
	return ret;
}


/* ---- the cases ---- */

#define NCOLS 12

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
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

/* Encodes B both ways (cols: of these types) and compares the bytes. */
static void check_same(const uint8_t *types, const uint8_t *set, uint32_t ncols)
{
	struct cb_col_in ref[NCOLS], fast[NCOLS];
	struct sbuf rb, rz, fb, fz;

	sb_init(&rb);
	sb_init(&rz);
	sb_init(&fb);
	sb_init(&fz);
	sb_add(&fb, "x", 1); /* the block is appended */
	for (uint32_t c = 0; c < ncols; c++) {
		bool any = false;
		for (uint32_t i = 0; i < B.n; i++)
			any |= B.null[c][i] != 0;
		ref[c] = (struct cb_col_in){types[c], B.null[c], B.v[c], B.len[c], B.text.buf, set[c], 0};
		fast[c] = ref[c];
		if (!any && rnd() % 2)
			fast[c].null = NULL;
		if (c < 2 && types[c] == CB_INT) {
			for (uint32_t i = 0; i < B.n; i++)
				spread[c][3 * i] = B.v[c][i];
			fast[c].v = spread[c];
			fast[c].stride = 3 * sizeof(int64_t);
		}
	}
	ASSERT_EQ(ref_encode(ref, ncols, B.n, &rb, &rz), 0);
	ASSERT_EQ(cb_encode(fast, ncols, B.n, &fb, &fz), 0);
	ASSERT_EQ(fb.len, rb.len + 1);
	ASSERT(memcmp(fb.buf + 1, rb.buf, rb.len) == 0);
	ASSERT_EQ(fz.len, rz.len);
	ASSERT(memcmp(fz.buf, rz.buf, rz.len) == 0);
	sb_free(&rb);
	sb_free(&rz);
	sb_free(&fb);
	sb_free(&fz);
}

WSR_TEST_TIMEOUT(colblock_encodes_as_the_reference, 120)
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
		check_same(types, set, NCOLS);
	}
	/* texts of no bytes at all: the text pointer may be NULL */
	B.n = 100;
	types[0] = CB_TEXT;
	set[0] = 0;
	sb_free(&B.text);
	memset(B.len[0], 0, sizeof(B.len[0]));
	memset(B.v[0], 0, sizeof(B.v[0]));
	fill_nulls(B.null[0], B.n, 2);
	check_same(types, set, 1);
}
