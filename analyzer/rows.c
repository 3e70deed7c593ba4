/*
 * rows.c - the only place that holds the INSERT SQL of ingestion (see
 * rows.h). Each table is a column table: the SQL column, the field of the
 * row struct it comes from, and how NULL is spelt there. The statements are
 * generated from it, so a column and its value are named once, together.
 *
 * Row batching. Each table's rows are collected as typed values and written
 * BATCH_ROWS at a time with one multi-row INSERT (one sqlite3_step per batch
 * instead of per row: about 40% less CPU per row, measured); a partial
 * batch goes out row by row at a flush. Texts are copied into the batch's
 * own arena, so a batch holds everything its INSERT binds.
 *
 * Column blocks. A table marked `block` (events) is not written row by
 * row: its rows are collected BLOCK_ROWS at a time as the row structs they
 * are (a copy each, and its texts), and the writer encodes each block
 * (colblock.c reads an integer column in the row structs, a row size
 * apart; write_block gives it the NULLs and the texts as columns), inserts
 * it as one row of NAME_block and its zone map as one row of NAME_zone,
 * block ids 0, 1, ... in the order the rows were added; the virtual table
 * NAME (blockvtab.c) serves them to SQL. A partial block goes out at a
 * flush. A grouped table (p_counters: `group` is its column p) fills one
 * block per value, so each block holds one P's rows, in time order. Each
 * block table has BLOCK_POOL blocks besides those being filled but one:
 * the writer returns a written block to the spares, and the deriver takes
 * one for every block it hands over (waking the writer first, since it may
 * sleep until WAKE_AT batches).
 *
 * Two threads. The deriver fills each table's current batch (rows_add);
 * a full batch goes to a FIFO queue, and a writer thread binds and steps
 * it, so deriving the next rows overlaps SQLite's B-tree work on the other
 * core (the decoder child has its own process). The queue is bounded
 * (POOL batches): a deriver that gets ahead waits for a written batch, so
 * memory does not grow with the trace.
 *
 * Invariants:
 *   - Rows of one table are written in the order they were added (one
 *     writer, one FIFO), so batching is invisible in the result; nothing
 *     reads the tables during ingestion.
 *   - A batch owns its values and its text arena until it is written; then
 *     it is a spare, reused.
 *   - The connection is used by the writer only while it holds a batch
 *     (busy); rows_flush() returns once the queue is empty and the writer
 *     idle, and the mutex hand-off orders every use of the connection.
 *   - After the writer's first failure nothing more is written; the next
 *     rows_add() or rows_flush() reports that failure.
 * Concurrency: rows_add()/rows_flush()/rows_destroy() from one thread; the
 *   writer thread is private. `mu` guards the queue, the spares, busy,
 *   stop, failed and errmsg; `cur` belongs to the adding thread.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "colblock.h"
#include "db.h"
#include "rows.h"

#define BATCH_ROWS 32
/* Rows per column block: a point query decodes one block (about 40 us at
 * 1024 rows of events' 20 columns), and the per-block costs (two rows, the
 * dictionary, the zone map) stay under 0.3 bytes a row. */
#define BLOCK_ROWS 1024

enum col_kind {
	C_I64, /* stored as given */
	C_OPT, /* ROW_NULL: NULL */
	C_ID,  /* negative: NULL */
	C_TEXT /* const char *, NULL: NULL */
};

/* Whether integer x of a column of that kind stands for NULL. */
static inline bool int_is_null(uint8_t kind, int64_t x)
{
	return (kind == C_OPT && x == ROW_NULL) || (kind == C_ID && x < 0);
}

struct col {
	const char *name;
	size_t off;
	uint8_t kind;
	bool set; /* block tables: the zone maps hold a set filter of the values */
};

struct table {
	const char *name;
	bool block;         /* written as column blocks (NAME_block, NAME_zone) */
	size_t size;        /* block tables: sizeof the row struct */
	int group;          /* block tables: blocks per value of this column (-1: none) */
	const char *verb;   /* "INSERT", "INSERT OR REPLACE" */
	const char *suffix; /* after the VALUES tuple: an upsert clause (not batched) */
	const struct col *cols;
	int ncols;
};

#define COL(st, f, k)                  \
 {                                     \
#  f, offsetof(struct st, f), k, false \
 }
/* A column of a block table looked up by value (a G id): with a set filter. */
#define COL_SET(st, f, k)             \
 {                                    \
#  f, offsetof(struct st, f), k, true \
 }
#define TABLE(n, verb, sfx, c)                                   \
 {                                                               \
  n, false, 0, -1, verb, sfx, c, (int)(sizeof(c) / sizeof(c[0])) \
 }
#define BLOCK_TABLE(n, st, group, c)                                                \
 {                                                                                  \
  n, true, sizeof(struct st), group, "INSERT", NULL, c, (int)(sizeof(c) / sizeof(c[0])) \
 }

