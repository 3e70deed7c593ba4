/*
 * colblock.c - the block codec (see colblock.h).
 *
 * A blob is a header and one payload per column:
 *
 *   'W' 'B' 1 | varint nrows | varint ncols | per column: type byte, varint
 *   payload bytes, 4 bytes of checksum | the payloads, in column order
 *
 * so a reader decodes only the columns a query uses, and checks a column's
 * checksum (cb_sum) before it decodes it: a changed byte is an error, not
 * another value. An integer payload is a mode byte, the NULLs, the values:
 *
 *   mode bits 0-1, the NULLs: 0 none; 1 every row (nothing follows); 2 run
 *     lengths (varint count of runs, then the varint lengths, alternately of
 *     values and of NULLs, values first); 3 a bitmap, bit r set: row r NULL
 *     (the smaller of 2 and 3 is written)
 *   mode bits 2-3, the m values that are not NULL, in row order:
 *     0 delta runs, each a varint header (count << 1 | kind) covering count
 *       values (count >= 1): kind 0 one zigzag varint delta d, each value
 *       the one before + d (repeats: d = 0; the ids: d = 1); kind 1 count
 *       zigzag varint deltas, one per value;
 *     1 packed: zigzag varint min, a byte w (0..64), then ceil(m * w / 8)
 *       bytes, value - min on w bits each, little-endian
 *     (the smaller of 0 and 1 is written: packed wins on a column of few
 *     values, such as p, m, cpu, the counters, a text's indices)
 *
 * Deltas are from the previous value (0 before the first), and packing from
 * min, in two's complement modulo 2^64, so every int64 round-trips. A text
 * column is a dictionary (varint count, then each text as a varint length
 * and its bytes, in order of first use) and the rows' dictionary indices as
 * an integer payload (NULL for NULL). The dictionary is the block's own, so it
 * has at most nrows entries whatever the texts.
 *
 * The zone map is varint nrows, varint ncols, then per column varint nnull and, when some
 * value is not NULL, zigzag varints min and max and a set filter (integers)
 * or the varint mask (texts), then 4 bytes of checksum of what precedes (a
 * block skipped by a wrong zone map would be rows missing without an error).
 * The set filter is a varint L, 0 for none, else 6..SET_MAX_LOG and a Bloom
 * filter of 2^L bits (2^L / 8 bytes, bit i in byte i / 8 at i % 8): each
 * value sets SET_PROBES bits, the probes p + j * q (j = 0..3, p and q the
 * halves of the value's 64-bit mix, q odd) modulo 2^L. Built at the size of
 * 16 bits per value, it is folded in halves (bit i | bit i + 2^(L-1)) while
 * the half stays at most 40% set, so a block of few distinct values gets a
 * small one; a lookup of a value the block lacks reads it with a chance of
 * about fill^4 (2.6% at 40%, 0.4% at 25%).
 *
 * The encoder passes over an integer column once to gather its values (from
 * rows spread in memory: cb_col_in.stride) with their min and max, which
 * give packed's size; the delta runs are then written as they come, given
 * up once surely longer (packed is written instead). The payloads go after
 * room for the header, which then takes its exact place. Its bytes are those
 * of the first, straightforward encoder (test-colblock-golden.c holds their
 * digests on 601 random blocks).
 *
 * Invariants: as in colblock.h; the decoder checks every count and length
 * against what is left of the payload, and a payload must end exactly where
 * its values do.
 * Concurrency: none.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colblock.h"

#define CB_VERSION 1
#define MIN_RUN 3
#define SET_MIN_LOG 6
#define SET_MAX_LOG 16
#define SET_PROBES 4
/* The most a run takes back of what enc_deltas() wrote before it. */
#define TAKE_BACK ((MIN_RUN - 1) * 10 + 1)

/* A 32-bit checksum of n bytes, 8 at a time (little-endian words, the last
 * of what is left). */
