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

/* A 32-bit checksum of n bytes, 8 at a time (little-endian words). */
static uint32_t cb_sum(const uint8_t *p, size_t n)
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

/* The delta runs of the m values v (their deltas into d, m entries), at p:
 * at most 2 varints of a run's header and value per value. */
static uint8_t *enc_deltas(uint8_t *p, const uint64_t *v, uint32_t m, uint64_t *d)
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
			p = varint_put(p, (uint64_t)(k - lit) << 1 | 1);
			for (uint32_t j = lit; j < k; j++)
				p = varint_put(p, zigzag(d[j]));
		}
		p = varint_put(p, (uint64_t)r << 1);
		p = varint_put(p, zigzag(d[k]));
		k += r;
		lit = k;
	}
	if (m > lit) {
		p = varint_put(p, (uint64_t)(m - lit) << 1 | 1);
		for (uint32_t j = lit; j < m; j++)
			p = varint_put(p, zigzag(d[j]));
	}
	return p;
}

/* The m values v packed on w bits each from min, at p. */
static uint8_t *enc_packed(uint8_t *p, const uint64_t *v, uint32_t m, uint64_t min, int w)
{
	uint64_t acc = 0;
	int bits = 0;

	p = varint_put(p, zigzag(min));
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
static void enc_ints(struct sbuf *o, const int64_t *v, const uint8_t *null, uint32_t n,
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
			rle += varint_len(len);
			runs++;
			len = 0;
			in_null = isnull;
		}
		len++;
		if (!isnull)
			vals[m++] = (uint64_t)v[r];
	}
	rle += varint_len(len) + varint_len(runs + 1);
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
	size_t packed = varint_len(zigzag(min)) + 1 + ((size_t)m * (size_t)w + 7) / 8;
	/* the most it takes: the mode, the NULLs (a varint per run, or the
	 * bitmap), then the deltas (two varints per value at most) or packed */
	size_t most = 1 + 10 * ((size_t)runs + 2) + (n + 7) / 8 + 20 * (size_t)m + packed + 16;
	uint8_t *p0 = (uint8_t *)sb_room(o, most), *p = p0;
	if (p == NULL)
		return;
	*p++ = 0;
	if (nullmode == 2) {
		p = varint_put(p, runs + 1);
		in_null = false;
		len = 0;
		for (uint32_t r = 0; r < n; r++) {
			bool isnull = null[r] != 0;
			if (isnull != in_null) {
				p = varint_put(p, len);
				len = 0;
				in_null = isnull;
			}
			len++;
		}
		p = varint_put(p, len);
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
		p = enc_deltas(p, vals, m, d);
		if ((size_t)(p - before) > packed) {
			p = enc_packed(before, vals, m, min, w);
			valmode = 1;
		}
	}
	p0[0] = (uint8_t)(nullmode | valmode << 2);
	sb_commit(o, (size_t)(p - p0));
}

struct dict {
	uint32_t *slot; /* index + 1 of the entry, 0: empty */
	uint32_t mask;
	uint32_t n;
	uint32_t *first; /* the first row of each entry */
};

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
static const char *text_of(const struct cb_col_in *c, uint32_t r)
{
	return c->text != NULL ? c->text + c->v[r] : "";
}

/* The dictionary and indices of a text column (idx: nrows entries). */
static int enc_text(struct sbuf *o, const struct cb_col_in *c, uint32_t n, int64_t *idx,
		    uint64_t *d, struct cb_zone *z)
{
	struct dict dc = {0};
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
		const char *s = text_of(c, r);
		uint32_t len = c->len[r];
		uint64_t h = hash_text(s, len);
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
			if (c->len[f] == len && memcmp(text_of(c, f), s, len) == 0) {
				idx[r] = e - 1;
				break;
			}
			at = (at + 1) & dc.mask;
		}
	}
	sb_varint(o, dc.n);
	for (uint32_t i = 0; i < dc.n; i++) {
		uint32_t f = dc.first[i];
		sb_varint(o, c->len[f]);
		sb_add(o, text_of(c, f), c->len[f]);
	}
	enc_ints(o, idx, c->null, n, d);
	free(dc.slot);
	free(dc.first);
	return 0;
}

