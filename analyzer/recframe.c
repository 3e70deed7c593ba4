/*
 * recframe.c - record framing (recframe.h).
 *
 * Invariants: see recframe.h; rec_next() checks every size against the
 *   record's own fields before it trusts them.
 * Concurrency: none (pure functions).
 */
#include "config.h"

#include <string.h>

#include "recframe.h"

void rec_frame(struct wsr_rec *r, size_t extra_len)
{
	r->extra_len = (uint32_t)extra_len;
	r->size = (uint32_t)((sizeof(*r) + extra_len + 7) & ~(size_t)7);
}

size_t rec_put(char *buf, const struct wsr_rec *r, const char *extra)
{
	memcpy(buf, r, sizeof(*r));
	if (r->extra_len > 0)
		memcpy(buf + sizeof(*r), extra, r->extra_len);
	return r->size;
}

int rec_next(const char *buf, size_t len, const struct wsr_rec **rp, const char **extra)
{
	const struct wsr_rec *r = (const struct wsr_rec *)buf;

	if (len < sizeof(*r))
		return 0;
	if (r->size < sizeof(*r) || r->size > REC_FRAME_MAX || r->size % 8 != 0 ||
	    r->extra_len > r->size - sizeof(*r))
		return -1;
	if (len < r->size)
		return 0;
	*extra = r->extra_len > 0 ? buf + sizeof(*r) : NULL;
	if (*extra != NULL && (*extra)[r->extra_len - 1] != '\0')
		return -1;
	*rp = r;
	return 1;
}