static const struct col cols_event[] = {
	COL(row_event, id, C_I64),     COL(row_event, ts, C_I64),  COL(row_event, name, C_TEXT),
	COL(row_event, cpu, C_OPT),    COL(row_event, tid, C_OPT), COL(row_event, vpid, C_OPT),
	COL(row_event, p, C_OPT),      COL(row_event, m, C_OPT),   COL(row_event, g, C_OPT),
	COL(row_event, a1, C_OPT),     COL(row_event, a2, C_OPT),  COL(row_event, a3, C_OPT),
	COL(row_event, extra, C_TEXT),
	COL(row_event, idle_ps, C_OPT),     COL(row_event, spinning_ms, C_OPT),
	COL(row_event, idle_ms, C_OPT),     COL(row_event, threads, C_OPT),
	COL(row_event, running_gs, C_OPT),  COL(row_event, runnable_gs, C_OPT),
	COL(row_event, global_len, C_OPT),
};
static const struct col cols_g_interval[] = {
	COL_SET(row_g_interval, g, C_I64),    COL(row_g_interval, state, C_I64),
	COL(row_g_interval, start_ts, C_I64), COL(row_g_interval, dur, C_I64),
	COL(row_g_interval, p, C_ID),         COL(row_g_interval, m, C_ID),
	COL(row_g_interval, reason, C_ID),    COL(row_g_interval, source, C_ID),
	COL(row_g_interval, cut, C_I64),      COL(row_g_interval, end_ts, C_I64),
};
static const struct col cols_p_state[] = {
	COL(row_p_state, p, C_I64),        COL(row_p_state, state, C_TEXT),
	COL(row_p_state, start_ts, C_I64), COL(row_p_state, end_ts, C_I64),
	COL(row_p_state, m, C_ID),         COL(row_p_state, cut, C_I64),
};
static const struct col cols_m_state[] = {
	COL(row_m_state, m, C_I64),        COL(row_m_state, state, C_TEXT),
	COL(row_m_state, start_ts, C_I64), COL(row_m_state, end_ts, C_I64),
	COL(row_m_state, p, C_ID),         COL(row_m_state, cut, C_I64),
};
static const struct col cols_p_counters[] = {
	COL(row_p_counters, p, C_I64),          COL(row_p_counters, ts, C_I64),
	COL(row_p_counters, runq, C_I64),       COL(row_p_counters, runnext, C_I64),
	COL(row_p_counters, schedticks, C_I64), COL(row_p_counters, runs, C_I64),
};
static const struct col cols_steal[] = {
	COL(row_steal, ts, C_I64), COL(row_steal, thief, C_I64), COL(row_steal, victim, C_I64),
	COL(row_steal, m, C_I64),  COL(row_steal, n, C_I64),     COL(row_steal, runnext, C_I64),
};
static const struct col cols_queue_op[] = {
	COL(row_queue_op, ts, C_I64),         COL(row_queue_op, p, C_I64),
	COL(row_queue_op, m, C_I64),          COL(row_queue_op, n, C_I64),
	COL(row_queue_op, global_len, C_I64),
};
static const struct col cols_g[] = {
	COL_SET(row_g, g, C_I64),       COL(row_g, parent, C_OPT),
	COL(row_g, created_ts, C_I64),  COL(row_g, first_run, C_OPT),
	COL(row_g, ended, C_OPT),       COL(row_g, create_p, C_ID),
	COL(row_g, runs, C_I64),        COL(row_g, stolen, C_I64),
	COL(row_g, run_ns, C_I64),      COL(row_g, runnable_ns, C_I64),
	COL(row_g, waiting_ns, C_I64),  COL(row_g, syscall_ns, C_I64),
};
static const struct col cols_discarded[] = {
	COL(row_discarded, kind, C_TEXT),  COL(row_discarded, stream, C_TEXT),
	COL(row_discarded, cpu, C_ID),     COL(row_discarded, begin_ts, C_OPT),
	COL(row_discarded, end_ts, C_OPT), COL(row_discarded, count, C_OPT),
};
static const struct col cols_p[] = {
	COL(row_p, p, C_I64),      COL(row_p, schedticks, C_I64),   COL(row_p, syscalls, C_I64),
	COL(row_p, run_ns, C_I64), COL(row_p, runnext_runs, C_I64), COL(row_p, runs, C_I64),
};
static const struct col cols_m[] = {
	COL(row_m, m, C_I64),
	COL(row_m, tid, C_OPT),
	COL(row_m, created_ts, C_I64),
	COL(row_m, creator, C_OPT),
};
static const struct col cols_event_count[] = {
	COL(row_event_count, name, C_TEXT),
	COL(row_event_count, n, C_I64),
};
static const struct col cols_sched_field[] = {
	COL(row_sched_field, snap_id, C_I64), COL(row_sched_field, snap_ts, C_I64),
	COL(row_sched_field, field, C_TEXT),  COL(row_sched_field, p, C_OPT),
	COL(row_sched_field, rt, C_I64),      COL(row_sched_field, recon, C_I64),
	COL(row_sched_field, read_b, C_I64),  COL(row_sched_field, read_e, C_I64),
	COL(row_sched_field, racing, C_TEXT), COL(row_sched_field, explained, C_OPT),
};

