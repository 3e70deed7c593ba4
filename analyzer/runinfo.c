/*
 * runinfo.c - reads TRACE/wsr-run.json (see runinfo.h).
 *
 * Invariants: the file is read whole (it is small: `wsr run` writes a few
 *   hundred bytes) and at most 1 MiB is accepted; it is parsed by SQLite's
 *   JSON functions, every statement prepared through db_prepare and every
 *   SQLite rc checked.
 * Concurrency: none.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "runinfo.h"

#define RUN_INFO_MAX (1u << 20)

/* Appends ARG to BUF (of SIZE) as one shell word: quoted unless it is plain. */
static void append_word(char *buf, size_t size, const char *arg)
{
	size_t len = strlen(buf);
	bool plain = arg[0] != '\0';

	for (const char *p = arg; *p != '\0'; p++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			   "_-./=:,+@%",
			   *p) == NULL)
			plain = false;
	if (len > 0 && len + 1 < size)
		buf[len++] = ' ';
	if (plain) {
		snprintf(buf + len, size - len, "%s", arg);
		return;
	}
	if (len + 1 < size)
		buf[len++] = '\'';
	for (const char *p = arg; *p != '\0' && len + 5 < size; p++) {
		if (*p == '\'') {
			memcpy(buf + len, "'\\''", 4);
			len += 4;
		} else {
			buf[len++] = *p;
		}
	}
	if (len + 1 < size)
		buf[len++] = '\'';
	buf[len < size ? len : size - 1] = '\0';
}

/* Prepares SQL (db_prepare) with ?1 bound to the file's TEXT; 0, or -1 with the cause. */
static int json_query(sqlite3 *db, sqlite3_stmt **st, const char *sql, const char *text,
		      size_t len, const char *path, struct wsr_err *err)
{
	if (db_prepare(db, st, sql, err) < 0) {
		err_push(err, "reading %s", path);
		return -1;
	}
	if (sqlite3_bind_text(*st, 1, text, (int)len, SQLITE_STATIC) != SQLITE_OK) {
		err_push(err, "sqlite: reading %s: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

int run_info_load(sqlite3 *db, const char *dir, struct run_info *ri, struct wsr_err *err)
{
	char path[PATH_MAX + 32];
	char *text = NULL;
	size_t len = 0;
	sqlite3_stmt *st = NULL;
	FILE *f;
	int ret = -1;

	memset(ri, 0, sizeof(*ri));
	ri->exit_status = ri->exit_signal = ri->packets = ri->stream_bytes = ri->streams = -1;
	ri->lossless = ri->flushed = -1;
	snprintf(path, sizeof(path), "%s/wsr-run.json", dir);
	f = fopen(path, "rb");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		err_push(err, "opening %s: %s", path, strerror(errno));
		return -1;
	}
	text = malloc(RUN_INFO_MAX + 1);
	if (text == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	len = fread(text, 1, RUN_INFO_MAX + 1, f);
	if (ferror(f)) {
		err_push(err, "reading %s: %s", path, strerror(errno));
		goto out;
	}
	if (len > RUN_INFO_MAX) {
		err_input(err, "%s: larger than %u bytes: not a wsr-run.json of `wsr run`", path,
			  RUN_INFO_MAX);
		goto out;
	}
	text[len] = '\0';
	if (json_query(db, &st,
		       "SELECT json_valid(?1), json_extract(?1, '$.program'), "
		       "json_type(?1, '$.argv'), json_extract(?1, '$.exit_status'), "
		       "json_extract(?1, '$.exit_signal'), json_extract(?1, '$.packets'), "
		       "json_extract(?1, '$.stream_bytes'), json_extract(?1, '$.streams'), "
		       "json_extract(?1, '$.wall_s'), json_extract(?1, '$.lossless'), "
		       "json_extract(?1, '$.flushed')",
		       text, len, path, err) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err_push(err, "sqlite: reading %s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_column_int(st, 0) != 1 || sqlite3_column_type(st, 1) != SQLITE_TEXT ||
	    sqlite3_column_text(st, 2) == NULL ||
	    strcmp((const char *)sqlite3_column_text(st, 2), "array") != 0) {
		err_input(err,
			  "%s: not the run record that `wsr run` writes (invalid JSON, or no "
			  "\"program\" and \"argv\"): it is corrupted; move it away to ingest the "
			  "trace alone",
			  path);
		goto out;
	}
	snprintf(ri->program, sizeof(ri->program), "%s", (const char *)sqlite3_column_text(st, 1));
	int64_t *ints[] = {&ri->exit_status, &ri->exit_signal, &ri->packets, &ri->stream_bytes,
			   &ri->streams};
	for (int k = 0; k < 5; k++)
		if (sqlite3_column_type(st, 3 + k) == SQLITE_INTEGER)
			*ints[k] = sqlite3_column_int64(st, 3 + k);
	if (sqlite3_column_type(st, 8) != SQLITE_NULL)
		ri->wall_s = sqlite3_column_double(st, 8);
	if (sqlite3_column_type(st, 9) == SQLITE_INTEGER)
		ri->lossless = sqlite3_column_int(st, 9) != 0;
	if (sqlite3_column_type(st, 10) == SQLITE_INTEGER)
		ri->flushed = sqlite3_column_int(st, 10) != 0;
	sqlite3_finalize(st);
	st = NULL;
	if (json_query(db, &st, "SELECT value FROM json_each(?1, '$.argv') ORDER BY key", text, len,
		       path, err) < 0)
		goto out;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		append_word(ri->command, sizeof(ri->command),
			    sqlite3_column_text(st, 0) != NULL
				    ? (const char *)sqlite3_column_text(st, 0)
				    : "");
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: reading %s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	ri->found = true;
	ret = 0;
out:
	sqlite3_finalize(st);
	free(text);
	fclose(f);
	return ret;
}