static uint32_t cb_sum(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

#pragma GCC unroll 2
	for (; n >= 8; p += 8, n -= 8) {
		h = (h ^ le64_load(p)) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (n > 0) {
		uint64_t w = 0;
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)p[i] << (8 * i);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

static inline uint32_t pop64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* The NULLs of n rows as bits, row r's bit r % 64 of mask[r / 64], 8 rows a
 * load (a byte's top bit set if it is not 0, then 8 such bits in a byte);
 * their count. */
static uint32_t null_mask(const uint8_t *null, uint32_t n, uint64_t *mask)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
	uint32_t nnull = 0;

	for (uint32_t r0 = 0; r0 < n; r0 += 64) {
		uint64_t bits = 0;
		if (n - r0 >= 64) {
#pragma GCC unroll 8
			for (uint32_t j = 0; j < 64; j += 8) {
				uint64_t x = le64_load(null + r0 + j);
				x = (((x & low7) + low7) | x) & ~low7;
				bits |= ((x >> 7) * 0x0102040810204080ull >> 56) << j;
			}
		} else {
			for (uint32_t r = r0; r < n; r++)
				bits |= (uint64_t)(null[r] != 0) << (r - r0);
		}
		mask[r0 / 64] = bits;
		nnull += pop64(bits);
	}
	return nnull;
}

/* Bit r % 64 of word w of the n rows of mask: row r starts a run (its NULL
 * bit differs from row r - 1's; row -1 is a value). */
static inline uint64_t run_starts(const uint64_t *mask, uint32_t w, uint32_t n)
{
	uint64_t t = mask[w] ^ (mask[w] << 1 | (w > 0 ? mask[w - 1] >> 63 : 0));

	return n - 64 * w >= 64 ? t : t & (((uint64_t)1 << (n - 64 * w)) - 1);
}

/* The bytes of mode 2's NULL runs of mask (the count of runs, then their
 * lengths, values first, the first maybe 0), written at p unless it is NULL;
 * if not written, a count past most once a byte per run is. */
static size_t null_runs(const uint64_t *mask, uint32_t n, uint8_t *p, size_t most)
{
	uint32_t runs = 1, last = 0, nw = (n + 63) / 64;

	for (uint32_t w = 0; w < nw; w++)
		runs += pop64(run_starts(mask, w, n));
	size_t bytes = varint_len(runs);
	if (p == NULL && bytes + runs > most)
		return bytes + runs;
	p = p != NULL ? varint_put(p, runs) : NULL;
	for (uint32_t w = 0; w <= nw; w++) /* and, past the words, the end at row n */
		for (uint64_t t = w < nw ? run_starts(mask, w, n) : 1; t != 0; t &= t - 1) {
			uint32_t r = w < nw ? 64 * w + (uint32_t)__builtin_ctzll(t) : n;
			bytes += varint_len(r - last);
			p = p != NULL ? varint_put(p, r - last) : NULL;
			last = r;
		}
	return bytes;
}

/* The values of the n rows not NULL in mask (NULL: none is), row r's at
 * v + r * stride bytes, in order into s (which may be v when stride is 8: a
 * value moves only down), and their min and max into mm. Without NULLs, 4
 * rows a turn, a min and max each: a quarter of the loop's work. */
static void gather(const int64_t *v, size_t stride, const uint64_t *mask, uint32_t n,
		   int64_t *s, int64_t mm[2])
{
	const char *at = (const char *)v;
	int64_t lo[4] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
	int64_t hi[4] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
	size_t m = 0;

	if (mask == NULL) {
		for (; m + 4 <= n; m += 4)
#pragma GCC unroll 4
			for (size_t j = 0; j < 4; j++) {
				int64_t x = *(const int64_t *)(at + (m + j) * stride);
				s[m + j] = x;
				lo[j] = x < lo[j] ? x : lo[j];
				hi[j] = x > hi[j] ? x : hi[j];
			}
		for (; m < n; m++) {
			s[m] = *(const int64_t *)(at + m * stride);
			lo[0] = s[m] < lo[0] ? s[m] : lo[0];
			hi[0] = s[m] > hi[0] ? s[m] : hi[0];
		}
	}
	for (size_t r0 = 0; mask != NULL && r0 < n; r0 += 64) {
		uint64_t keep = ~mask[r0 / 64];
		keep &= n - r0 >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n - r0)) - 1;
		for (; keep != 0; keep &= keep - 1) {
			int64_t x = *(const int64_t *)(at + (r0 + (size_t)__builtin_ctzll(keep)) * stride);
			s[m++] = x;
			lo[0] = x < lo[0] ? x : lo[0];
			hi[0] = x > hi[0] ? x : hi[0];
		}
	}
	for (int j = 1; j < 4; j++) {
		lo[0] = lo[j] < lo[0] ? lo[j] : lo[0];
		hi[0] = hi[j] > hi[0] ? hi[j] : hi[0];
	}
	mm[0] = lo[0];
	mm[1] = hi[0];
}

/* Closes the literal section whose header byte was kept at h, cnt deltas
 * from h + 1 to p: a header longer than a byte moves them up. The new end. */
static uint8_t *lit_close(uint8_t *h, uint32_t cnt, uint8_t *p)
{
	uint64_t x = (uint64_t)cnt << 1 | 1;
	size_t len = varint_len(x);

	if (len > 1)
		memmove(h + len, h + 1, (size_t)(p - h - 1));
	varint_put(h, x);
	return p + len - 1;
}

/* Whether the MIN_RUN deltas up to value q's, d, all of the section from
 * `from` (v: the first value), are equal, given value q - 1's is. */
static inline bool run_ends_at(const int64_t *q, const int64_t *from, const int64_t *v,
			       uint64_t d)
{
	for (int j = 2; j < MIN_RUN; j++)
		if (q - from < j || (uint64_t)q[-j] - (q - j > v ? (uint64_t)q[-j - 1] : 0) != d)
			return false;
	return q - from >= MIN_RUN - 1;
}

/* The delta runs of the m >= 1 values v at p, or NULL once they are sure to
 * take more than budget bytes. A run is each longest stretch of at least
 * MIN_RUN equal deltas; the deltas between runs go in literal sections.
 * Each delta goes in the open section as it comes (the section's header
 * byte kept, written when it ends), and the MIN_RUN-th equal one in a row
 * takes the ones before it back out for a run: what is written shrinks by
 * at most those and the header byte (TAKE_BACK). */
