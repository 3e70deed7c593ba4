/*
 * perfetto.h - Perfetto protobuf (TrackEvent) export of a trace database.
 *
 * Invariants: FILE is replaced whole or not at all (FILE.tmp + rename).
 * Concurrency: single-threaded.
 */
#ifndef WSR_ANALYZER_PERFETTO_H
#define WSR_ANALYZER_PERFETTO_H

#include <sqlite3.h>

#include "err.h"

int perfetto_write(sqlite3 *db, const char *path, struct wsr_err *err);

#endif /* WSR_ANALYZER_PERFETTO_H */
