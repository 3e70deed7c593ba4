/*
 * test-blockvtab.c - the wsr_blocks virtual table (analyzer/blockvtab.c,
 * blockscan.c) answers every query as an ordinary table holding the same
 * rows does: random rows in blocks of random sizes, and many queries with
 * random constants (rowid and ts ranges and their boundaries, equality and
 * IN on texts and integers, NULL comparisons, values of other types, ORDER BY
 * ts DESC, LIMIT, correlated subqueries). Corrupt or missing blocks and zone
 * maps are SQLITE_CORRUPT naming the block; writes are refused; a connection
 * without the module fails only on the queries that read the table.
 *
 * Invariants: fixed seeds (a failure repeats); the database is a temporary
 * file, removed by each case. Concurrency: none.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "blockread.h"
#include "blockvtab.h"
#include "colblock.h"
#include "sbuf.h"
#include "wsrtest.h"

#define NCOLS 7
#define MAXROWS 6000

static const uint8_t types[NCOLS] = {CB_INT, CB_INT, CB_TEXT, CB_INT, CB_INT, CB_TEXT, CB_INT};
static const char *const names[] = {"g_run", "g_stop", "runqput", "steal", ""};

static uint64_t rng;
static int64_t v[NCOLS][MAXROWS];
static uint32_t len[NCOLS][MAXROWS];
static uint8_t isnull[NCOLS][MAXROWS];
static struct sbuf text;
static int nrows;
static char dbpath[64];

static uint64_t rnd(void)
{
	return wsrtest_xorshift(&rng);
}

static void exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		wsrtest_fail(__FILE__, __LINE__, "%s: %s", sql, msg);
}

static sqlite3 *open_db(bool module)
{
	sqlite3 *db = NULL;
	ASSERT_EQ(sqlite3_open(dbpath, &db), SQLITE_OK);
	if (module)
		ASSERT_EQ(blockvtab_register(db), SQLITE_OK);
	return db;
}

/* Random rows, in blocks of random sizes, in t (wsr_blocks) and plain. */
/* Encodes N rows of COLS as block BLOCK: its blob through BL, its zone map through ZN. */
static void put_block(sqlite3_stmt *bl, sqlite3_stmt *zn, const struct cb_col_in *cols,
		      uint32_t ncols, uint32_t n, int block)
{
	struct sbuf b, z;

	sb_init(&b);
	sb_init(&z);
	ASSERT_EQ(cb_encode(cols, ncols, n, &b, &z), 0);
	sqlite3_bind_int(bl, 1, block);
	sqlite3_bind_blob(bl, 2, b.buf, (int)b.len, SQLITE_TRANSIENT);
	sqlite3_bind_int(zn, 1, block);
	sqlite3_bind_blob(zn, 2, z.buf, (int)z.len, SQLITE_TRANSIENT);
	ASSERT_EQ(sqlite3_step(bl), SQLITE_DONE);
	ASSERT_EQ(sqlite3_step(zn), SQLITE_DONE);
	sqlite3_reset(bl);
	sqlite3_reset(zn);
	sb_free(&b);
	sb_free(&z);
}

