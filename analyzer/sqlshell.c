/*
 * sqlshell.c - `wsr sql trace.db [SQLITE3-ARGS...]`: the sqlite3 shell on a
 * trace database, read-only, with the module that serves `events`,
 * `p_counters`, `g_interval` and `g_info` loaded (docs/schema.md, "Changes
 * in version 6" and 7).
 *
 * The shell is SQLite's own (`sqlite3`, Debian package sqlite3): this file
 * only checks the database, finds the extension wsr_sqlite and execs
 * `sqlite3 -readonly -cmd '.load EXT' trace.db ARGS...`, so everything the
 * shell does (its dot-commands, output modes, an SQL statement as an
 * argument) works as documented there.
 *
 * Invariants:
 *   - The database is checked first (db_open_ro: a wsr database of this
 *     schema version), so a wrong file gets wsr's message, not the shell's.
 *   - The shell opens it read-only: nothing typed at it can change the file.
 *   - The extension is, in order: $WSR_SQLITE_EXT; wsr_sqlite.so beside this
 *     executable (a build tree: build/analyzer/); LIBDIR/wsr/wsr_sqlite.so,
 *     where `meson install` puts it.
 * Concurrency: single-threaded; ends in exec.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "db.h"
#include "err.h"

static const struct cli_opt sql_opts[] = {
	{NULL, 0, NULL, NULL},
};

static const struct cli sql_cli = {
	.prog = "wsr sql",
	.synopsis = "wsr sql trace.db [SQLITE3-ARGS...]",
	.about = "The sqlite3 shell on a trace database, read-only, with the module that\n"
		 "serves events, p_counters, g_interval and g_info loaded. Arguments after\n"
		 "trace.db go to the shell: its options (-header, -csv, -json ...) and SQL\n"
		 "statements; without a statement the shell reads them from stdin (see\n"
		 "wsr-sql(1)).",
	.opts = sql_opts,
	.in_order = true,
	.min_args = 1,
	.max_args = -1,
	.missing = "no trace database",
};

static int sql_opt(void *ctx, int key, const char *arg)
{
	(void)ctx;
	(void)key;
	(void)arg;
	return 0;
}

/* The extension's path into PATH (SIZE bytes); 0 when found, -1 when not. */
static int find_extension(char *path, size_t size)
{
	const char *env = getenv("WSR_SQLITE_EXT");
	char self[PATH_MAX];

	if (env != NULL && env[0] != '\0') {
		snprintf(path, size, "%s", env);
		return access(path, R_OK) == 0 ? 0 : -1;
	}
	if (cli_self_dir(self, sizeof(self)) == 0) {
		snprintf(path, size, "%s/wsr_sqlite.so", self);
		if (access(path, R_OK) == 0)
			return 0;
	}
	snprintf(path, size, "%s/wsr_sqlite.so", WSR_EXTDIR);
	return access(path, R_OK) == 0 ? 0 : -1;
}

int cmd_sql(int argc, char **argv)
{
	char ext[PATH_MAX + 32], load[PATH_MAX + 64];
	struct wsr_err err;
	sqlite3 *db = NULL;
	char **args;
	int first, rc = cli_parse(&sql_cli, argc, argv, sql_opt, NULL, &first), i, k;

	if (rc >= 0)
		return rc;
	err_init(&err);
	rc = db_open_ro(argv[first], &db, &err);
	sqlite3_close(db);
	if (rc < 0) {
		err_print(&err, "wsr sql", stderr);
		return err.exit_code;
	}
	if (find_extension(ext, sizeof(ext)) != 0) {
		const char *env = getenv("WSR_SQLITE_EXT");

		if (env != NULL && env[0] != '\0')
			fprintf(stderr, "wsr sql: error: WSR_SQLITE_EXT names %s: %s\n", ext,
				strerror(errno));
		else
			fprintf(stderr,
				"wsr sql: error: cannot find the extension wsr_sqlite.so beside wsr "
				"or in %s: is wsr installed?\n",
				WSR_EXTDIR);
		return 1;
	}
	if (strchr(ext, '"') != NULL) {
		fprintf(stderr, "wsr sql: error: the extension's path %s holds a '\"'\n", ext);
		return 1;
	}
	snprintf(load, sizeof(load), ".load \"%s\"", ext);
	args = calloc((size_t)(argc - first) + 6, sizeof(*args));
	if (args == NULL) {
		fprintf(stderr, "wsr sql: error: out of memory\n");
		return 1;
	}
	k = 0;
	args[k++] = "sqlite3";
	args[k++] = "-readonly";
	args[k++] = "-cmd";
	args[k++] = load;
	for (i = first; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	fflush(NULL);
	execvp(args[0], args);
	fprintf(stderr, "wsr sql: error: cannot run sqlite3: %s%s\n", strerror(errno),
		errno == ENOENT ? " (Debian: apt install sqlite3)" : "");
	free(args);
	return 1;
}
