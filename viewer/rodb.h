/*
 * rodb.h - opening a wsr database for the viewer: read-only, defensive, and
 * with an authorizer that lets through reads and pure functions only.
 *
 * Invariants:
 *   - Every connection of the viewer (its answers, its loaders, the SQL
 *     console) comes from rodb_open(): SQLITE_OPEN_READONLY with the
 *     analyzer's schema checks (db_open_ro), SQLITE_DBCONFIG_DEFENSIVE, no
 *     extensions, no fts3_tokenizer() pointers, no triggers, no ATTACH, and
 *     an authorizer allowing SELECT, READ, recursive CTEs and the functions
 *     of safe_functions (rodb.c) only.
 * Concurrency: a connection is used by one thread at a time (its caller's
 *   lock or its own thread).
 */
#ifndef WSR_VIEWER_RODB_H
#define WSR_VIEWER_RODB_H

#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

/*
 * Opens path read-only with the authorizer into *out (NULL on failure);
 * mmap_bytes > 0 maps that much of the file (set before the authorizer,
 * which refuses PRAGMA). 0, or -1 with the cause on err.
 */
int rodb_open(const char *path, int64_t mmap_bytes, sqlite3 **out, struct wsr_err *err);

#endif /* WSR_VIEWER_RODB_H */