static sqlite3 *make_db(uint64_t seed, int n)
{
	snprintf(dbpath, sizeof(dbpath), "/tmp/wsr-test-blockvtab-%d.db", (int)getpid());
	unlink(dbpath);
	sqlite3 *db = open_db(true);
	exec(db, "CREATE TABLE t_block (id INTEGER PRIMARY KEY, data BLOB NOT NULL);"
		 "CREATE TABLE t_zone (id INTEGER PRIMARY KEY, zone BLOB NOT NULL);"
		 "CREATE VIRTUAL TABLE t USING wsr_blocks(rowid=id, order=ts, id INTEGER, "
		 "ts INTEGER, name TEXT, p INTEGER, g INTEGER, extra TEXT, a1 INTEGER);"
		 "CREATE TABLE plain (id INTEGER PRIMARY KEY, ts INTEGER, name TEXT, p INTEGER, "
		 "g INTEGER, extra TEXT, a1 INTEGER); BEGIN");
	rng = seed;
	sb_init(&text);
	nrows = n;
	int64_t id = (int64_t)(rnd() % 100), ts = 1000000;
	memset(isnull, 0, sizeof(isnull));
	for (int i = 0; i < n; i++) {
		v[0][i] = id;
		id += 1 + (int64_t)(rnd() % 3 == 0 ? rnd() % 5 : 0);
		v[1][i] = ts;
		ts += rnd() % 3 == 0 ? 0 : (int64_t)(rnd() % 50);
		const char *nm = names[rnd() % 5];
		v[2][i] = (int64_t)text.len;
		len[2][i] = (uint32_t)strlen(nm);
		sb_add(&text, nm, strlen(nm));
		isnull[2][i] = rnd() % 50 == 0;
		v[3][i] = (int64_t)(rnd() % 5) - 1;
		isnull[3][i] = rnd() % 9 == 0;
		v[4][i] = (int64_t)(i / 20) + (int64_t)(rnd() % 30);
		isnull[4][i] = rnd() % 4 == 0;
		char buf[32];
		int l = snprintf(buf, sizeof(buf), "{\"k\":%d}", (int)(rnd() % 40));
		v[5][i] = (int64_t)text.len;
		len[5][i] = (uint32_t)l;
		sb_add(&text, buf, (size_t)l);
		isnull[5][i] = rnd() % 3 != 0;
		static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1, 7};
		v[6][i] = rnd() % 4 == 0 ? edge[rnd() % 5] : (int64_t)(rnd() % 1000) - 500;
		isnull[6][i] = rnd() % 6 == 0;
	}
	sqlite3_stmt *ins = NULL, *bl = NULL, *zn = NULL;
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO plain VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ins,
				     NULL),
		  SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO t_block VALUES (?, ?)", -1, &bl, NULL),
		  SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO t_zone VALUES (?, ?)", -1, &zn, NULL),
		  SQLITE_OK);
	for (int i = 0; i < n; i++) {
		for (int c = 0; c < NCOLS; c++) {
			if (isnull[c][i])
				sqlite3_bind_null(ins, c + 1);
			else if (types[c] == CB_INT)
				sqlite3_bind_int64(ins, c + 1, v[c][i]);
			else
				sqlite3_bind_text(ins, c + 1, text.buf + v[c][i], (int)len[c][i],
						  SQLITE_STATIC);
		}
		ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
	}
	int block = 0;
	for (int i = 0; i < n; block++) {
		int k = 1 + (int)(rnd() % (rnd() % 2 ? 400 : 8));
		if (k > n - i)
			k = n - i;
		struct cb_col_in cols[NCOLS];
		for (int c = 0; c < NCOLS; c++)
			cols[c] = (struct cb_col_in){types[c], isnull[c] + i, v[c] + i, len[c] + i,
						     text.buf, types[c] == CB_INT && rnd() % 2, 0};
		put_block(bl, zn, cols, NCOLS, (uint32_t)k, block);
		i += k;
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(bl);
	sqlite3_finalize(zn);
	exec(db, "COMMIT");
	return db;
}

static int line_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	return strcmp(x != NULL ? x : "", y != NULL ? y : "");
}

/* The rows of sql on table tab (every "X" in sql), with the parameters, as
 * text, sorted unless ordered; an error as "error: ...". */
static char *answer(sqlite3 *db, const char *sql, const char *tab, const int64_t *par, int npar,
		    bool ordered)
{
	struct sbuf q, out;
	sqlite3_stmt *st = NULL;

	sb_init(&q);
	sb_init(&out);
	for (const char *p = sql; *p != '\0'; p++) {
		if (*p == 'X')
			sb_puts(&q, tab);
		else
			sb_putc(&q, *p);
	}
	if (sqlite3_prepare_v2(db, q.buf, -1, &st, NULL) != SQLITE_OK)
		wsrtest_fail(__FILE__, __LINE__, "%s: %s", q.buf, sqlite3_errmsg(db));
	for (int i = 0; i < npar; i++)
		sqlite3_bind_int64(st, i + 1, par[i]);
	size_t nlines = 0, cap = 0;
	char **lines = NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sbuf line;
		sb_init(&line);
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				sb_puts(&line, "NULL");
			else
				sb_printf(&line, "%d:%s", sqlite3_column_type(st, c),
					  (const char *)sqlite3_column_text(st, c));
			sb_putc(&line, '|');
		}
		if (nlines == cap) {
			cap = cap ? 2 * cap : 64;
			lines = realloc(lines, cap * sizeof(*lines));
			ASSERT(lines != NULL);
		}
		lines[nlines++] = sb_steal(&line, NULL);
	}
	if (rc != SQLITE_DONE)
		sb_printf(&out, "error: %s\n", sqlite3_errmsg(db));
	if (!ordered && nlines > 1)
		qsort(lines, nlines, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nlines; i++) {
		sb_puts(&out, lines[i] != NULL ? lines[i] : "");
		sb_putc(&out, '\n');
		free(lines[i]);
	}
	free(lines);
	sqlite3_finalize(st);
	sb_free(&q);
	char *s = sb_steal(&out, NULL);
	return s != NULL ? s : calloc(1, 1);
}