/* The SET_PROBES bit numbers of v in a set filter of 2^log bits: p + j * q
 * modulo 2^log, p and q the halves of splitmix64's finalizer of v (q odd).
 * The writer (put_set) and the readers (cb_set_may_hold) use only this. */
static void set_probes(int64_t v, unsigned log, uint64_t bit[SET_PROBES])
{
	uint64_t x = (uint64_t)v + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	uint64_t p = x & 0xffffffffu, q = (x >> 32) | 1, m = ((uint64_t)1 << log) - 1;
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

static uint32_t popcount_bytes(const uint8_t *b, size_t n)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += (uint32_t)__builtin_popcount(b[i]);
	return k;
}

/* Appends column c's set filter (varint L, then its bytes) to zone. */
static void put_set(struct sbuf *zone, const struct cb_col_in *c, uint32_t nrows)
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
		set_probes(c->v[r], log, bit);
		for (int j = 0; j < SET_PROBES; j++)
			set[bit[j] >> 3] |= (uint8_t)(1u << (bit[j] & 7));
	}
	/* fold while the half stays at most 40% set */
	while (log > SET_MIN_LOG) {
		size_t half = bytes / 2;
		uint8_t folded[((size_t)1 << SET_MAX_LOG) / 16];
		for (size_t i = 0; i < half; i++)
			folded[i] = set[i] | set[i + half];
		if (10 * (uint64_t)popcount_bytes(folded, half) > 4 * 8 * (uint64_t)half)
			break;
		memcpy(set, folded, half);
		bytes = half;
		log--;
	}
	sb_varint(zone, log);
	sb_add(zone, set, bytes);
}

int cb_encode(const struct cb_col_in *cols, uint32_t ncols, uint32_t nrows, struct sbuf *blob,
	      struct sbuf *zone)
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
			enc_ints(&pay, ci->v, ci->null, nrows, d);
		else if (enc_text(&pay, ci, nrows, idx, d, z) < 0)
			goto out;
		sizes[c] = pay.len - before;
	}
	sb_add(blob, "WB", 2);
	sb_putc(blob, CB_VERSION);
	sb_varint(blob, nrows);
	sb_varint(blob, ncols);
	size_t at = 0;
	for (uint32_t c = 0; c < ncols; c++) {
		uint32_t sum = cb_sum((const uint8_t *)pay.buf + at, sizes[c]);
		uint8_t sb[4] = {(uint8_t)sum, (uint8_t)(sum >> 8), (uint8_t)(sum >> 16),
				 (uint8_t)(sum >> 24)};
		sb_putc(blob, (char)cols[c].type);
		sb_varint(blob, sizes[c]);
		sb_add(blob, sb, 4);
		at += sizes[c];
	}
	sb_add(blob, pay.buf, pay.len);
	if (zone != NULL) {
		size_t zat = zone->len;
		sb_varint(zone, nrows);
		sb_varint(zone, ncols);
		for (uint32_t c = 0; c < ncols; c++) {
			sb_varint(zone, zs[c].nnull);
			if (zs[c].nnull == nrows)
				continue;
			if (cols[c].type == CB_INT) {
				sb_varint(zone, zigzag((uint64_t)zs[c].min));
				sb_varint(zone, zigzag((uint64_t)zs[c].max));
				if (cols[c].set)
					put_set(zone, &cols[c], nrows);
				else
					sb_varint(zone, 0);
			} else {
				sb_varint(zone, zs[c].mask);
			}
		}
		if (!zone->oom) {
			uint32_t sum = cb_sum((const uint8_t *)zone->buf + zat, zone->len - zat);
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
