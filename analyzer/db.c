/*
 * db.c - creating and opening trace databases (see db.h).
 *
 * Invariants:
 *   - A database under construction is written with journal_mode=OFF and
 *     synchronous=OFF: it is a temporary file (X.db.PID.tmp, ingest.c) that is renamed
 *     only after the final COMMIT succeeded, so a process that dies leaves no
 *     database under the final name. Nothing is fsynced: after a power loss
 *     or OS crash soon after the rename the file under the final name may be
 *     incomplete; the trace is the durable copy (`wsr ingest --force` again).
 *   - Memory stays bounded whatever the trace size: a 16 MiB page cache, and
 *     temporary files (not memory) for the sorter that builds the indexes
 *     (SQLite sizes the sorter's in-memory runs by cache_size, so that
 *     bounds it too). The rows are appended (events, with the counters as
 *     columns, as column blocks in rowid order, g_interval in rowid order), so a bigger cache does not save work: a full
 *     cache spills dirty pages to the file, which costs one write(2) per
 *     page and nothing else without a journal. Measured on a 2M-event
 *     trace: 64 MiB -> 16 MiB takes the peak RSS from 137 MB to 44 MB at
 *     the same CPU time.
 *   - No PRAGMA threads: under SQLITE_CONFIG_SINGLETHREAD (no mutex taken
 *     by the per-row API calls) SQLite gives the sorter no helper thread.
 *   - Readers open with SQLITE_OPEN_READONLY and check user_version and
 *     that meta names the schema_version (a database without meta is refused).
 *   - Every connection made here has the wsr_blocks module (blockvtab.h),
 *     which serves the column-block tables (events, p_counters, g_interval,
 *     g_info); db_open_ro() connects
 *     them before it returns (the module declares its columns, which a
 *     read-only authorizer installed later would refuse).
 *   - db_check_replaceable(): only a file that is an SQLite database with a
 *     wsr meta table may be replaced by `wsr ingest --force`.
 * Concurrency: none.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "blockvtab.h"
#include "db.h"

int db_exec(sqlite3 *db, const char *sql, struct wsr_err *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_push(err, "sqlite: %s", msg != NULL ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int db_prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql, struct wsr_err *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		err_push(err, "sqlite: preparing \"%.60s\": %s", sql, sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/*
 * Creates the views of sql/g_state.sql (g_state, g): each /\*NAMES:T*\/ there
 * becomes the CASE branches of name table T (ids and names as stored in
 * the tables schema.sql has just filled), so every name is written once.
 */
static int create_g_views(sqlite3 *db, struct wsr_err *err)
{
	static const char *const tables[] = {"g_state_name", "g_reason", "enum_g_source"};
	char *sql = sqlite3_mprintf("%s", wsr_sql_g_state);
	int ret = -1;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		sqlite3_stmt *st = NULL;
		char *q = sqlite3_mprintf(
			"SELECT replace(?1, '/*NAMES:%q*/', (SELECT group_concat(b, ' ') FROM "
			"(SELECT printf('WHEN %%d THEN %%Q', id, name) AS b FROM \"%w\" ORDER BY id)))",
			tables[i], tables[i]);
		char *next = NULL;

		if (sql == NULL || q == NULL) {
			sqlite3_free(q);
			err_push(err, "out of memory");
			goto out;
		}
		if (db_prepare(db, &st, q, err) < 0) {
			sqlite3_free(q);
			goto out;
		}
		sqlite3_free(q);
		sqlite3_bind_text(st, 1, sql, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_text(st, 0) == NULL) {
			err_push(err, "sqlite: naming the codes of %s: %s", tables[i],
				 sqlite3_errmsg(db));
			sqlite3_finalize(st);
			goto out;
		}
		next = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		sqlite3_free(sql);
		sql = next;
	}
	if (sql == NULL)
		err_push(err, "out of memory");
	else if (db_exec(db, sql, err) == 0)
		ret = 0;
out:
	sqlite3_free(sql);
	return ret;
}