/* A constant for the queries: a ts or id near one of the rows, or an extreme. */
static int64_t near(int c)
{
	static const int64_t edge[] = {INT64_MIN, INT64_MAX, 0, -1};
	if (rnd() % 10 == 0)
		return edge[rnd() % 4];
	int i = (int)(rnd() % (uint64_t)nrows);
	return v[c][i] + (int64_t)(rnd() % 3) - 1;
}

struct query {
	const char *sql; /* X: the table; ?N: parameters */
	const char *par; /* per parameter: 'i' an id, 't' a ts, 'g' a g, 'p' a p, 'n' a count */
	bool ordered;    /* its ORDER BY makes the row order part of the answer */
};

static const struct query queries[] = {
	{"SELECT * FROM X", "", true},
	{"SELECT * FROM X WHERE ts >= ?1 AND ts < ?2", "tt", false},
	{"SELECT * FROM X WHERE ts BETWEEN ?1 AND ?2 ORDER BY ts, id", "tt", true},
	{"SELECT id, ts FROM X WHERE ts = ?1", "t", false},
	{"SELECT id FROM X WHERE ts > ?1", "t", false},
	{"SELECT id FROM X WHERE ts <= ?1 AND ts > ?2", "tt", false},
	{"SELECT * FROM X WHERE rowid = ?1", "i", false},
	{"SELECT * FROM X WHERE id = ?1", "i", false},
	{"SELECT id, name FROM X WHERE id BETWEEN ?1 AND ?2", "ii", false},
	{"SELECT id FROM X WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid DESC", "ii", true},
	{"SELECT id FROM X WHERE id >= ?1 AND ts < ?2", "it", false},
	{"SELECT id FROM X WHERE id IN (?1, ?2, ?3)", "iii", false},
	{"SELECT id FROM X WHERE ts IN (?1, ?2)", "tt", false},
	{"SELECT id FROM X WHERE name = 'g_run' AND ts > ?1", "t", false},
	{"SELECT id, name FROM X WHERE name IN ('steal', '', 'nothing') AND id < ?1", "i", false},
	{"SELECT id FROM X WHERE name = ''", "", false},
	{"SELECT id FROM X WHERE name IS NULL", "", false},
	{"SELECT id FROM X WHERE name IS NOT NULL AND p = ?1", "p", false},
	{"SELECT id, g FROM X WHERE g = ?1", "g", false},
	{"SELECT id FROM X WHERE g IN (?1, ?2) AND name = 'g_stop'", "gg", false},
	{"SELECT id FROM X WHERE g > ?1 AND g <= ?2", "gg", false},
	{"SELECT id FROM X WHERE p = -1 AND g IS NULL", "", false},
	{"SELECT id FROM X WHERE a1 = 9223372036854775807 OR a1 = -9223372036854775808", "", false},
	{"SELECT id, a1 FROM X WHERE a1 >= ?1", "t", false},
	{"SELECT id FROM X WHERE a1 = NULL OR ts > NULL OR name = NULL", "", false},
	{"SELECT id FROM X WHERE a1 IS NULL AND extra IS NOT NULL", "", false},
	{"SELECT id FROM X WHERE p = '2'", "", false},
	{"SELECT id FROM X WHERE name = 5 OR p = 2.0 OR ts < 1000100.5", "", false},
	{"SELECT id FROM X WHERE name = 'G_RUN' COLLATE NOCASE", "", false},
	{"SELECT id FROM X WHERE p IN (1, NULL, 3)", "", false},
	{"SELECT ts FROM X WHERE ts <= ?1 ORDER BY ts DESC LIMIT ?2", "tn", true},
	{"SELECT id, ts FROM X WHERE ts <= ?1 ORDER BY ts DESC, id DESC LIMIT ?2", "tn", true},
	{"SELECT id FROM X WHERE ts > ?1 ORDER BY ts, id LIMIT ?2", "tn", true},
	{"SELECT id FROM X ORDER BY id DESC LIMIT ?1", "n", true},
	{"SELECT id, p FROM X WHERE p = ?1 ORDER BY ts DESC, id DESC LIMIT ?2", "pn", true},
	{"SELECT id FROM X ORDER BY ts DESC, p LIMIT ?1", "n", false},
	{"SELECT count(*), total(a1), min(ts), max(ts), count(extra) FROM X", "", true},
	{"SELECT name, count(*) FROM X GROUP BY name", "", false},
	{"SELECT (SELECT max(ts) FROM X WHERE ts <= ?1), (SELECT min(id) FROM X WHERE ts >= ?1)",
	 "t", true},
	{"SELECT c.id, (SELECT x2.id FROM X x2 WHERE x2.ts <= c.ts AND x2.name = 'g_run' "
	 "ORDER BY x2.ts DESC, x2.id DESC LIMIT 1) FROM plain c WHERE c.id % 53 = 0",
	 "", false},
	{"SELECT c.id FROM plain c JOIN X x2 ON x2.ts = c.ts AND x2.id = c.id + 1", "", false},
};