static const struct col cols_dag_strand[] = {
	COL(row_dag_strand, id, C_I64),      COL(row_dag_strand, g, C_I64),
	COL(row_dag_strand, seg, C_I64),     COL(row_dag_strand, start_ts, C_I64),
	COL(row_dag_strand, end_ts, C_I64),  COL(row_dag_strand, ends, C_TEXT),
	COL(row_dag_strand, span_ns, C_I64), COL(row_dag_strand, burdened_ns, C_I64),
	COL(row_dag_strand, pred, C_OPT),    COL(row_dag_strand, critical, C_I64),
};
static const struct col cols_dag_edge[] = {
	COL(row_dag_edge, src, C_I64),      COL(row_dag_edge, dst, C_I64),
	COL(row_dag_edge, kind, C_TEXT),    COL(row_dag_edge, ts, C_I64),
	COL(row_dag_edge, delay_ns, C_I64), COL(row_dag_edge, burden_ns, C_I64),
	COL(row_dag_edge, stolen, C_I64),   COL(row_dag_edge, relation, C_TEXT),
};

static const struct table tables[ROWS_TABLES] = {
	[ROWS_EVENTS] = BLOCK_TABLE("events", row_event, -1, cols_event),
	/* by G: the set filters of g; by time: end_ts, its order column */
	[ROWS_G_INTERVAL] = BLOCK_TABLE("g_interval", row_g_interval, -1, cols_g_interval),
	[ROWS_P_STATE] = TABLE("p_state", "INSERT", NULL, cols_p_state),
	[ROWS_M_STATE] = TABLE("m_state", "INSERT", NULL, cols_m_state),
	/* one block stream per P (column 0, p): the readers go by (p, ts) */
	[ROWS_P_COUNTERS] = BLOCK_TABLE("p_counters", row_p_counters, 0, cols_p_counters),
	[ROWS_STEALS] = TABLE("steals", "INSERT", NULL, cols_steal),
	[ROWS_SPILLS] = TABLE("spills", "INSERT", NULL, cols_queue_op),
	[ROWS_GLOBAL_GETS] = TABLE("global_gets", "INSERT", NULL, cols_queue_op),
	/* in the order the Gs end; by G: the set filters of g */
	[ROWS_G] = BLOCK_TABLE("g_info", row_g, -1, cols_g),
	[ROWS_DISCARDED] = TABLE("discarded", "INSERT", NULL, cols_discarded),
	[ROWS_P] = TABLE("p", "INSERT", NULL, cols_p),
	[ROWS_M] = TABLE("m", "INSERT", NULL, cols_m),
	[ROWS_EVENT_COUNTS] =
		TABLE("event_counts", "INSERT",
		      " ON CONFLICT (name) DO UPDATE SET n = n + excluded.n", cols_event_count),
	[ROWS_SCHED_FIELDS] = TABLE("schedtrace_fields", "INSERT", NULL, cols_sched_field),
	[ROWS_DAG_STRAND] = TABLE("dag_strand", "INSERT", NULL, cols_dag_strand),
	[ROWS_DAG_EDGE] = TABLE("dag_edge", "INSERT", NULL, cols_dag_edge),
};

enum vtype {
	V_NULL,
	V_INT,
	V_TEXT /* i: offset in the arena, len: bytes */
};

struct val {
	int64_t i;
	uint32_t len;
	uint8_t t;
};

#define MAX_COLS 20

/* Up to BLOCK_ROWS rows of a block table as the deriver gave them (the
 * table's row structs, one after the other), each text field replaced by
 * its offset in `text` plus one (0: NULL), where it is copied with its NUL.
 * The writer encodes them (write_block): the deriver's thread is the pipe's
 * longest, the writer's has room. */
struct block_build {
	uint32_t nrows;
	char *rows;
	struct sbuf text;
};

/* Groups (P ids) a grouped block table may have. */
#define MAX_GROUPS 4096

/* Up to BATCH_ROWS rows of one table and the texts they bind, or (blk not
 * NULL) a block of a block table. */
struct batch {
	int table, nrows;
	struct block_build *blk;
	struct val vals[BATCH_ROWS * MAX_COLS];
	char *arena;
	size_t alen, acap;
};

/* Block tables: one inserts into NAME_block, many into NAME_zone. */
struct stmts {
	sqlite3_stmt *one, *many; /* many: NULL when the table is not batched */
};

/* Batches in flight: the filled ones wait in `queue` for the writer, the
 * written ones go back to `spare`. POOL bounds the memory whatever the
 * trace (about 8 KiB and a text arena each). */