int db_create(const char *path, sqlite3 **out, struct wsr_err *err)
{
	sqlite3 *db = NULL;
	char *view = NULL;
	int ret = -1;

	/* The analyzer uses SQLite from one thread: no mutexes (fails harmlessly
	 * with SQLITE_MISUSE if SQLite was already initialized). */
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		err_push(err, "creating %s: %s", path,
			 db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (blockvtab_register(db) != SQLITE_OK) {
		err_push(err, "%s: registering the wsr_blocks module: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	if (db_exec(db,
		    "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; "
		    "PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; "
		    "PRAGMA cache_size = -16384;",
		    err) < 0)
		goto out;
	if (db_exec(db, "BEGIN", err) < 0 || db_exec(db, wsr_sql_schema, err) < 0 ||
	    create_g_views(db, err) < 0 || db_exec(db, wsr_sql_views, err) < 0) {
		err_push(err, "creating the schema in %s", path);
		goto out;
	}
	/* The one definition of the schedtrace rows, also run by metrics.c. */
	view = sqlite3_mprintf("CREATE VIEW schedtrace AS\n%s", wsr_sql_schedtrace);
	if (view == NULL || db_exec(db, view, err) < 0) {
		err_push(err, "creating the schedtrace view in %s", path);
		goto out;
	}
	ret = 0;
out:
	sqlite3_free(view);
	if (ret < 0 && db != NULL) {
		sqlite3_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}

int db_finish(sqlite3 *db, struct wsr_err *err)
{
	if (db_exec(db, wsr_sql_indexes, err) < 0) {
		err_push(err, "creating indexes");
		return -1;
	}
	if (db_exec(db, "COMMIT", err) < 0) {
		err_push(err, "committing");
		return -1;
	}
	/* Statistics for the query planner; a sample is enough. */
	if (db_exec(db, "PRAGMA analysis_limit = 1000; ANALYZE", err) < 0)
		return -1;
	return 0;
}

/*
 * Connects the module of every wsr_blocks table (events, p_counters,
 * g_interval, g_info) now,
 * before a caller's authorizer (the viewer's allows reads only) would refuse
 * the table declaration the module makes when a statement first names one.
 */
static int connect_block_tables(sqlite3 *db, const char *path, struct wsr_err *err)
{
	sqlite3_stmt *names = NULL, *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT name FROM sqlite_schema WHERE type = 'table' AND "
			       "sql LIKE 'CREATE VIRTUAL TABLE % USING wsr_blocks(%'",
			       -1, &names, NULL) != SQLITE_OK) {
		err_input(err, "%s: reading its schema: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	while (ret == 0 && (rc = sqlite3_step(names)) == SQLITE_ROW) {
		/* table_info connects the module without planning a query (which
		 * would read the zone maps: 10 ms at 10M events) */
		char *q = sqlite3_mprintf("PRAGMA table_info(\"%w\")",
					  (const char *)sqlite3_column_text(names, 0));
		if (q == NULL || sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW) {
			err_input(err, "%s: cannot read table %s: %s", path,
				  (const char *)sqlite3_column_text(names, 0),
				  q == NULL ? "out of memory" : sqlite3_errmsg(db));
			ret = -1;
		}
		sqlite3_free(q);
		sqlite3_finalize(st);
		st = NULL;
	}
	if (ret == 0 && rc != SQLITE_DONE) {
		err_input(err, "%s: reading its schema: %s", path, sqlite3_errmsg(db));
		ret = -1;
	}
	sqlite3_finalize(names);
	return ret;
}

int db_open_ro(const char *path, sqlite3 **out, struct wsr_err *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int ret = -1;
	int version = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		err_input(err, "opening %s: %s", path,
			  db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	/* events is a virtual table over column blocks (blockvtab.h) */
	if (blockvtab_register(db) != SQLITE_OK) {
		err_push(err, "%s: registering the wsr_blocks module: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) {
		err_input(err, "%s: not a wsr database: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	else {
		err_input(err, "%s: not a wsr database: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	if (version != WSR_DB_VERSION) {
		err_input(err, "%s: not a wsr database of schema version %d (user_version %d)",
			  path, WSR_DB_VERSION, version);
		goto out;
	}
	/* Every figure starts from meta (times, gomaxprocs, counts): without
	 * it a report would print zeros. */
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
			       NULL) != SQLITE_OK) {
		err_input(err, "%s: not a wsr database: it has no meta table (%s)", path,
			  sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		err_input(err,
			  "%s: not a complete wsr database: its meta table has no schema_version "
			  "(ingest the trace again with `wsr ingest`)",
			  path);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (connect_block_tables(db, path, err) < 0)
		goto out;
	ret = 0;
out:
	sqlite3_finalize(st);
	if (ret < 0 && db != NULL) {
		sqlite3_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}

static int db_meta(sqlite3 *db, const char *key, int is_int, int64_t v, const char *text,
		   struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (db_prepare(db, &st, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", err) < 0)
		goto out;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (is_int)
		sqlite3_bind_int64(st, 2, v);
	else if (text != NULL)
		sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 2);
	if (sqlite3_step(st) != SQLITE_DONE) {
		err_push(err, "sqlite: writing meta %s: %s", key, sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int db_meta_int(sqlite3 *db, const char *key, int64_t value, struct wsr_err *err)
{
	return db_meta(db, key, 1, value, NULL, err);
}

int db_meta_text(sqlite3 *db, const char *key, const char *value, struct wsr_err *err)
{
	return db_meta(db, key, 0, 0, value, err);
}

/* Steps the meta row of KEY: SQLITE_ROW (value in column 0), SQLITE_DONE, or -1 (pushed). */
static int meta_row(sqlite3 *db, const char *key, sqlite3_stmt **st, struct wsr_err *err)
{
	int rc;

	if (db_prepare(db, st, "SELECT value FROM meta WHERE key = ?", err) < 0)
		return -1;
	sqlite3_bind_text(*st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(*st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		err_push(err, "sqlite: reading meta %s: %s", key, sqlite3_errmsg(db));
		return -1;
	}
	return rc;
}

int db_meta_read_int(sqlite3 *db, const char *key, int64_t *value, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = meta_row(db, key, &st, err), ret = rc < 0 ? -1 : 0;

	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*value = sqlite3_column_int64(st, 0);
		ret = 1;
	}
	sqlite3_finalize(st);
	return ret;
}

int db_meta_read_text(sqlite3 *db, const char *key, char *buf, size_t size, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = meta_row(db, key, &st, err), ret = rc < 0 ? -1 : 0;

	buf[0] = '\0';
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
		ret = 1;
	}
	sqlite3_finalize(st);
	return ret;
}

int db_get_meta_int(sqlite3 *db, const char *key, int64_t *value)
{
	struct wsr_err err;

	err_init(&err);
	return db_meta_read_int(db, key, value, &err) == 1 ? 0 : -1;
}

void db_get_meta_text(sqlite3 *db, const char *key, char *buf, size_t size)
{
	struct wsr_err err;

	err_init(&err);
	db_meta_read_text(db, key, buf, size, &err);
}

int db_check_replaceable(const char *path, struct wsr_err *err)
{
	static const char sqlite_magic[16] = "SQLite format 3";
	char head[16];
	struct stat st;
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int fd, ret = -1;
	ssize_t n;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		err_push(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		err_input(err,
			  "%s exists and is not a regular file: --force replaces only a wsr "
			  "database",
			  path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_push(err, "opening %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, sqlite_magic, sizeof(head)) != 0)
		goto refuse;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto refuse;
	if (sqlite3_prepare_v2(db,
			       "SELECT 1 FROM meta WHERE key IN ('schema_version', "
			       "'analyzer_version')",
			       -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_step(q) != SQLITE_ROW)
		goto refuse;
	ret = 0;
	goto out;
refuse:
	err_input(err,
		  "%s exists and is not a wsr database: --force replaces only a database that "
		  "`wsr ingest` wrote; remove it yourself or choose another -o",
		  path);
out:
	sqlite3_finalize(q);
	if (db != NULL)
		sqlite3_close(db);
	return ret;
}
