/*
 * sbuf.h - a growable byte buffer, and the JSON and XML text writers of wsr
 * (the analyzer's reports, wsr-run.json and the viewer all escape through
 * here).
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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
void sb_puts(struct sbuf *sb, const char *s);
void sb_putc(struct sbuf *sb, char c);
void sb_printf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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

#endif /* WSR_ANALYZER_SBUF_H */