/* Every query, with rounds of random constants, on t and on plain. */
/* Every query of queries, rounds times with random constants, on t and on
 * plain: the same answers. Returns the comparisons made. */
static int compare_queries(sqlite3 *db, int rounds)
{
	int compared = 0;

	for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
		for (int round = 0; round < rounds; round++) {
			int64_t par[4];
			int npar = (int)strlen(queries[q].par);
			for (int k = 0; k < npar; k++) {
				switch (queries[q].par[k]) {
				case 'i':
					par[k] = near(0);
					break;
				case 't':
					par[k] = near(1);
					break;
				case 'g':
					par[k] = near(4);
					break;
				case 'p':
					par[k] = (int64_t)(rnd() % 6) - 2;
					break;
				default:
					par[k] = (int64_t)(rnd() % 20);
				}
			}
			char *a = answer(db, queries[q].sql, "t", par, npar, queries[q].ordered);
			char *b = answer(db, queries[q].sql, "plain", par, npar, queries[q].ordered);
			if (strcmp(a, b) != 0)
				wsrtest_fail(__FILE__, __LINE__,
					     "%s (%lld, %lld): the vtab gives\n%.600s\nthe table\n%.600s",
					     queries[q].sql, npar > 0 ? (long long)par[0] : 0,
					     npar > 1 ? (long long)par[1] : 0, a, b);
			ASSERT(strncmp(a, "error", 5) != 0);
			compared++;
			free(a);
			free(b);
			if (npar == 0)
				break;
		}
	}
	return compared;
}

WSR_TEST_TIMEOUT(blockvtab_answers_as_a_table, 120)
{
	sqlite3 *db = make_db(0x243f6a8885a308d3ull, MAXROWS);

	ASSERT(compare_queries(db, 40) > 500);
	sqlite3_close(db);
	unlink(dbpath);
	sb_free(&text);
}

/* Blocks added on a connection that has read the table (as ingestion's
 * does): its zone maps, the decoded keys and the filtered columns' zones
 * grow with them, and every answer still is the table's. */
WSR_TEST_TIMEOUT(blockvtab_sees_blocks_added_later, 120)
{
	sqlite3 *db = make_db(0x13198a2e03707344ull, MAXROWS);

	exec(db, "CREATE TEMP TABLE kb AS SELECT * FROM t_block WHERE id >= 5;"
		 "CREATE TEMP TABLE kz AS SELECT * FROM t_zone WHERE id >= 5;"
		 "CREATE TEMP TABLE kp AS SELECT * FROM plain;"
		 "DELETE FROM t_block WHERE id >= 5; DELETE FROM t_zone WHERE id >= 5;");
	/* plain keeps the rows of blocks 0-4 only */
	exec(db, "DELETE FROM plain WHERE id NOT IN (SELECT id FROM t)");
	ASSERT(compare_queries(db, 8) > 100);
	char *nb = answer(db, "SELECT max(id) FROM X", "kb", NULL, 0, true);
	int last = atoi(strchr(nb, ':') + 1);
	free(nb);
	ASSERT_GT(last, 20);
	for (int k = 5; k <= last; k += 7) {
		char sql[512];
		snprintf(sql, sizeof(sql),
			 "INSERT INTO t_block SELECT * FROM kb WHERE id >= %d AND id < %d;"
			 "INSERT INTO t_zone SELECT * FROM kz WHERE id >= %d AND id < %d;"
			 "INSERT INTO plain SELECT * FROM kp WHERE id NOT IN (SELECT id FROM plain) "
			 "AND id IN (SELECT id FROM t)",
			 k, k + 7, k, k + 7);
		exec(db, sql);
		ASSERT(compare_queries(db, 2) > 30);
	}
	char *a = answer(db, "SELECT count(*) FROM X", "t", NULL, 0, true);
	ASSERT_STREQ(a, "1:6000|\n");
	free(a);
	sqlite3_close(db);
	unlink(dbpath);
	sb_free(&text);
}

static void plan_has(sqlite3 *db, const char *sql, const char *want, const char *unwanted)
{
	char q[512];
	struct sbuf plan;
	sqlite3_stmt *st = NULL;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	ASSERT_EQ(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	sb_init(&plan);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sb_puts(&plan, (const char *)sqlite3_column_text(st, 3));
		sb_putc(&plan, '\n');
	}
	sqlite3_finalize(st);
	if (plan.buf == NULL || strstr(plan.buf, want) == NULL ||
	    (unwanted != NULL && strstr(plan.buf, unwanted) != NULL))
		wsrtest_fail(__FILE__, __LINE__, "%s: plan\n%s", sql,
			     plan.buf != NULL ? plan.buf : "");
	sb_free(&plan);
}