static uint8_t *enc_deltas(uint8_t *p, const int64_t *v, uint32_t m, size_t budget)
{
	uint8_t *most = p + budget, *lit = p++; /* the open section's header byte */
	const int64_t *q = v, *e = v + m, *from = v; /* from: its first value */
	uint64_t prev = 0, pd = 0; /* the value and the delta before q's */

	for (; q < e; q++) {
		uint64_t d = (uint64_t)*q - prev;
		prev = (uint64_t)*q;
		if (__builtin_expect(d == pd, 0) && run_ends_at(q, from, v, d)) {
			/* a run from value q - MIN_RUN + 1, as long as the delta stays */
			const int64_t *r = q - (MIN_RUN - 1);
			p -= (MIN_RUN - 1) * varint_len(zigzag(d));
			p = r > from ? lit_close(lit, (uint32_t)(r - from), p) : lit;
			if (p + 2 > most) /* the run takes 2 bytes or more */
				return NULL;
			uint64_t next = prev + d;
			for (q++; q < e && (uint64_t)*q == next; q++)
				next += d;
			p = varint_put(varint_put(p, (uint64_t)(q - r) << 1), zigzag(d));
			if (q == e)
				return p;
			lit = p++; /* the value at q starts the next section */
			from = q;
			d = (uint64_t)*q - (uint64_t)q[-1];
			prev = (uint64_t)*q;
		}
		pd = d;
		p = varint_put(p, zigzag(d));
		if (p > most + TAKE_BACK)
			return NULL;
	}
	return lit_close(lit, (uint32_t)(e - from), p);
}

/* The w low bits of x after the *bits bits of *acc, a full word stored at p
 * (x's bits that did not fit start the next); the new end. */
static inline uint8_t *put_bits(uint8_t *p, uint64_t *acc, int *bits, uint64_t x, int w)
{
	*acc |= x << *bits;
	if ((*bits += w) < 64)
		return p;
	le64_store(p, *acc);
	*bits -= 64;
	*acc = *bits > 0 ? x >> (w - *bits) : 0;
	return p + 8;
}

/* The m values v packed on w bits each from min, at p, two at a time when
 * they fit a word (half the work of the bits). */
static uint8_t *enc_packed(uint8_t *p, const int64_t *v, uint32_t m, uint64_t min, int w)
{
	uint64_t acc = 0;
	int bits = 0;
	size_t k = 0;

	p = varint_put(p, zigzag(min));
	*p++ = (uint8_t)w;
	for (; w > 0 && 2 * w <= 64 && k + 2 <= m; k += 2)
		p = put_bits(p, &acc, &bits,
			     ((uint64_t)v[k] - min) | ((uint64_t)v[k + 1] - min) << w, 2 * w);
	for (; w > 0 && k < m; k++)
		p = put_bits(p, &acc, &bits, (uint64_t)v[k] - min, w);
	for (; bits > 0; bits -= 8, acc >>= 8)
		*p++ = (uint8_t)acc;
	return p;
}

/* An integer payload of n rows (row r's value at v + r * stride bytes;
 * null NULL: no row is NULL) at the end of o, and z's nnull, min and max.
 * s: room for n values (it may be v when stride is 8), mask for n bits. */
static void enc_ints(struct sbuf *o, const int64_t *v, size_t stride, const uint8_t *null,
		     uint32_t n, int64_t *s, uint64_t *mask, struct cb_zone *z)
{
	uint32_t nnull = null != NULL ? null_mask(null, n, mask) : 0, m = n - nnull;
	int nullmode = nnull == 0 ? 0 : m == 0 ? 1 : 2;
	int64_t mm[2] = {0, 0}; /* min, max */

	if (nullmode == 2 && null_runs(mask, n, NULL, (n + 7) / 8) > (n + 7) / 8)
		nullmode = 3;
	if (m > 0)
		gather(v, stride, nnull > 0 ? mask : NULL, n, s, mm);
	z->nnull = nnull;
	z->min = mm[0];
	z->max = mm[1];
	/* the values: delta runs, or packed from min on w bits if that is smaller */
	int w = mm[0] == mm[1] ? 0 : 64 - __builtin_clzll((uint64_t)mm[1] - (uint64_t)mm[0]);
	size_t packed = varint_len(zigzag((uint64_t)mm[0])) + 1 + ((size_t)m * (size_t)w + 7) / 8;
	/* the most it takes: the mode, the NULLs (runs only when no longer than
	 * the bitmap, written by words), the deltas (13 bytes a value) or packed */
	uint8_t *p0 = (uint8_t *)sb_room(o, 8 + (n + 7) / 8 + 20 * (size_t)m + packed + 16), *p;
	if (p0 == NULL)
		return;
	p = p0 + 1;
	if (nullmode == 2)
		p += null_runs(mask, n, p, 0);
	for (uint32_t i = 0; nullmode == 3 && i < (n + 63) / 64; i++)
		le64_store(p + 8 * i, mask[i]);
	p += nullmode == 3 ? (n + 7) / 8 : 0;
	int valmode = 0;
	if (m > 0) {
		uint8_t *end = enc_deltas(p, s, m, packed);
		if (end == NULL || (size_t)(end - p) > packed) {
			end = enc_packed(p, s, m, (uint64_t)mm[0], w);
			valmode = 1;
		}
		p = end;
	}
	p0[0] = (uint8_t)(nullmode | valmode << 2);
	sb_commit(o, (size_t)(p - p0));
}

