/*
 * rodb.c - the viewer's read-only connections (see rodb.h): SQLite's
 * defensive settings and an authorizer that allows reads and pure functions.
 *
 * Invariants:
 *   - rodb_open() returns a connection only once every guard has taken
 *     effect (each setting is read back); on any failure it closes the
 *     connection and returns none.
 *   - The authorizer is installed before the caller's first query, so even
 *     a bug in the viewer's own SQL cannot write; the console's queries must
 *     also pass sqlite3_stmt_readonly() (console.c).
 * Concurrency: no state of its own; each connection belongs to its caller
 *   (one thread at a time, under the caller's lock).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db.h"
#include "rodb.h"

/*
 * The SQL functions a query may call: SQLite's core scalar, aggregate,
 * window, date, math and JSON functions, which only compute a value from
 * their arguments (sorted, for bsearch; compared without case). Everything
 * else is refused, in particular fts3_tokenizer() (the one-argument form
 * returns a pointer into libsqlite3, the two-argument form installs one: a
 * later MATCH jumps there), load_extension(), the FTS and R*Tree helpers
 * (match, snippet, optimize, which writes, rtreenode, which parses a blob),
 * sqlite_log() and the compile-option probes.
 */
static const char *const safe_functions[] = {
	"->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg",
	"ceil", "ceiling", "changes", "char", "coalesce", "concat", "concat_ws", "cos", "cosh",
	"count", "cume_dist", "current_date", "current_time", "current_timestamp", "date",
	"datetime", "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob",
	"group_concat", "hex", "ifnull", "iif", "instr", "json", "json_array", "json_array_length",
	"json_extract", "json_group_array", "json_group_object", "json_insert", "json_object",
	"json_patch", "json_quote", "json_remove", "json_replace", "json_set", "json_type",
	"json_valid", "julianday", "lag", "last_insert_rowid", "last_value", "lead", "length",
	"like", "likelihood", "likely", "ln", "log", "log10", "log2", "lower", "ltrim", "max",
	"min", "mod", "nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi", "pow",
	"power", "printf", "quote", "radians", "random", "randomblob", "rank", "replace", "round",
	"row_number", "rtrim", "sign", "sin", "sinh", "soundex", "sqlite_source_id",
	"sqlite_version", "sqrt", "strftime", "string_agg", "substr", "substring", "sum", "tan",
	"tanh", "time", "timediff", "total", "total_changes", "trim", "trunc", "typeof", "unhex",
	"unicode", "unixepoch", "unlikely", "upper", "zeroblob",
};

static int name_cmp(const void *key, const void *elem)
{
	return strcasecmp(key, *(const char *const *)elem);
}

/* 1 if name is in safe_functions. */
static int function_allowed(const char *name)
{
	return name != NULL && bsearch(name, safe_functions,
				       sizeof(safe_functions) / sizeof(safe_functions[0]),
				       sizeof(safe_functions[0]), name_cmp) != NULL;
}

/*
 * Allows reads only. Views read their tables through SQLITE_READ, recursive
 * CTEs need SQLITE_RECURSIVE, and only the functions of safe_functions may
 * be called (SQLITE_FUNCTION names the function in b). Everything else
 * (INSERT, UPDATE, DELETE, CREATE, DROP, PRAGMA, ATTACH, transactions...)
 * is denied.
 */
static int ro_authorizer(void *ud, int action, const char *a, const char *b, const char *c,
			 const char *d)
{
	(void)ud;
	(void)a;
	(void)c;
	(void)d;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		return function_allowed(b) ? SQLITE_OK : SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

int rodb_open(const char *path, int64_t mmap_bytes, sqlite3 **out, struct wsr_err *err)
{
	sqlite3 *db = NULL;
	int ret = -1;

	/* The analyzer's open: read-only, schema version and meta checked (db.c). */
	if (db_open_ro(path, &db, err) < 0)
		goto out;
	if (mmap_bytes > 0) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA mmap_size = %" PRId64, mmap_bytes);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			err_push(err, "%s: %s", sql, sqlite3_errmsg(db));
			goto out;
		}
	}
	/*
	 * Defensive, no extensions, no fts3_tokenizer() pointer form, no
	 * triggers: the file is data, not code. Each must take effect. (The
	 * schema stays "trusted": the schedtrace view needs json_group_array(),
	 * which SQLite does not mark innocuous; the authorizer's function list
	 * applies inside views as well.)
	 */
	{
		static const int off[] = {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION,
					  SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER,
					  SQLITE_DBCONFIG_ENABLE_TRIGGER};
		int v = 0;

		if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &v) != SQLITE_OK || v != 1) {
			err_push(err, "%s: cannot turn on SQLITE_DBCONFIG_DEFENSIVE", path);
			goto out;
		}
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			v = 1;
			if (sqlite3_db_config(db, off[i], 0, &v) != SQLITE_OK || v != 0) {
				err_push(err, "%s: cannot turn off SQLite option %d", path, off[i]);
				goto out;
			}
		}
	}
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 * 1024 * 1024);
	if (sqlite3_set_authorizer(db, ro_authorizer, NULL) != SQLITE_OK) {
		err_push(err, "installing the authorizer: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	if (ret < 0) {
		sqlite3_close(db);
		db = NULL;
	}
	*out = db;
	return ret;
}