/* The planner takes the module's paths: ts bounds, the storage order, rowid. */
WSR_TEST(blockvtab_plans)
{
	sqlite3 *db = make_db(7, 3000);

	plan_has(db, "SELECT ts FROM t WHERE ts <= 5 ORDER BY ts DESC LIMIT 1", "VIRTUAL TABLE",
		 "TEMP B-TREE");
	plan_has(db, "SELECT ts FROM t ORDER BY id", "VIRTUAL TABLE", "TEMP B-TREE");
	plan_has(db, "SELECT ts FROM t ORDER BY ts, p", "TEMP B-TREE", NULL);
	plan_has(db, "SELECT ts FROM t WHERE ts > 3 AND ts < 9", "1,3;1,1;", NULL);
	plan_has(db, "SELECT ts FROM t WHERE rowid = 3", "0,0;", NULL);
	plan_has(db, "SELECT ts FROM t WHERE name IN ('a', 'b')", "2,7;", NULL);
	/* a join probes the table by ts rather than scanning it per row */
	plan_has(db, "SELECT 1 FROM plain c JOIN t ON t.ts = c.ts", "SCAN c", NULL);
	sqlite3_close(db);
	unlink(dbpath);
	sb_free(&text);
}

/* t's integer columns through blockread (blockread.h), in the order of read_cols. */
static const char *const read_cols[] = {"id", "ts", "p", "g", "a1"};
static const int read_col_of[] = {0, 1, 3, 4, 6}; /* their index in v, isnull */

/*
 * Reads t's blocks [b0, b1) (b1 0: all) with blockread on a fresh connection
 * and checks every value against the rows made (row0: the first block's
 * first row, from *starts when given: each block's first row); NULL, or the
 * error as text. *starts, when not NULL and *starts NULL, gets the blocks'
 * first rows (one more entry: the end).
 */
static char *read_ints(int **starts, int b0, int b1)
{
	sqlite3 *db = open_db(false);
	struct blockread *br = NULL;
	struct blockread_block blk;
	struct wsr_err err;
	int rc, row = starts != NULL && *starts != NULL ? (*starts)[b0] : 0;
	int *st = NULL, nst = 0;

	err_init(&err);
	if (blockread_open(db, "t", read_cols, 5, &br, &err) < 0)
		goto fail;
	if (b1 > 0)
		blockread_range(br, (uint32_t)b0, (uint32_t)b1);
	else
		b1 = (int)blockread_nblocks(br);
	if (starts != NULL && *starts == NULL)
		st = calloc(blockread_nblocks(br) + 1, sizeof(*st));
	while ((rc = blockread_next(br, &blk, &err)) > 0) {
		ASSERT_EQ((int)blk.no, b0++);
		if (st != NULL)
			st[nst++] = row;
		for (uint32_t r = 0; r < blk.nrows; r++, row++) {
			ASSERT_LT(row, nrows);
			for (int k = 0; k < 5; k++) {
				int c = read_col_of[k];
				ASSERT_EQ(blk.null[k][r] != 0, isnull[c][row] != 0);
				ASSERT_EQ(blk.v[k][r], isnull[c][row] ? 0 : v[c][row]);
			}
		}
	}
	if (rc < 0)
		goto fail;
	ASSERT_EQ(b0, b1);
	if (st != NULL) {
		ASSERT_EQ(row, nrows);
		st[nst] = row;
		*starts = st;
	}
	blockread_close(br);
	sqlite3_close(db);
	return NULL;
fail:
	free(st);
	blockread_close(br);
	sqlite3_close(db);
	/* the innermost cause: the module's own message */
	return strdup(err.msg[0]);
}

/* Rewrites block (or zone, when zone) b as data, on a fresh connection, and
 * returns the error of a full scan there. */
/* The error of sql (one row expected) on a fresh connection, NULL if none;
 * an error must be SQLITE_CORRUPT. */
static char *scan_error(const char *sql)
{
	sqlite3 *db = open_db(true);
	sqlite3_stmt *st = NULL;
	ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	int rc = sqlite3_step(st);
	char *msg = rc == SQLITE_ROW ? NULL : strdup(sqlite3_errmsg(db));
	int ext = sqlite3_extended_errcode(db);
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (msg != NULL)
		ASSERT_EQ(ext & 0xff, SQLITE_CORRUPT);
	return msg;
}