static uint64_t hash_text(const void *s, uint32_t len)
{
	const uint8_t *p = s;
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (uint32_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

uint64_t cb_text_bit(const void *s, size_t len)
{
	return (uint64_t)1 << (hash_text(s, (uint32_t)len) >> 58);
}

/* Row r's text ("" when the column has no bytes at all). */
static const uint8_t *text_of(const struct cb_col_in *c, uint32_t r)
{
	return (const uint8_t *)(c->text != NULL ? c->text + c->v[r] : "");
}

/* The hash of a text in the encoder's dictionary (not cb_text_bit's), 8
 * bytes a load: the last 8 (or 4 and 4) read as one, over what came before.
 * Up to 8 bytes, those are one word w and the hash a bijection of w. */
static inline uint64_t dict_hash(const uint8_t *s, uint32_t len)
{
	uint64_t h = len, w = 0;
	uint32_t a, b;

	for (uint32_t i = 0; i + 8 < len; i += 8)
		h = (h ^ le64_load(s + i)) * 0x9e3779b97f4a7c15ull;
	if (len >= 8) {
		w = le64_load(s + len - 8);
	} else if (len >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		w = a | (uint64_t)b << 32;
	} else if (len > 0) {
		w = s[0] | (uint64_t)s[len / 2] << 8 | (uint64_t)s[len - 1] << 16;
	}
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 32;
}

/* The dictionary's table (index + 1 of an entry, 0: none) at 4 times its
 * size, for the nd entries of hashes eh. */
static int dict_grow(uint32_t **slot, uint32_t *size, const uint64_t *eh, uint32_t nd)
{
	uint32_t sz = *size * 4, *t = calloc(sz, sizeof(*t));

	for (uint32_t i = 0; i < nd && t != NULL; i++) {
		uint32_t at = (uint32_t)eh[i] & (sz - 1);
		while (t[at] != 0)
			at = (at + 1) & (sz - 1);
		t[at] = i + 1;
	}
	if (t == NULL)
		return -1;
	free(*slot);
	*slot = t;
	*size = sz;
	return 0;
}

/* The dictionary and indices of a text column at the end of o, and z's
 * nnull and mask (idx: scratch of nrows entries, mask: of nrows bits). The
 * dictionary's table starts small and stays at most half full. */
static int enc_text(struct sbuf *o, const struct cb_col_in *c, uint32_t n, int64_t *idx,
		    uint64_t *mask, struct cb_zone *z)
{
	uint32_t size = 64, nd = 0, *slot = calloc(size, sizeof(*slot));
	uint32_t *first = malloc(n * sizeof(*first)); /* each entry's first row */
	uint64_t *eh = malloc(n * sizeof(*eh));       /* and its dict_hash */
	bool ok = slot != NULL && first != NULL && eh != NULL;
	/* a column of NULLs (most blocks of a text seldom set) has no texts to look at */
	uint32_t r = c->null != NULL && null_mask(c->null, n, mask) == n ? n : 0;
	struct cb_zone iz;

	for (; r < n && ok; r++) {
		if (c->null != NULL && c->null[r])
			continue;
		const uint8_t *s = text_of(c, r);
		uint32_t len = c->len[r], e;
		uint64_t h = dict_hash(s, len);
		uint32_t at = (uint32_t)h & (size - 1);
		/* texts of at most 8 bytes and of the same length differ in hash */
		while ((e = slot[at]) != 0 && (eh[e - 1] != h || c->len[first[e - 1]] != len ||
					       (len > 8 && memcmp(text_of(c, first[e - 1]), s, len))))
			at = (at + 1) & (size - 1);
		if (e == 0) {
			first[nd] = r;
			eh[nd] = h;
			slot[at] = e = ++nd;
			z->mask |= (uint64_t)1 << (hash_text(s, len) >> 58);
			ok = 2 * nd <= size || dict_grow(&slot, &size, eh, nd) == 0;
		}
		idx[r] = e - 1;
	}
	if (ok) {
		sb_varint(o, nd);
		for (uint32_t i = 0; i < nd; i++) {
			sb_varint(o, c->len[first[i]]);
			sb_add(o, text_of(c, first[i]), c->len[first[i]]);
		}
		enc_ints(o, idx, sizeof(*idx), c->null, n, idx, mask, &iz);
		z->nnull = iz.nnull;
	}
	free(slot);
	free(first);
	free(eh);
	return ok ? 0 : -1;
}

/* The SET_PROBES bit numbers of v in a set filter of 2^log bits: p + j * q
 * modulo 2^log, p and q the halves of splitmix64's finalizer of v (q odd).
 * The writer (put_set) and the readers (cb_set_may_hold) use only this. */
static inline void set_probes(int64_t v, unsigned log, uint64_t bit[SET_PROBES])
{
	uint64_t x = (uint64_t)v + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	uint64_t p = x & 0xffffffffu, q = (x >> 32) | 1, m = ((uint64_t)1 << log) - 1;
#pragma GCC unroll 4
	for (int j = 0; j < SET_PROBES; j++)
		bit[j] = (p + (uint64_t)j * q) & m;
}

bool cb_set_may_hold(const uint8_t *set, uint8_t log, int64_t v)
{
	uint64_t bit[SET_PROBES];

	set_probes(v, log, bit);
	for (int j = 0; j < SET_PROBES; j++)
		if ((set[bit[j] >> 3] & (1u << (bit[j] & 7))) == 0)
			return false;
	return true;
}

/* Appends column c's set filter (varint L, then its bytes) to zone: nv of
 * its nrows rows are not NULL. Built in 64-bit words (bit i: bit i % 64 of
 * word i / 64, so the filter's bytes are the words' little-endian ones). */
static void put_set(struct sbuf *zone, const struct cb_col_in *c, uint32_t nrows, uint32_t nv)
{
	uint64_t set[((size_t)1 << SET_MAX_LOG) / 64];
	size_t stride = c->stride != 0 ? c->stride : sizeof(*c->v), words;
	uint32_t log = SET_MIN_LOG;

	while (log < SET_MAX_LOG && ((uint64_t)1 << log) < 16 * (uint64_t)nv)
		log++;
	memset(set, 0, (words = ((size_t)1 << log) / 64) * sizeof(*set));
	for (uint32_t r = 0; r < nrows; r++) {
		uint64_t bit[SET_PROBES];
		if (c->null != NULL && c->null[r])
			continue;
		set_probes(*(const int64_t *)((const char *)c->v + r * stride), log, bit);
#pragma GCC unroll 4
		for (int j = 0; j < SET_PROBES; j++)
			set[bit[j] >> 6] |= (uint64_t)1 << (bit[j] & 63);
	}
	for (; log > SET_MIN_LOG; log--, words /= 2) { /* fold while the half stays 40% set */
		uint32_t ones = 0;
		for (size_t i = 0; i < words / 2; i++)
			ones += pop64(set[i] | set[i + words / 2]);
		if (10 * (uint64_t)ones > 4 * 64 * (uint64_t)(words / 2))
			break;
		for (size_t i = 0; i < words / 2; i++)
			set[i] |= set[i + words / 2];
	}
	sb_varint(zone, log);
	uint8_t *p = (uint8_t *)sb_room(zone, words * 8);
	for (size_t i = 0; i < words && p != NULL; i++)
		le64_store(p + 8 * i, set[i]);
	if (p != NULL)
		sb_commit(zone, words * 8);
}

/* Appends the zone map of the block's columns (zs: their zones) to zone. */
static void put_zone(struct sbuf *zone, const struct cb_col_in *cols, uint32_t ncols,
		     uint32_t nrows, const struct cb_zone *zs)
{
	size_t zat = zone->len;
	uint8_t sum[4];

	sb_varint(zone, nrows);
	sb_varint(zone, ncols);
	for (uint32_t c = 0; c < ncols; c++) {
		sb_varint(zone, zs[c].nnull);
		if (zs[c].nnull < nrows && cols[c].type == CB_INT) {
			sb_varint(zone, zigzag((uint64_t)zs[c].min));
			sb_varint(zone, zigzag((uint64_t)zs[c].max));
			if (cols[c].set)
				put_set(zone, &cols[c], nrows, nrows - zs[c].nnull);
			else
				sb_varint(zone, 0);
		} else if (zs[c].nnull < nrows) {
			sb_varint(zone, zs[c].mask);
		}
	}
	if (zone->oom)
		return;
	uint32_t h = cb_sum((const uint8_t *)zone->buf + zat, zone->len - zat);
	for (int i = 0; i < 4; i++)
		sum[i] = (uint8_t)(h >> (8 * i));
	sb_add(zone, sum, 4);
}

int cb_encode(const struct cb_col_in *cols, uint32_t ncols, uint32_t nrows, struct sbuf *blob,
	      struct sbuf *zone)
{
	struct cb_zone zs[CB_MAX_COLS];
	size_t sizes[CB_MAX_COLS];
	/* the header: 3 bytes, 2 varints, per column a byte, a varint, 4 bytes */
	uint8_t head[3 + 2 * 10 + CB_MAX_COLS * 15], *h = head + 3;
	size_t at = blob->len, pay = at + sizeof(head);

	head[0] = 'W';
	head[1] = 'B';
	head[2] = CB_VERSION;

	if (ncols > CB_MAX_COLS || nrows == 0 || nrows > CB_MAX_ROWS ||
	    sb_room(blob, sizeof(head)) == NULL)
		return -1;
	/* the payloads first, after room for the header, which then takes its
	 * exact place (the payloads moved down to it) */
	sb_commit(blob, sizeof(head));
	int64_t *scratch = malloc((size_t)nrows * sizeof(*scratch) + ((size_t)nrows / 64 + 1) * 8);
	bool failed = scratch == NULL;
	for (uint32_t c = 0; c < ncols && !failed; c++) {
		const struct cb_col_in *ci = &cols[c];
		uint64_t *mask = (uint64_t *)(scratch + nrows);
		size_t before = blob->len;
		memset(&zs[c], 0, sizeof(zs[c]));
		if (ci->type == CB_INT)
			enc_ints(blob, ci->v, ci->stride != 0 ? ci->stride : sizeof(*ci->v), ci->null,
				 nrows, scratch, mask, &zs[c]);
		else
			failed = enc_text(blob, ci, nrows, scratch, mask, &zs[c]) < 0;
		sizes[c] = blob->len - before;
	}
	free(scratch);
	if (failed || blob->oom) {
		sb_replace(blob, at, blob->len - at, NULL, 0);
		return -1;
	}
	h = varint_put(varint_put(h, nrows), ncols);
	for (uint32_t c = 0; c < ncols; c++) {
		uint32_t sum = cb_sum((const uint8_t *)blob->buf + pay, sizes[c]);
		*h++ = cols[c].type;
		h = varint_put(h, sizes[c]);
		for (int i = 0; i < 4; i++)
			*h++ = (uint8_t)(sum >> (8 * i));
		pay += sizes[c];
	}
	sb_replace(blob, at, sizeof(head), head, (size_t)(h - head));
	if (zone != NULL)
		put_zone(zone, cols, ncols, nrows, zs);
	return blob->oom || (zone != NULL && zone->oom) ? -1 : 0;
}

int cb_zone_decode(const void *data, size_t len, uint32_t ncols, const uint8_t *types,
		   uint32_t *nrows, struct cb_zone *zones, char *err, size_t errlen)
{
	const uint8_t *p = data, *end = data != NULL && len >= 4 ? p + len - 4 : p;
	uint64_t n, k, x, y;

	if (data == NULL || len < 4 ||
	    cb_sum(p, len - 4) != ((uint32_t)end[0] | (uint32_t)end[1] << 8 |
				   (uint32_t)end[2] << 16 | (uint32_t)end[3] << 24)) {
		snprintf(err, errlen, "zone map: checksum mismatch");
		return -1;
	}
	if (!varint_get(&p, end, &n) || n == 0 || n > CB_MAX_ROWS ||
	    !varint_get(&p, end, &k) || k != ncols) {
		snprintf(err, errlen, "zone map: not one of %u columns", ncols);
		return -1;
	}
	*nrows = (uint32_t)n;
	for (uint32_t c = 0; c < ncols; c++) {
		struct cb_zone *z = &zones[c];
		memset(z, 0, sizeof(*z));
		if (!varint_get(&p, end, &x) || x > n)
			goto bad;
		z->nnull = (uint32_t)x;
		if (x == n)
			continue;
		if (types[c] == CB_INT) {
			if (!varint_get(&p, end, &x) || !varint_get(&p, end, &y))
				goto bad;
			z->min = (int64_t)unzigzag(x);
			z->max = (int64_t)unzigzag(y);
			if (z->min > z->max || !varint_get(&p, end, &x) ||
			    (x != 0 && (x < SET_MIN_LOG || x > SET_MAX_LOG)))
				goto bad;
			z->set_log = (uint8_t)x;
			if (x != 0) {
				size_t bytes = ((size_t)1 << x) / 8;
				if ((size_t)(end - p) < bytes)
					goto bad;
				z->set_at = (uint32_t)(p - (const uint8_t *)data);
				p += bytes;
			}
		} else if (!varint_get(&p, end, &z->mask) || z->mask == 0) {
			goto bad;
		}
	}
	if (p == end)
		return 0;
bad:
	snprintf(err, errlen, "zone map: corrupt or truncated");
	return -1;
}

/* Capacity for n rows in column c's arrays. */
static int col_room(struct cb_col *c, uint32_t n)
{
	if (c->cap >= n)
		return 0;
	int64_t *v = realloc(c->v, (size_t)n * sizeof(*v));
	if (v != NULL)
		c->v = v;
	uint8_t *nl = realloc(c->null, n);
	if (nl != NULL)
		c->null = nl;
	if (v == NULL || nl == NULL)
		return -1;
	c->cap = n;
	return 0;
}

int cb_open(struct cb_block *b, const void *data, size_t len, uint32_t ncols,
	    const uint8_t *types, char *err, size_t errlen)
{
	const uint8_t *p = data, *end = data != NULL ? p + len : p;
	uint64_t n, k, size;
	size_t off = 0;

	b->data = data;
	b->len = len;
	b->nrows = b->ncols = 0;
	if (data == NULL || len < 3 || p[0] != 'W' || p[1] != 'B') {
		snprintf(err, errlen, "not a column block");
		return -1;
	}
	if (p[2] != CB_VERSION) {
		snprintf(err, errlen, "column block of format %u (this reader knows %u)", p[2],
			 CB_VERSION);
		return -1;
	}
	p += 3;
	if (!varint_get(&p, end, &n) || n == 0 || n > CB_MAX_ROWS || !varint_get(&p, end, &k)) {
		snprintf(err, errlen, "truncated header");
		return -1;
	}
	if (k != ncols) {
		snprintf(err, errlen, "%u columns, not %u", (unsigned)k, ncols);
		return -1;
	}
	for (uint32_t c = 0; c < ncols; c++) {
		struct cb_col *cl = &b->cols[c];
		if (p >= end || !(cl->type = *p++, varint_get(&p, end, &size)) || end - p < 4) {
			snprintf(err, errlen, "truncated header");
			return -1;
		}
		cl->sum = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			  (uint32_t)p[3] << 24;
		p += 4;
		if (cl->type != types[c]) {
			snprintf(err, errlen, "column %u is of type %u, not %u", c, cl->type, types[c]);
			return -1;
		}
		if (size > len) {
			snprintf(err, errlen, "column %u: %llu bytes in a blob of %zu", c,
				 (unsigned long long)size, len);
			return -1;
		}
		cl->off = (uint32_t)off;
		cl->size = (uint32_t)size;
		cl->decoded = 0;
		off += size;
	}
	if (off != (size_t)(end - p)) {
		snprintf(err, errlen, "%zu bytes of columns in %zu bytes of payload", off,
			 (size_t)(end - p));
		return -1;
	}
	for (uint32_t c = 0; c < ncols; c++)
		b->cols[c].off += (uint32_t)(p - (const uint8_t *)data);
	b->nrows = (uint32_t)n;
	b->ncols = ncols;
	return 0;
}

/* A varint at *p: one byte without a call when it is one (most deltas). */
static inline bool get_varint_fast(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	if (*p < end && (**p & 0x80) == 0) {
		*out = *(*p)++;
		return true;
	}
	return varint_get(p, end, out);
}

/* The m values of a delta-run section [*p, end) into c->v at the rows not
 * NULL (dense: no row is NULL, value k is row k). */
static const char *dec_deltas(struct cb_col *c, const uint8_t **p, const uint8_t *end,
			      uint32_t n, uint32_t m, bool dense)
{
	uint64_t prev = 0, h, z = 0;
	uint32_t k = 0, r = 0;
	int64_t *v = c->v;

	while (k < m) {
		if (!get_varint_fast(p, end, &h))
			return "truncated run";
		uint64_t cnt = h >> 1;
		if (cnt == 0 || cnt > m - k)
			return "run past the block's values";
		if ((h & 1) == 0) {
			if (!get_varint_fast(p, end, &z))
				return "truncated run";
			uint64_t d = unzigzag(z);
			if (dense) {
				for (uint64_t i = 0; i < cnt; i++) {
					prev += d;
					v[k + i] = (int64_t)prev;
				}
				k += (uint32_t)cnt;
				continue;
			}
			for (uint64_t i = 0; i < cnt; i++, k++) {
				prev += d;
				while (r < n && c->null[r])
					r++;
				v[r++] = (int64_t)prev;
			}
			continue;
		}
		for (uint64_t i = 0; i < cnt; i++, k++) {
			if (!get_varint_fast(p, end, &z))
				return "truncated run";
			prev += unzigzag(z);
			if (dense) {
				v[k] = (int64_t)prev;
				continue;
			}
			while (r < n && c->null[r])
				r++;
			v[r++] = (int64_t)prev;
		}
	}
	return NULL;
}

/* The m packed values [*p, end) into c->v at the rows not NULL (dense: no
 * row is NULL). */
static const char *dec_packed(struct cb_col *c, const uint8_t **p, const uint8_t *end,
			      uint32_t n, uint32_t m, bool dense)
{
	uint64_t z;

	if (!varint_get(p, end, &z) || *p >= end)
		return "truncated packed values";
	uint64_t min = unzigzag(z);
	int w = *(*p)++;
	if (w > 64)
		return "bad bit width";
	size_t nbytes = ((size_t)m * (size_t)w + 7) / 8;
	if ((size_t)(end - *p) < nbytes)
		return "truncated packed values";
	const uint8_t *b = *p;
	uint64_t off = 0;
	uint32_t r = 0;
	uint64_t mask = w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
	for (uint32_t k = 0; k < m; k++) {
		uint64_t x = 0;
		if (w <= 56 && (off >> 3) + 8 <= nbytes) {
			/* the value's bits within one unaligned 8-byte load */
			x = (le64_load(b + (off >> 3)) >> (off & 7)) & mask;
			off += (uint64_t)w;
		} else {
			for (int got = 0; got < w;) {
				int sh = (int)(off & 7), take = 8 - sh < w - got ? 8 - sh : w - got;
				x |= (uint64_t)((b[off >> 3] >> sh) & ((1u << take) - 1)) << got;
				got += take;
				off += (uint64_t)take;
			}
		}
		if (dense) {
			c->v[k] = (int64_t)(min + x);
			continue;
		}
		while (r < n && c->null[r])
			r++;
		c->v[r++] = (int64_t)(min + x);
	}
	*p += nbytes;
	return NULL;
}

/* An integer payload [*p, end) into c->v, c->null (n rows). */
static const char *dec_ints(struct cb_col *c, const uint8_t **p, const uint8_t *end, uint32_t n)
{
	uint32_t m = 0;
	uint64_t runs, len;
	const char *why;

	if (*p >= end)
		return "truncated mode";
	int mode = *(*p)++;
	if (mode > 7)
		return "unknown mode";
	if ((mode & 3) != 0) /* the NULL rows' values: 0 */
		memset(c->v, 0, (size_t)n * sizeof(*c->v));
	switch (mode & 3) {
	case 0:
		memset(c->null, 0, n);
		m = n;
		break;
	case 1:
		memset(c->null, 1, n);
		break;
	case 2: {
		uint32_t r = 0;
		if (!varint_get(p, end, &runs) || runs > 2 * (uint64_t)n + 1)
			return "bad NULL runs";
		for (uint64_t i = 0; i < runs; i++) {
			if (!varint_get(p, end, &len) || len > n - r)
				return "NULL runs past the block's rows";
			memset(c->null + r, (int)(i & 1), len);
			if ((i & 1) == 0)
				m += (uint32_t)len;
			r += (uint32_t)len;
		}
		if (r != n)
			return "NULL runs short of the block's rows";
		break;
	}
	default:
		if ((size_t)(end - *p) < (n + 7) / 8)
			return "truncated NULL bitmap";
		for (uint32_t r = 0; r < n; r++) {
			c->null[r] = (uint8_t)(((*p)[r / 8] >> (r % 8)) & 1);
			m += !c->null[r];
		}
		*p += (n + 7) / 8;
		if (n % 8 != 0 && ((*p)[-1] >> (n % 8)) != 0)
			return "bits past the block's rows";
	}
	if (m == 0 && (mode & 3) != 1)
		return "no values where some were announced";
	if (m > 0)
		why = (mode >> 2) == 0 ? dec_deltas(c, p, end, n, m, m == n)
				       : dec_packed(c, p, end, n, m, m == n);
	else
		why = (mode >> 2) == 0 ? NULL : "values in a column of NULLs";
	if (why != NULL)
		return why;
	return *p == end ? NULL : "bytes after the values";
}

int cb_decode_col(struct cb_block *b, uint32_t ci, char *err, size_t errlen)
{
	struct cb_col *c = &b->cols[ci];
	const uint8_t *p, *end;
	const char *why = NULL;
	uint64_t nd, l;

	if (ci >= b->ncols) {
		snprintf(err, errlen, "no column %u", ci);
		return -1;
	}
	if (c->decoded)
		return 0;
	p = b->data + c->off;
	end = p + c->size;
	if (cb_sum(p, c->size) != c->sum) {
		snprintf(err, errlen, "column %u: checksum mismatch", ci);
		return -1;
	}
	if (col_room(c, b->nrows) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (c->type == CB_TEXT) {
		if (!varint_get(&p, end, &nd) || nd > b->nrows) {
			why = "bad dictionary size";
			goto bad;
		}
		if (c->dcap < nd) {
			const uint8_t **dict = realloc(c->dict, nd * sizeof(*dict));
			if (dict != NULL)
				c->dict = dict;
			uint32_t *dlen = realloc(c->dlen, nd * sizeof(*dlen));
			if (dlen != NULL)
				c->dlen = dlen;
			if (dict == NULL || dlen == NULL) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			c->dcap = (uint32_t)nd;
		}
		for (uint32_t i = 0; i < nd; i++) {
			if (!varint_get(&p, end, &l) || l > (uint64_t)(end - p)) {
				why = "truncated dictionary";
				goto bad;
			}
			c->dict[i] = p;
			c->dlen[i] = (uint32_t)l;
			p += l;
		}
		c->ndict = (uint32_t)nd;
	}
	why = dec_ints(c, &p, end, b->nrows);
	if (why != NULL)
		goto bad;
	if (c->type == CB_TEXT)
		for (uint32_t r = 0; r < b->nrows; r++)
			if (!c->null[r] && (c->v[r] < 0 || (uint64_t)c->v[r] >= c->ndict)) {
				why = "text index past the dictionary";
				goto bad;
			}
	c->decoded = 1;
	return 0;
bad:
	snprintf(err, errlen, "column %u: %s", ci, why);
	return -1;
}

void cb_free(struct cb_block *b)
{
	for (uint32_t c = 0; c < CB_MAX_COLS; c++) {
		free(b->cols[c].v);
		free(b->cols[c].null);
		free(b->cols[c].dict);
		free(b->cols[c].dlen);
		b->cols[c].v = NULL;
		b->cols[c].null = NULL;
		b->cols[c].dict = NULL;
		b->cols[c].dlen = NULL;
		b->cols[c].cap = b->cols[c].dcap = 0;
	}
}
