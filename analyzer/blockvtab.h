/*
 * blockvtab.h - the SQLite virtual table module `wsr_blocks`: a read-only
 * table whose rows are stored as column blocks (colblock.h) in two ordinary
 * tables, NAME_block (id INTEGER PRIMARY KEY, data BLOB) and NAME_zone
 * (id INTEGER PRIMARY KEY, zone BLOB), for a virtual table NAME:
 *
 *   CREATE VIRTUAL TABLE events USING wsr_blocks(rowid=id, order=ts,
 *     id INTEGER, ts INTEGER, name TEXT, ...);
 *
 * Invariants:
 *   - Columns are INTEGER or TEXT, in the order of the blocks' columns.
 *     rowid=C: column C is the table's rowid, strictly increasing in storage
 *     order (without it the rowid is the row's position from 0). order=C:
 *     column C never decreases in storage order. base=N: without rowid=,
 *     the rowid is the position from N (g_interval: from 1, as the rowids of
 *     the ordinary table it replaced). Block ids are 0, 1, ...
 *     in storage order. The writer (rows.c) keeps these; the module checks
 *     them on every block it decodes and reports SQLITE_CORRUPT otherwise.
 *   - The same rows, in the same order, as an ordinary table with those
 *     columns filled in storage order; a query sees the blocks committed
 *     (or, on the writing connection, inserted) when it starts.
 * Concurrency: a vtab and its cursors belong to their connection.
 */
#ifndef WSR_ANALYZER_BLOCKVTAB_H
#define WSR_ANALYZER_BLOCKVTAB_H

#include <sqlite3.h>

/* Registers the module on db: SQLITE_OK or SQLite's error code. */
int blockvtab_register(sqlite3 *db);

#endif /* WSR_ANALYZER_BLOCKVTAB_H */