static char *scan_after(const char *table, int b, const void *data, int n)
{
	sqlite3 *db = open_db(false);
	sqlite3_stmt *st = NULL;
	char sql[128];
	snprintf(sql, sizeof(sql), "UPDATE %s SET %s = ?1 WHERE id = %d", table,
		 strcmp(table, "t_zone") == 0 ? "zone" : "data", b);
	ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, data, n, SQLITE_TRANSIENT);
	ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	/* every column: a column no statement reads is not decoded, nor checked */
	char *msg = scan_error("SELECT count(*), total(id), total(ts), count(name), total(p), "
			       "total(g), count(extra), total(a1) FROM t");
	/* blockread fails as a statement over the same columns does, with its message */
	char *ints = scan_error("SELECT count(*), total(id), total(ts), total(p), total(g), "
				"total(a1) FROM t");
	char *direct = read_ints(NULL, 0, 0);
	if (ints == NULL || direct == NULL) {
		if (ints != direct)
			wsrtest_fail(__FILE__, __LINE__, "SQL: %s; blockread: %s",
				     ints != NULL ? ints : "no error",
				     direct != NULL ? direct : "no error");
	} else {
		ASSERT_STREQ(direct, ints);
	}
	ASSERT(msg != NULL || ints == NULL);
	free(ints);
	free(direct);
	return msg;
}

static void *blob_of(const char *sql, int *n)
{
	sqlite3 *db = open_db(false);
	sqlite3_stmt *st = NULL;
	ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	*n = sqlite3_column_bytes(st, 0);
	void *p = malloc((size_t)*n + 1);
	memcpy(p, sqlite3_column_blob(st, 0), (size_t)*n);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return p;
}

WSR_TEST_TIMEOUT(blockvtab_corrupt_blocks_are_errors, 60)
{
	sqlite3 *db = make_db(99, 3000);
	int n, nz;
	sqlite3_close(db);
	uint8_t *good = blob_of("SELECT data FROM t_block WHERE id = 3", &n);
	uint8_t *zone = blob_of("SELECT zone FROM t_zone WHERE id = 3", &nz);
	uint8_t *bad = malloc((size_t)n);

	/* truncated, and bytes altered all over the blob */
	char *msg = scan_after("t_block", 3, good, n / 2);
	ASSERT(msg != NULL && strstr(msg, "t_block 3") != NULL);
	free(msg);
	for (int i = 0; i < n; i += 1 + n / 40) {
		memcpy(bad, good, (size_t)n);
		bad[i] ^= 0x41;
		msg = scan_after("t_block", 3, bad, n);
		if (msg == NULL || strstr(msg, "t_block 3") == NULL)
			wsrtest_fail(__FILE__, __LINE__, "byte %d of %d altered: %s", i, n,
				     msg != NULL ? msg : "no error");
		free(msg);
	}
	ASSERT(scan_after("t_block", 3, good, n) == NULL);
	/* a zone map truncated, or claiming another row count */
	msg = scan_after("t_zone", 3, zone, nz - 1);
	ASSERT(msg != NULL && strstr(msg, "t_zone: block 3") != NULL);
	free(msg);
	uint8_t *z2 = malloc((size_t)nz);
	memcpy(z2, zone, (size_t)nz);
	z2[nz / 2] ^= 1; /* a min, max or mask: the checksum tells */
	msg = scan_after("t_zone", 3, z2, nz);
	ASSERT(msg != NULL && strstr(msg, "t_zone: block 3: zone map: checksum mismatch") != NULL);
	free(msg);
	ASSERT(scan_after("t_zone", 3, zone, nz) == NULL);
	/* blocks out of order: block 4's rows where block 3's are */
	int n4;
	uint8_t *b4 = blob_of("SELECT data FROM t_block WHERE id = 5", &n4);
	msg = scan_after("t_block", 3, b4, n4);
	ASSERT(msg != NULL && strstr(msg, "t_block 3") != NULL);
	free(msg);
	/* block 3's rows with its ts reversed: the zone map holds, the order does not */
	{
		int *starts = NULL;
		ASSERT(scan_after("t_block", 3, good, n) == NULL);
		ASSERT(read_ints(&starts, 0, 0) == NULL);
		int r0 = starts[3], k = starts[4] - starts[3];
		ASSERT_GT(k, 1);
		int64_t ts[MAXROWS];
		for (int i = 0; i < k; i++)
			ts[i] = v[1][r0 + k - 1 - i];
		ASSERT_NE(ts[0], ts[k - 1]);
		struct cb_col_in cols[NCOLS];
		for (int c = 0; c < NCOLS; c++)
			cols[c] = (struct cb_col_in){types[c], isnull[c] + r0,
						     c == 1 ? ts : v[c] + r0, len[c] + r0,
						     text.buf, 0, 0};
		struct sbuf b3;
		sb_init(&b3);
		ASSERT_EQ(cb_encode(cols, NCOLS, (uint32_t)k, &b3, NULL), 0);
		msg = scan_after("t_block", 3, b3.buf, (int)b3.len);
		ASSERT(msg != NULL && strstr(msg, "t_block 3: column ts out of order at row") != NULL);
		free(msg);
		sb_free(&b3);
		free(starts);
	}
	/* a missing block */
	db = open_db(false);
	exec(db, "DELETE FROM t_block WHERE id = 3");
	sqlite3_close(db);
	uint8_t *b5 = blob_of("SELECT data FROM t_block WHERE id = 4", &n4);
	msg = scan_after("t_block", 4, b5, n4);
	ASSERT(msg != NULL && strstr(msg, "t_block 3: missing") != NULL);
	free(msg);
	free(b5);
	free(good);
	free(zone);
	free(bad);
	free(z2);
	free(b4);
	unlink(dbpath);
	sb_free(&text);
}

