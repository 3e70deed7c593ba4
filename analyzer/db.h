/*
 * db.h - the trace database: create (schema, pragmas), open read-only,
 * small helpers for statements and meta rows.
 *
 * Invariants:
 *   - db_create() makes a new file with the schema of sql/schema.sql and
 *     sql/views.sql (plus the view `schedtrace` over sql/schedtrace.sql) and leaves a transaction open; db_finish() builds the
 *     indexes (sql/indexes.sql) and commits. The caller renames the file.
 *   - db_open_ro() refuses a file whose user_version is not WSR_DB_VERSION.
 *   - Every SQLite rc is checked; failures push sqlite3_errmsg() as a cause.
 * Concurrency: a connection belongs to one thread.
 */
#ifndef WSR_ANALYZER_DB_H
#define WSR_ANALYZER_DB_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

#define WSR_DB_VERSION 7

extern const char wsr_sql_schema[];
extern const char wsr_sql_views[];
extern const char wsr_sql_indexes[];
/* The body of the `schedtrace` view: a SELECT over schedtrace_ticks(k, ts). */
extern const char wsr_sql_schedtrace[];
extern const char wsr_sql_g_state[];

int db_create(const char *path, sqlite3 **out, struct wsr_err *err);
int db_finish(sqlite3 *db, struct wsr_err *err);
int db_open_ro(const char *path, sqlite3 **out, struct wsr_err *err);
/* 0 when PATH is absent or a wsr database (which --force may replace); else
 * -1 with a cause (err_input: exit 2). */
int db_check_replaceable(const char *path, struct wsr_err *err);
int db_exec(sqlite3 *db, const char *sql, struct wsr_err *err);
int db_prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql, struct wsr_err *err);
int db_meta_int(sqlite3 *db, const char *key, int64_t value, struct wsr_err *err);
int db_meta_text(sqlite3 *db, const char *key, const char *value, struct wsr_err *err);
/*
 * Reads meta.key into *value / buf (empty if absent): 1 found, 0 absent or
 * NULL, -1 on an SQLite error (pushed on err). Every reader of wsr uses these.
 */
int db_meta_read_int(sqlite3 *db, const char *key, int64_t *value, struct wsr_err *err);
int db_meta_read_text(sqlite3 *db, const char *key, char *buf, size_t size, struct wsr_err *err);
/* The same without the error (absent or failed alike): for ingest.c and dag.c.
 * Reads meta.key as an integer into *value; returns 0, or -1 if absent. */
int db_get_meta_int(sqlite3 *db, const char *key, int64_t *value);
/* Reads meta.key as text into buf (empty if absent). */
void db_get_meta_text(sqlite3 *db, const char *key, char *buf, size_t size);

#endif /* WSR_ANALYZER_DB_H */
