/*
 * sbuf.h - a growable byte buffer, the byte encodings of wsr's binary
 * formats (varints, zigzag, little-endian words: the column blocks), and
 * the JSON and XML text writers of wsr (the analyzer's reports,
 * wsr-run.json and the viewer all escape through here).
 *
 * Invariants:
 *   - buf is NUL-terminated whenever len > 0 and oom is 0.
 *   - Once an allocation fails, oom stays set and every later call is a
 *     no-op; the caller checks oom once, at the end.
 *   - json_escape() is the one escaping rule (sb_json_str, json_fputs):
 *     '"', '\\', \n, \r, \t by name; other control characters and '<', '>',
 *     '&' as \u00XX, so the output can also be inlined in a <script> element.
 *   - xml_fputs() is the one XML/HTML text rule: '<', '>', '&', '"' as
 *     entities, every other byte as is (element content or a "-quoted
 *     attribute value).
 * Concurrency: a buffer belongs to one thread.
 */
#ifndef WSR_ANALYZER_SBUF_H
#define WSR_ANALYZER_SBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct sbuf {
	char *buf;
	size_t len;
	size_t cap;
	int oom;
};

void sb_init(struct sbuf *sb);
void sb_free(struct sbuf *sb);
/* Hands the bytes to the caller (who frees them) and resets the buffer. */
char *sb_steal(struct sbuf *sb, size_t *len);
void sb_add(struct sbuf *sb, const void *data, size_t n);
/* Room for n more bytes at the end: where to write them (NULL: out of
 * memory, oom set), then sb_commit() of the k <= n bytes written. */
char *sb_room(struct sbuf *sb, size_t n);
void sb_commit(struct sbuf *sb, size_t n);
/* Replaces the n bytes at offset at (at + n <= len) by the k bytes of data,
 * what follows them moved up or down. */
void sb_replace(struct sbuf *sb, size_t at, size_t n, const void *data, size_t k);
void sb_puts(struct sbuf *sb, const char *s);
void sb_putc(struct sbuf *sb, char c);
void sb_printf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* x as a varint (see varint_put). */
void sb_varint(struct sbuf *sb, uint64_t x);
void sb_i64(struct sbuf *sb, int64_t v);
/* A JSON string literal (quoted); NULL writes null. */
void sb_json_str(struct sbuf *sb, const char *s);
/* The escape of C in a JSON string (into buf, or a constant), or NULL: C as is. */
const char *json_escape(unsigned char c, char buf[8]);
/* A JSON string literal (quoted) on F; NULL writes null. */
void json_fputs(FILE *f, const char *s);
/* S as XML or HTML text on F (see the invariants). */
void xml_fputs(FILE *f, const char *s);
/* Drops a trailing ',' if there is one (after writing list items). */
void sb_uncomma(struct sbuf *sb);

/* A varint: x 7 bits a byte, the low ones first, the top bit set on every
 * byte but the last; at p, and the byte after it (10 bytes at most). */
static inline uint8_t *varint_put(uint8_t *p, uint64_t x)
{
	while (x >= 0x80) {
		*p++ = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	*p = (uint8_t)x;
	return p + 1;
}

/* The bytes of x as a varint, 1 + (its bits - 1) / 7, without a loop. */
static inline size_t varint_len(uint64_t x)
{
	return ((size_t)(63 - __builtin_clzll(x | 1)) * 9 + 73) / 64;
}

/* The varint at *p into *out, *p past it; false if it does not end before
 * end or is longer than 64 bits. */
static inline bool varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return false;
		uint8_t c = *(*p)++;
		if (shift == 63 && c > 1)
			return false;
		x |= (uint64_t)(c & 0x7f) << shift;
		if ((c & 0x80) == 0) {
			*out = x;
			return true;
		}
	}
	return false;
}

/* A two's complement d as a small varint whatever its sign (0, -1, 1, -2,
 * ... as 0, 1, 2, 3, ...), and back. */
static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static inline uint64_t le64_load(const void *b)
{
	uint64_t x;

	memcpy(&x, b, sizeof(x));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

static inline void le64_store(void *b, uint64_t x)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	memcpy(b, &x, sizeof(x));
}

#endif /* WSR_ANALYZER_SBUF_H */
