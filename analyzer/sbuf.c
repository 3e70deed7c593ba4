/*
 * sbuf.c - growable byte buffer (varints appended by sb_varint: the column
 * blocks), the one JSON string escaper (json_escape), used by every JSON
 * writer of wsr: reports, diff, wsr-run.json, the viewer, and the one
 * XML/HTML text escaper (xml_fputs: the JUnit report, the scaling page).
 *
 * Invariants:
 *   - cap doubles on growth, so n appends cost O(total length).
 *   - After an allocation failure the buffer keeps what it had and oom = 1.
 * Concurrency: none (a buffer belongs to one thread).
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"

void sb_init(struct sbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void sb_free(struct sbuf *sb)
{
	free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}

char *sb_steal(struct sbuf *sb, size_t *len)
{
	char *b = sb->buf;

	if (len != NULL)
		*len = sb->len;
	memset(sb, 0, sizeof(*sb));
	return b;
}

/* Makes room for n more bytes plus the terminating NUL; returns 0 or -1. */
static int reserve(struct sbuf *sb, size_t n)
{
	size_t need = sb->len + n + 1;
	size_t cap = sb->cap != 0 ? sb->cap : 256;
	char *b;

	if (sb->oom)
		return -1;
	if (need <= sb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	b = realloc(sb->buf, cap);
	if (b == NULL) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = b;
	sb->cap = cap;
	return 0;
}

char *sb_room(struct sbuf *sb, size_t n)
{
	return reserve(sb, n) < 0 ? NULL : sb->buf + sb->len;
}

void sb_commit(struct sbuf *sb, size_t n)
{
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_replace(struct sbuf *sb, size_t at, size_t n, const void *data, size_t k)
{
	if ((n == 0 && k == 0) || (k > n && reserve(sb, k - n) < 0) || sb->oom)
		return;
	memmove(sb->buf + at + k, sb->buf + at + n, sb->len - at - n);
	if (k > 0)
		memcpy(sb->buf + at, data, k);
	sb->len = sb->len - n + k;
	sb->buf[sb->len] = '\0';
}

void sb_add(struct sbuf *sb, const void *data, size_t n)
{
	if (reserve(sb, n) < 0)
		return;
	if (n > 0) /* data may be NULL then (an empty sbuf's buf) */
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct sbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_putc(struct sbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(sb, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void sb_varint(struct sbuf *sb, uint64_t x)
{
	uint8_t *p = (uint8_t *)sb_room(sb, 10);

	if (p != NULL)
		sb_commit(sb, (size_t)(varint_put(p, x) - p));
}

void sb_i64(struct sbuf *sb, int64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);

	sb_add(sb, tmp, (size_t)n);
}

const char *json_escape(unsigned char c, char buf[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		if (c >= 0x20 && c != '<' && c != '>' && c != '&')
			return NULL;
		snprintf(buf, 8, "\\u%04x", c);
		return buf;
	}
}

void sb_json_str(struct sbuf *sb, const char *s)
{
	char esc[8];

	if (s == NULL) {
		sb_puts(sb, "null");
		return;
	}
	sb_putc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *e = json_escape(*p, esc);
		if (e != NULL)
			sb_puts(sb, e);
		else
			sb_putc(sb, (char)*p);
	}
	sb_putc(sb, '"');
}

void json_fputs(FILE *f, const char *s)
{
	char esc[8];

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *e = json_escape(*p, esc);
		if (e != NULL)
			fputs(e, f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void xml_fputs(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

void sb_uncomma(struct sbuf *sb)
{
	if (!sb->oom && sb->len > 0 && sb->buf[sb->len - 1] == ',')
		sb->buf[--sb->len] = '\0';
}