#define POOL 64
/* A sleeping writer is woken when this many batches wait (or at a flush),
 * and an adder waiting for a spare when this many are free (or the queue
 * is empty): one wake-up per WAKE_AT batches either way, not per batch. */
#define WAKE_AT 16
/* Blocks being filled or in flight, per block table: the writer encodes one
 * while the deriver fills another. */
#define BLOCK_POOL 4

struct rows {
	sqlite3 *db;
	struct stmts st[ROWS_TABLES];
	struct batch *cur[ROWS_TABLES]; /* being filled (the adding thread only) */

	pthread_mutex_t mu;        /* guards everything below */
	pthread_cond_t work, room; /* queued or stopping; a batch written */
	struct batch *queue[POOL];
	int qhead, qlen;
	struct batch *spare[POOL];
	int nspare;
	bool busy, stop, failed;
	/* who sleeps on a condition: only they are signalled (a futex wake
	 * per batch costs more than the batch saves) */
	bool writer_waits, adder_waits;
	char errmsg[512];
	struct block_build *bspare[ROWS_TABLES][BLOCK_POOL]; /* under mu */
	int nbspare[ROWS_TABLES];
	struct block_build *build[ROWS_TABLES]; /* block tables: being filled (adder) */
	/* block tables: their text columns, the ones add_block_row() copies */
	uint8_t text_cols[ROWS_TABLES][MAX_COLS];
	int ntext[ROWS_TABLES];
	struct block_build **gbuild[ROWS_TABLES]; /* grouped: being filled, per value */
	int ngbuild[ROWS_TABLES];
	int64_t nblocks[ROWS_TABLES];           /* blocks written (the writer) */
	struct sbuf blob, zone;                 /* the writer's encoding buffers */
	/* the writer's columns of a block, column c's at c * BLOCK_ROWS: its
	 * NULLs, and a text column's offsets (cv) and lengths */
	int64_t cv[MAX_COLS * BLOCK_ROWS];
	uint32_t clen[MAX_COLS * BLOCK_ROWS];
	uint8_t cnull[MAX_COLS * BLOCK_ROWS];
	pthread_t writer;
	bool started;
	struct batch *all[POOL];
	int nall;
};

/* "VERB INTO t (c1, ...) VALUES (?, ...)" with the tuple `reps` times. */
static char *table_sql(const struct table *t, int reps)
{
	size_t cap = 64 + strlen(t->name) + strlen(t->verb) +
		     (t->suffix != NULL ? strlen(t->suffix) : 0) + (size_t)reps * 4;
	for (int c = 0; c < t->ncols; c++)
		cap += strlen(t->cols[c].name) + 2 + (size_t)reps * 3;
	char *sql = malloc(cap);
	size_t off = 0;

	if (sql == NULL)
		return NULL;
#define PUT(s)                \
 do {                         \
  size_t l_ = strlen(s);      \
  memcpy(sql + off, (s), l_); \
  off += l_;                  \
 } while (0)
	PUT(t->verb);
	PUT(" INTO ");
	PUT(t->name);
	PUT(" (");
	for (int c = 0; c < t->ncols; c++) {
		if (c > 0)
			PUT(", ");
		PUT(t->cols[c].name);
	}
	PUT(") VALUES ");
	for (int r = 0; r < reps; r++) {
		PUT(r > 0 ? ", (" : "(");
		for (int c = 0; c < t->ncols; c++)
			PUT(c > 0 ? ", ?" : "?");
		PUT(")");
	}
	if (t->suffix != NULL)
		PUT(t->suffix);
#undef PUT
	sql[off] = '\0';
	return sql;
}