/* blockread gives the rows of the table, in order, whole and by block ranges;
 * what it cannot read is an error that says why. */
WSR_TEST_TIMEOUT(blockread_reads_the_rows_of_the_table, 60)
{
	for (uint64_t seed = 11; seed < 14; seed++) {
		sqlite3 *db = make_db(seed, 5000);
		sqlite3_close(db);
		int *starts = NULL;
		ASSERT(read_ints(&starts, 0, 0) == NULL);
		db = open_db(false);
		sqlite3_stmt *st = NULL;
		ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM t_block", -1, &st, NULL),
			  SQLITE_OK);
		ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
		int nb = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(db);
		ASSERT_GT(nb, 10);
		for (int k = 0; k < 40; k++) {
			int b0 = (int)(rnd() % (uint64_t)nb), b1 = b0 + 1 + (int)(rnd() % 20);
			if (b1 > nb)
				b1 = nb;
			ASSERT(read_ints(&starts, b0, b1) == NULL);
		}
		free(starts);
		unlink(dbpath);
		sb_free(&text);
	}
	/* a TEXT column, a table of another kind, no table */
	sqlite3 *db = make_db(5, 100);
	struct blockread *br = NULL;
	struct wsr_err err;
	char msg[WSR_ERR_LEN * 4];
	static const char *const text_col[] = {"ts", "name"};
	err_init(&err);
	ASSERT_EQ(blockread_open(db, "t", text_col, 2, &br, &err), -1);
	err_format(&err, msg, sizeof(msg));
	ASSERT(strstr(msg, "t has no INTEGER column name") != NULL);
	err_init(&err);
	ASSERT_EQ(blockread_open(db, "plain", text_col, 1, &br, &err), -1);
	err_format(&err, msg, sizeof(msg));
	ASSERT(strstr(msg, "plain: not a wsr_blocks table") != NULL);
	err_init(&err);
	ASSERT_EQ(blockread_open(db, "nosuch", text_col, 1, &br, &err), -1);
	err_format(&err, msg, sizeof(msg));
	ASSERT(strstr(msg, "nosuch: no such table") != NULL);
	ASSERT(br == NULL);
	sqlite3_close(db);
	unlink(dbpath);
	sb_free(&text);
}

WSR_TEST(blockvtab_read_only_and_module_required)
{
	sqlite3 *db = make_db(5, 100);
	char *msg = NULL;

	ASSERT(sqlite3_exec(db, "INSERT INTO t (id, ts) VALUES (100000, 5)", NULL, NULL, &msg) !=
	       SQLITE_OK);
	ASSERT(msg != NULL && strstr(msg, "may not be modified") != NULL);
	sqlite3_free(msg);
	sqlite3_close(db);
	db = open_db(false);
	exec(db, "SELECT count(*) FROM plain");
	ASSERT(sqlite3_exec(db, "SELECT count(*) FROM t", NULL, NULL, &msg) != SQLITE_OK);
	ASSERT(msg != NULL && strstr(msg, "no such module: wsr_blocks") != NULL);
	sqlite3_free(msg);
	sqlite3_close(db);
	unlink(dbpath);
	sb_free(&text);
}

