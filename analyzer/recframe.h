/*
 * recframe.h - record framing (recframe.c): how a struct wsr_rec and its
 * extra bytes are laid out in a byte stream, the one definition used by the
 * decoder (decode.c), the decoder child's shared segments (dchild.c) and
 * their reader.
 *
 * Invariants:
 *   - A framed record is the struct followed by extra_len bytes of extra
 *     and padding; `size` is the total, a multiple of 8, so records packed
 *     one after the other in an 8-aligned buffer stay aligned.
 *   - extra, when extra_len > 0, ends with a NUL (rec_next() refuses a
 *     record whose extra does not), so readers may use it as a C string.
 * Concurrency: plain functions on the caller's buffers.
 */
#ifndef WSR_ANALYZER_RECFRAME_H
#define WSR_ANALYZER_RECFRAME_H

#include <stddef.h>

#include "rec.h"

/* The largest framed record. */
#define REC_FRAME_MAX (sizeof(struct wsr_rec) + WSR_REC_MAX_EXTRA + 8)

/* Sets r->extra_len and r->size for extra_len bytes of extra. */
void rec_frame(struct wsr_rec *r, size_t extra_len);
/* Copies framed record r and its extra to buf, which has r->size bytes of
 * room; returns r->size. */
size_t rec_put(char *buf, const struct wsr_rec *r, const char *extra);
/* The record at the start of buf[0..len): 1 with *r and *extra (NULL when
 * none) set, 0 when buf does not hold all of it yet, -1 when it is not a
 * framed record. */
int rec_next(const char *buf, size_t len, const struct wsr_rec **r, const char **extra);

#endif /* WSR_ANALYZER_RECFRAME_H */
