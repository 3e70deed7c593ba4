/*
 * assets.h - the viewer's static files, embedded at build time by
 * embed_assets.py (index.html, app.js, style.css), so `wsr view` needs no
 * file beside the binary and serves nothing from the disk.
 *
 * Invariants:
 *   - viewer_assets ends with an entry whose path is NULL.
 *   - data is NUL-terminated; len excludes the NUL.
 * Concurrency: constant data.
 */
#ifndef WSR_VIEWER_ASSETS_H
#define WSR_VIEWER_ASSETS_H

#include <stddef.h>

struct viewer_asset {
	const char *path; /* URL path, e.g. "/app.js" */
	const char *mime;
	const unsigned char *data;
	size_t len;
};

extern const struct viewer_asset viewer_assets[];

/* The asset served at path, or NULL. */
const struct viewer_asset *assets_find(const char *path);

#endif /* WSR_VIEWER_ASSETS_H */