static void bind_vals(sqlite3_stmt *st, const struct batch *b, const struct val *v, int n)
{
	for (int i = 0; i < n; i++) {
		switch (v[i].t) {
		case V_INT:
			sqlite3_bind_int64(st, i + 1, v[i].i);
			break;
		case V_TEXT:
			/* "" stays a text (the arena may still be unallocated) */
			sqlite3_bind_text(st, i + 1, v[i].len > 0 ? b->arena + v[i].i : "",
					  (int)v[i].len, SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(st, i + 1);
		}
	}
}

/* The NULLs of rows at, at + size, ... (n of them) of an integer column of
 * that kind into null, unrolled 4 times (a quarter of the loop's work);
 * whether some row is NULL. */
static inline uint8_t int_nulls(const char *at, size_t size, uint32_t n, uint8_t kind,
				uint8_t *null)
{
	uint8_t any = 0;

#pragma GCC unroll 4
	for (uint32_t r = 0; r < n; r++, at += size) {
		int64_t x;
		memcpy(&x, at, sizeof(x));
		null[r] = int_is_null(kind, x);
		any |= null[r];
	}
	return any;
}

/* Column cl of block bb as cb_encode() takes it: an integer column where
 * the rows have it (stride: the row size), with its NULLs in null when it
 * has some; a text column's offsets and lengths in v and len (BLOCK_ROWS
 * entries each). */
static struct cb_col_in block_column(const struct block_build *bb, size_t size,
				     const struct col *cl, int64_t *v, uint8_t *null, uint32_t *len)
{
	struct cb_col_in in = {.type = CB_INT, .set = cl->set, .stride = size};
	const char *at = bb->rows + cl->off;
	uint32_t n = bb->nrows;
	uint8_t any = 0;

	switch (cl->kind) {
	case C_I64:
		break;
	case C_OPT:
		any = int_nulls(at, size, n, C_OPT, null);
		break;
	case C_ID:
		any = int_nulls(at, size, n, C_ID, null);
		break;
	default: /* C_TEXT: an offset in bb->text plus one, 0: NULL */
		in = (struct cb_col_in){.type = CB_TEXT, .v = v, .len = len, .text = bb->text.buf};
		for (uint32_t r = 0; r < n; r++, at += size) {
			int64_t x;
			memcpy(&x, at, sizeof(x));
			null[r] = x == 0;
			v[r] = x > 0 ? x - 1 : 0;
			len[r] = x > 0 ? (uint32_t)strlen(bb->text.buf + v[r]) : 0;
			any |= null[r];
		}
	}
	if (in.type == CB_INT)
		in.v = (const int64_t *)(const void *)(bb->rows + cl->off);
	in.null = any ? null : NULL;
	return in;
}

/* Encodes block bb of table k and inserts it and its zone map (writer). */
static int write_block(struct rows *rw, int k, const struct block_build *bb)
{
	const struct table *t = &tables[k];
	const struct stmts *st = &rw->st[k];
	struct cb_col_in cols[MAX_COLS];
	int rc;

	for (int c = 0; c < t->ncols; c++)
		cols[c] = block_column(bb, t->size, &t->cols[c], rw->cv + (size_t)c * BLOCK_ROWS,
				       rw->cnull + (size_t)c * BLOCK_ROWS,
				       rw->clen + (size_t)c * BLOCK_ROWS);
	rw->blob.len = 0;
	rw->zone.len = 0;
	if (cb_encode(cols, (uint32_t)t->ncols, bb->nrows, &rw->blob, &rw->zone) < 0)
		return SQLITE_NOMEM;
	sqlite3_bind_int64(st->one, 1, rw->nblocks[k]);
	sqlite3_bind_blob(st->one, 2, rw->blob.buf, (int)rw->blob.len, SQLITE_STATIC);
	rc = sqlite3_step(st->one);
	sqlite3_reset(st->one);
	if (rc != SQLITE_DONE)
		return rc;
	sqlite3_bind_int64(st->many, 1, rw->nblocks[k]);
	sqlite3_bind_blob(st->many, 2, rw->zone.buf, (int)rw->zone.len, SQLITE_STATIC);
	rc = sqlite3_step(st->many);
	sqlite3_reset(st->many);
	if (rc != SQLITE_DONE)
		return rc;
	rw->nblocks[k]++;
	return SQLITE_DONE;
}

/* Writes batch b (writer thread); 0, or the failing SQLite rc. */
static int write_batch(struct rows *rw, const struct batch *b)
{
	const struct stmts *st = &rw->st[b->table];
	int ncols = tables[b->table].ncols, rc = SQLITE_DONE;

	if (b->blk != NULL) {
		rc = write_block(rw, b->table, b->blk);
		return rc == SQLITE_DONE ? 0 : rc;
	}

	if (st->many != NULL && b->nrows == BATCH_ROWS) {
		bind_vals(st->many, b, b->vals, ncols * BATCH_ROWS);
		rc = sqlite3_step(st->many);
		sqlite3_reset(st->many);
	} else {
		for (int r = 0; r < b->nrows && rc == SQLITE_DONE; r++) {
			bind_vals(st->one, b, b->vals + (size_t)r * (size_t)ncols, ncols);
			rc = sqlite3_step(st->one);
			sqlite3_reset(st->one);
		}
	}
	return rc == SQLITE_DONE ? 0 : rc;
}

/* The writer: takes the queued batches in order and steps their INSERTs.
 * It uses the connection only while `busy`; rows_flush() waits until the
 * queue is empty and the writer idle before its caller touches it. */
static void *writer_main(void *arg)
{
	struct rows *rw = arg;

	pthread_mutex_lock(&rw->mu);
	for (;;) {
		while (rw->qlen == 0 && !rw->stop) {
			rw->writer_waits = true;
			pthread_cond_wait(&rw->work, &rw->mu);
			rw->writer_waits = false;
		}
		if (rw->qlen == 0)
			break;
		struct batch *b = rw->queue[rw->qhead];
		rw->qhead = (rw->qhead + 1) % POOL;
		rw->qlen--;
		rw->busy = true;
		bool skip = rw->failed;
		pthread_mutex_unlock(&rw->mu);
		int rc = skip ? 0 : write_batch(rw, b);
		pthread_mutex_lock(&rw->mu);
		if (rc != 0 && !rw->failed) {
			rw->failed = true;
			snprintf(rw->errmsg, sizeof(rw->errmsg), "sqlite: inserting into %s: %s",
				 tables[b->table].name, sqlite3_errmsg(rw->db));
		}
		b->nrows = 0;
		b->alen = 0;
		bool block = b->blk != NULL;
		if (block) {
			b->blk->nrows = 0;
			b->blk->text.len = 0;
			rw->bspare[b->table][rw->nbspare[b->table]++] = b->blk;
			b->blk = NULL;
		}
		rw->spare[rw->nspare++] = b;
		rw->busy = false;
		/* (a block is worth a wake-up: the adder may wait for it) */
		if (rw->adder_waits && (rw->nspare >= WAKE_AT || rw->qlen == 0 || block))
			pthread_cond_signal(&rw->room);
	}
	pthread_mutex_unlock(&rw->mu);
	return NULL;
}

/* Under rw->mu: a copy of the writer's first error. */
static int writer_failed(const char *msg, struct wsr_err *err)
{
	err_push(err, "%s", msg[0] != '\0' ? msg : "the database writer stopped");
	return -1;
}

/* Queues table k's current batch and takes a spare one for it; for a block
 * table, also a spare block into *refill. */
static int submit(struct rows *rw, int k, struct block_build **refill, struct wsr_err *err)
{
	char msg[sizeof(rw->errmsg)];
	bool failed;

	pthread_mutex_lock(&rw->mu);
	while (rw->nspare == 0) {
		rw->adder_waits = true;
		pthread_cond_wait(&rw->room, &rw->mu);
		rw->adder_waits = false;
	}
	rw->queue[(rw->qhead + rw->qlen) % POOL] = rw->cur[k];
	rw->qlen++;
	rw->cur[k] = rw->spare[--rw->nspare];
	rw->cur[k]->table = k;
	if (refill != NULL) {
		/* and a spare block to fill (one comes back with each written block:
		 * the writer must not sleep on fewer than WAKE_AT batches meanwhile) */
		while (rw->nbspare[k] == 0) {
			if (rw->writer_waits)
				pthread_cond_signal(&rw->work);
			rw->adder_waits = true;
			pthread_cond_wait(&rw->room, &rw->mu);
			rw->adder_waits = false;
		}
		*refill = rw->bspare[k][--rw->nbspare[k]];
	}
	failed = rw->failed;
	memcpy(msg, rw->errmsg, sizeof(msg));
	if (rw->writer_waits && rw->qlen >= WAKE_AT)
		pthread_cond_signal(&rw->work);
	pthread_mutex_unlock(&rw->mu);
	return failed ? writer_failed(msg, err) : 0;
}

static int prepare_tables(struct rows *rw, struct wsr_err *err)
{
	for (int k = 0; k < ROWS_TABLES; k++) {
		const struct table *t = &tables[k];
		struct stmts *st = &rw->st[k];
		char *one, *many;
		if (t->block) {
			one = sqlite3_mprintf("INSERT INTO %s_block (id, data) VALUES (?1, ?2)",
					      t->name);
			many = sqlite3_mprintf("INSERT INTO %s_zone (id, zone) VALUES (?1, ?2)",
					       t->name);
			int rc = one == NULL || many == NULL ? -1 : 0;
			if (rc < 0)
				err_push(err, "out of memory");
			else if ((rc = db_prepare(rw->db, &st->one, one, err)) == 0)
				rc = db_prepare(rw->db, &st->many, many, err);
			sqlite3_free(one);
			sqlite3_free(many);
			if (rc < 0)
				return -1;
			continue;
		}
		one = table_sql(t, 1);
		/* not for upserts (the ON CONFLICT clause follows the tuples) */
		many = t->suffix == NULL ? table_sql(t, BATCH_ROWS) : NULL;
		int rc = -1;
		if (t->ncols > MAX_COLS || one == NULL || (t->suffix == NULL && many == NULL))
			err_push(err, "out of memory");
		else if ((rc = db_prepare(rw->db, &st->one, one, err)) == 0 && many != NULL)
			rc = db_prepare(rw->db, &st->many, many, err);
		free(one);
		free(many);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static void build_free(struct block_build *bb)
{
	if (bb == NULL)
		return;
	sb_free(&bb->text);
	free(bb->rows);
	free(bb);
}

static struct block_build *build_new(const struct table *t)
{
	struct block_build *bb = calloc(1, sizeof(*bb));

	if (bb == NULL)
		return NULL;
	sb_init(&bb->text);
	bb->rows = malloc(t->size * BLOCK_ROWS);
	if (bb->rows == NULL) {
		build_free(bb);
		return NULL;
	}
	return bb;
}

struct rows *rows_create(sqlite3 *db, struct wsr_err *err)
{
	struct rows *rw = calloc(1, sizeof(*rw));

	if (rw == NULL) {
		err_push(err, "out of memory");
		return NULL;
	}
	rw->db = db;
	pthread_mutex_init(&rw->mu, NULL);
	pthread_cond_init(&rw->work, NULL);
	pthread_cond_init(&rw->room, NULL);
	sb_init(&rw->blob);
	sb_init(&rw->zone);
	if (prepare_tables(rw, err) < 0)
		goto fail;
	for (int k = 0; k < ROWS_TABLES; k++) {
		if (!tables[k].block)
			continue;
		for (int c = 0; c < tables[k].ncols; c++)
			if (tables[k].cols[c].kind == C_TEXT)
				rw->text_cols[k][rw->ntext[k]++] = (uint8_t)c;
		/* BLOCK_POOL blocks besides those being filled but one (a grouped
		 * table makes one for each group it sees), so that the spares,
		 * while the deriver waits for one, never exceed BLOCK_POOL */
		for (int i = 0; i < BLOCK_POOL; i++) {
			if (i == 0 && tables[k].group >= 0)
				continue;
			struct block_build *bb = build_new(&tables[k]);
			if (bb == NULL) {
				err_push(err, "out of memory");
				goto fail;
			}
			if (i == 0)
				rw->build[k] = bb;
			else
				rw->bspare[k][rw->nbspare[k]++] = bb;
		}
	}
	for (rw->nall = 0; rw->nall < POOL; rw->nall++) {
		struct batch *b = calloc(1, sizeof(*b));
		if (b == NULL) {
			err_push(err, "out of memory");
			goto fail;
		}
		rw->all[rw->nall] = b;
		if (rw->nall < ROWS_TABLES) {
			b->table = rw->nall;
			rw->cur[rw->nall] = b;
		} else {
			rw->spare[rw->nspare++] = b;
		}
	}
	if (pthread_create(&rw->writer, NULL, writer_main, rw) != 0) {
		err_push(err, "cannot start the database writer thread");
		goto fail;
	}
	rw->started = true;
	return rw;
fail:
	rows_destroy(rw);
	return NULL;
}

void rows_destroy(struct rows *rw)
{
	if (rw == NULL)
		return;
	if (rw->started) {
		pthread_mutex_lock(&rw->mu);
		rw->stop = true;
		rw->failed = true; /* what is still queued is dropped, not written */
		pthread_cond_signal(&rw->work);
		pthread_mutex_unlock(&rw->mu);
		pthread_join(rw->writer, NULL);
	}
	for (int k = 0; k < ROWS_TABLES; k++) {
		sqlite3_finalize(rw->st[k].one);
		sqlite3_finalize(rw->st[k].many);
	}
	for (int i = 0; i < rw->nall; i++) {
		free(rw->all[i]->arena);
		free(rw->all[i]);
	}
	for (int k = 0; k < ROWS_TABLES; k++) {
		/* after the join every block is back: those being filled, the spares */
		build_free(rw->build[k]);
		for (int g = 0; g < rw->ngbuild[k]; g++)
			build_free(rw->gbuild[k][g]);
		free(rw->gbuild[k]);
		for (int i = 0; i < rw->nbspare[k]; i++)
			build_free(rw->bspare[k][i]);
	}
	sb_free(&rw->blob);
	sb_free(&rw->zone);
	pthread_mutex_destroy(&rw->mu);
	pthread_cond_destroy(&rw->work);
	pthread_cond_destroy(&rw->room);
	free(rw);
}

static int arena_put(struct batch *b, const char *s, struct val *v)
{
	size_t n = strlen(s);

	if (b->alen + n > b->acap) {
		size_t cap = b->acap == 0 ? 4096 : b->acap;
		while (cap < b->alen + n)
			cap *= 2;
		char *a = realloc(b->arena, cap);
		if (a == NULL)
			return -1;
		b->arena = a;
		b->acap = cap;
	}
	if (n > 0) /* "" with no arena yet: nothing to copy, and no pointer to offset */
		memcpy(b->arena + b->alen, s, n);
	v->t = V_TEXT;
	v->i = (int64_t)b->alen;
	v->len = (uint32_t)n;
	b->alen += n;
	return 0;
}

/* The block being filled for the row at base of block table k: the
 * table's, or (grouped) its group's, made on the group's first row. */
static struct block_build **build_for(struct rows *rw, enum rows_table k, const char *base,
				      struct wsr_err *err)
{
	const struct table *t = &tables[k];
	int64_t g;

	if (t->group < 0)
		return &rw->build[k];
	memcpy(&g, base + t->cols[t->group].off, sizeof(g));
	if (g < 0 || g >= MAX_GROUPS) {
		err_push(err, "%s: %s %lld out of range 0..%d", t->name, t->cols[t->group].name,
			 (long long)g, MAX_GROUPS - 1);
		return NULL;
	}
	if (g >= rw->ngbuild[k]) {
		struct block_build **gb =
			realloc(rw->gbuild[k], (size_t)(g + 1) * sizeof(*rw->gbuild[k]));
		if (gb == NULL)
			goto oom;
		memset(gb + rw->ngbuild[k], 0,
		       (size_t)(g + 1 - rw->ngbuild[k]) * sizeof(*rw->gbuild[k]));
		rw->gbuild[k] = gb;
		rw->ngbuild[k] = (int)g + 1;
	}
	if (rw->gbuild[k][g] == NULL && (rw->gbuild[k][g] = build_new(t)) == NULL)
		goto oom;
	return &rw->gbuild[k][g];
oom:
	err_push(err, "out of memory");
	return NULL;
}

/* Adds a row to block table k's block; a full block goes to the writer. */
static int add_block_row(struct rows *rw, enum rows_table k, const char *base,
			 struct wsr_err *err)
{
	const struct table *t = &tables[k];
	struct block_build **slot = build_for(rw, k, base, err);
	if (slot == NULL)
		return -1;
	struct block_build *bb = *slot;
	char *row = bb->rows + (size_t)bb->nrows * t->size;

	memcpy(row, base, t->size);
	for (int i = 0; i < rw->ntext[k]; i++) {
		const struct col *cl = &t->cols[rw->text_cols[k][i]];
		const char *s;
		int64_t at = 0;
		memcpy(&s, base + cl->off, sizeof(s));
		if (s != NULL) {
			/* with its NUL: the writer finds its length */
			at = (int64_t)bb->text.len + 1;
			sb_add(&bb->text, s, strlen(s) + 1);
		}
		memcpy(row + cl->off, &at, sizeof(at));
	}
	if (bb->text.oom) {
		err_push(err, "out of memory");
		return -1;
	}
	if (++bb->nrows < BLOCK_ROWS)
		return 0;
	rw->cur[k]->blk = bb;
	*slot = NULL;
	return submit(rw, k, slot, err);
}

int rows_add(struct rows *rw, enum rows_table k, const void *row, struct wsr_err *err)
{
	const struct table *t = &tables[k];
	if (t->block)
		return add_block_row(rw, k, row, err);
	struct batch *b = rw->cur[k];
	struct val *v = b->vals + (size_t)b->nrows * (size_t)t->ncols;
	const char *base = row;

	for (int c = 0; c < t->ncols; c++) {
		const struct col *cl = &t->cols[c];
		if (cl->kind == C_TEXT) {
			const char *s;
			memcpy(&s, base + cl->off, sizeof(s));
			if (s == NULL)
				v[c].t = V_NULL;
			else if (arena_put(b, s, &v[c]) < 0)
				goto oom;
			continue;
		}
		int64_t x;
		memcpy(&x, base + cl->off, sizeof(x));
		if (int_is_null(cl->kind, x)) {
			v[c].t = V_NULL;
		} else {
			v[c].t = V_INT;
			v[c].i = x;
		}
	}
	b->nrows++;
	if (b->nrows == (rw->st[k].many != NULL ? BATCH_ROWS : 1))
		return submit(rw, k, NULL, err);
	return 0;
oom:
	err_push(err, "out of memory");
	return -1;
}

int rows_flush(struct rows *rw, struct wsr_err *err)
{
	char msg[sizeof(rw->errmsg)];
	bool failed;

	for (int k = 0; k < ROWS_TABLES; k++) {
		if (!tables[k].block) {
			if (rw->cur[k]->nrows > 0 && submit(rw, k, NULL, err) < 0)
				return -1;
			continue;
		}
		int n = tables[k].group < 0 ? 1 : rw->ngbuild[k];
		for (int g = 0; g < n; g++) {
			struct block_build **slot = tables[k].group < 0 ? &rw->build[k] : &rw->gbuild[k][g];
			if (*slot == NULL || (*slot)->nrows == 0)
				continue;
			rw->cur[k]->blk = *slot;
			*slot = NULL;
			if (submit(rw, k, slot, err) < 0)
				return -1;
		}
	}
	pthread_mutex_lock(&rw->mu);
	if (rw->writer_waits && rw->qlen > 0)
		pthread_cond_signal(&rw->work);
	while (rw->qlen > 0 || rw->busy) {
		rw->adder_waits = true;
		pthread_cond_wait(&rw->room, &rw->mu);
		rw->adder_waits = false;
	}
	failed = rw->failed;
	memcpy(msg, rw->errmsg, sizeof(msg));
	pthread_mutex_unlock(&rw->mu);
	return failed ? writer_failed(msg, err) : 0;
}

int rows_recount_events(struct rows *rw, struct wsr_err *err)
{
	if (rows_flush(rw, err) < 0)
		return -1;
	return db_exec(rw->db,
		       "DELETE FROM event_counts; INSERT INTO event_counts SELECT name, count(*) "
		       "FROM events GROUP BY name",
		       err);
}
