/*
 * sqlext.c - the entry point of the SQLite loadable extension wsr_sqlite
 * (analyzer/meson.build): registers the wsr_blocks module (blockvtab.h) on
 * the connection that loads it, so the sqlite3 shell and Python's sqlite3
 * can read a wsr database's `events`.
 *
 * Invariants: built with -DWSR_SQLITE_EXTENSION, so blockvtab.c calls
 *   SQLite through the API table the host passes here (SQLITE_EXTENSION_INIT2).
 * Concurrency: none (SQLite calls the entry point on the loading thread).
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "blockvtab.h"

/* The name SQLite derives from the file name wsr_sqlite.so. */
__attribute__((visibility("default"))) int sqlite3_wsrsqlite_init(sqlite3 *db, char **errmsg,
							      const sqlite3_api_routines *api);

int sqlite3_wsrsqlite_init(sqlite3 *db, char **errmsg, const sqlite3_api_routines *api)
{
	(void)errmsg;
	SQLITE_EXTENSION_INIT2(api);
	return blockvtab_register(db);
}