/* group=p: blocks of one P each (like p_counters), against a plain table. */
WSR_TEST_TIMEOUT(blockvtab_groups_answer_as_a_table, 60)
{
	static const uint8_t gtypes[3] = {CB_INT, CB_INT, CB_INT};
	snprintf(dbpath, sizeof(dbpath), "/tmp/wsr-test-blockvtab-%d.db", (int)getpid());
	unlink(dbpath);
	sqlite3 *db = open_db(true);
	exec(db, "CREATE TABLE u_block (id INTEGER PRIMARY KEY, data BLOB NOT NULL);"
		 "CREATE TABLE u_zone (id INTEGER PRIMARY KEY, zone BLOB NOT NULL);"
		 "CREATE VIRTUAL TABLE u USING wsr_blocks(group=p, order=ts, p INTEGER, "
		 "ts INTEGER, runs INTEGER);"
		 "CREATE TABLE plain (p INTEGER, ts INTEGER, runs INTEGER); BEGIN");
	rng = 77;
	/* rows in time order, P by P into blocks of random sizes */
	enum { NP = 4, N = 4000 };
	static int64_t bv[NP][3][N];
	static uint8_t bn[NP][3][N];
	int nb[NP] = {0}, nblock = 0;
	sqlite3_stmt *ins = NULL, *bl = NULL, *zn = NULL;
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO plain VALUES (?, ?, ?)", -1, &ins, NULL),
		  SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO u_block VALUES (?, ?)", -1, &bl, NULL),
		  SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO u_zone VALUES (?, ?)", -1, &zn, NULL),
		  SQLITE_OK);
	int64_t ts = 100;
	for (int i = 0; i < N; i++) {
		int p = (int)(rnd() % (i < N / 2 ? NP : NP - 1)); /* P 3 stops early */
		ts += (int64_t)(rnd() % 3);
		int64_t row[3] = {p, ts, (int64_t)i};
		for (int c = 0; c < 3; c++) {
			bv[p][c][nb[p]] = row[c];
			bn[p][c][nb[p]] = 0;
			sqlite3_bind_int64(ins, c + 1, row[c]);
		}
		ASSERT_EQ(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
		nb[p]++;
		for (int q = 0; q < NP; q++) {
			bool last = i == N - 1;
			if (nb[q] == 0 || (!last && (q != p || rnd() % 40 != 0)))
				continue;
			struct cb_col_in cols[3];
			for (int c = 0; c < 3; c++)
				cols[c] = (struct cb_col_in){gtypes[c], bn[q][c], bv[q][c], NULL, NULL,
							     gtypes[c] == CB_INT && c == 2, 0};
			put_block(bl, zn, cols, 3, (uint32_t)nb[q], nblock);
			nblock++;
			nb[q] = 0;
		}
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(bl);
	sqlite3_finalize(zn);
	exec(db, "COMMIT");
	static const struct query gq[] = {
		{"SELECT * FROM X", "", false},
		{"SELECT ts, runs FROM X WHERE p = ?1 AND ts <= ?2 ORDER BY ts DESC, runs DESC LIMIT 3",
		 "pt", true},
		{"SELECT runs FROM X WHERE p = ?1 AND ts > ?2 ORDER BY ts, runs LIMIT 2", "pt", true},
		{"SELECT ts FROM X WHERE p = ?1 AND ts <= ?2 ORDER BY ts DESC LIMIT 1", "pt", true},
		{"SELECT * FROM X WHERE p = ?1", "p", false},
		{"SELECT * FROM X WHERE p IN (?1, 2) AND ts BETWEEN ?2 AND ?3", "ptt", false},
		{"SELECT * FROM X WHERE ts >= ?1 AND ts < ?2 ORDER BY ts, runs", "tt", true},
		{"SELECT p, max(runs), count(*) FROM X GROUP BY p", "", false},
		{"SELECT (SELECT max(ts) FROM X x2 WHERE x2.p = c.p AND x2.ts <= c.ts) FROM plain c "
		 "WHERE c.runs % 37 = 0",
		 "", false},
	};
	for (size_t q = 0; q < sizeof(gq) / sizeof(gq[0]); q++) {
		for (int round = 0; round < 40; round++) {
			int64_t par[4];
			int npar = (int)strlen(gq[q].par);
			for (int k = 0; k < npar; k++)
				par[k] = gq[q].par[k] == 'p' ? (int64_t)(rnd() % 6) - 1
							     : 90 + (int64_t)(rnd() % (N + 20));
			char *a = answer(db, gq[q].sql, "u", par, npar, gq[q].ordered);
			char *b = answer(db, gq[q].sql, "plain", par, npar, gq[q].ordered);
			if (strcmp(a, b) != 0)
				wsrtest_fail(__FILE__, __LINE__,
					     "%s (%lld, %lld): the vtab gives\n%.600s\nthe table\n%.600s",
					     gq[q].sql, npar > 0 ? (long long)par[0] : 0,
					     npar > 1 ? (long long)par[1] : 0, a, b);
			free(a);
			free(b);
			if (npar == 0)
				break;
		}
	}
	plan_has(db, "SELECT ts FROM u WHERE p = 1 AND ts <= 5 ORDER BY ts DESC LIMIT 1",
		 "VIRTUAL TABLE", "TEMP B-TREE");
	plan_has(db, "SELECT ts FROM u WHERE ts <= 5 ORDER BY ts DESC LIMIT 1", "TEMP B-TREE", NULL);
	sqlite3_close(db);
	unlink(dbpath);
}
