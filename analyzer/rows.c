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
 * Invariants:
 *   - Rows of one table are written in the order they were added (the
 *     batches of one table are stepped in order), so batching is invisible
 *     in the result; nothing reads the tables during ingestion.
 *   - A batch owns its values and its text arena until it is written.
 * Concurrency: one thread (the caller's); the connection is the caller's.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db.h"
#include "rows.h"

#define BATCH_ROWS 32

enum col_kind {
	C_I64, /* stored as given */
	C_OPT, /* ROW_NULL: NULL */
	C_ID,  /* negative: NULL */
	C_TEXT /* const char *, NULL: NULL */
};

struct col {
	const char *name;
	size_t off;
	uint8_t kind;
};

struct table {
	const char *name;
	const char *verb;   /* "INSERT", "INSERT OR REPLACE" */
	const char *suffix; /* after the VALUES tuple: an upsert clause (not batched) */
	const struct col *cols;
	int ncols;
};

#define COL(st, f, k)           \
 {                              \
#  f, offsetof(struct st, f), k \
 }
#define TABLE(n, verb, sfx, c)                     \
 {                                                 \
  n, verb, sfx, c, (int)(sizeof(c) / sizeof(c[0])) \
 }

static const struct col cols_event[] = {
	COL(row_event, id, C_I64),     COL(row_event, ts, C_I64),  COL(row_event, name, C_TEXT),
	COL(row_event, cpu, C_OPT),    COL(row_event, tid, C_OPT), COL(row_event, vpid, C_OPT),
	COL(row_event, p, C_OPT),      COL(row_event, m, C_OPT),   COL(row_event, g, C_OPT),
	COL(row_event, a1, C_OPT),     COL(row_event, a2, C_OPT),  COL(row_event, a3, C_OPT),
	COL(row_event, extra, C_TEXT),
};
static const struct col cols_g_state[] = {
	COL(row_g_state, g, C_I64),        COL(row_g_state, state, C_TEXT),
	COL(row_g_state, start_ts, C_I64), COL(row_g_state, end_ts, C_I64),
	COL(row_g_state, p, C_ID),         COL(row_g_state, m, C_ID),
	COL(row_g_state, reason, C_TEXT),  COL(row_g_state, source, C_TEXT),
	COL(row_g_state, cut, C_I64),
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
static const struct col cols_counters[] = {
	COL(row_counters, ts, C_I64),          COL(row_counters, idle_ps, C_I64),
	COL(row_counters, spinning_ms, C_I64), COL(row_counters, idle_ms, C_I64),
	COL(row_counters, threads, C_I64),     COL(row_counters, running_gs, C_I64),
	COL(row_counters, runnable_gs, C_I64), COL(row_counters, global_len, C_I64),
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
	COL(row_g, g, C_I64),           COL(row_g, parent, C_OPT),
	COL(row_g, created_ts, C_I64),  COL(row_g, first_run_ts, C_OPT),
	COL(row_g, end_ts, C_OPT),      COL(row_g, create_p, C_ID),
	COL(row_g, runs, C_I64),        COL(row_g, stolen, C_I64),
	COL(row_g, run_ns, C_I64),      COL(row_g, runnable_ns, C_I64),
	COL(row_g, waiting_ns, C_I64),  COL(row_g, syscall_ns, C_I64),
	COL(row_g, end_reason, C_TEXT),
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
	COL(row_sched_field, racing, C_TEXT), COL(row_sched_field, explained, C_I64),
};

static const struct table tables[ROWS_TABLES] = {
	[ROWS_EVENTS] = TABLE("events", "INSERT", NULL, cols_event),
	[ROWS_G_STATE] = TABLE("g_state", "INSERT", NULL, cols_g_state),
	[ROWS_P_STATE] = TABLE("p_state", "INSERT", NULL, cols_p_state),
	[ROWS_M_STATE] = TABLE("m_state", "INSERT", NULL, cols_m_state),
	[ROWS_COUNTERS] = TABLE("counters", "INSERT", NULL, cols_counters),
	[ROWS_P_COUNTERS] = TABLE("p_counters", "INSERT", NULL, cols_p_counters),
	[ROWS_STEALS] = TABLE("steals", "INSERT", NULL, cols_steal),
	[ROWS_SPILLS] = TABLE("spills", "INSERT", NULL, cols_queue_op),
	[ROWS_GLOBAL_GETS] = TABLE("global_gets", "INSERT", NULL, cols_queue_op),
	/* a G id reused without an exit writes its row twice: the last wins */
	[ROWS_G] = TABLE("g", "INSERT OR REPLACE", NULL, cols_g),
	[ROWS_DISCARDED] = TABLE("discarded", "INSERT", NULL, cols_discarded),
	[ROWS_P] = TABLE("p", "INSERT", NULL, cols_p),
	[ROWS_M] = TABLE("m", "INSERT", NULL, cols_m),
	[ROWS_EVENT_COUNTS] =
		TABLE("event_counts", "INSERT",
		      " ON CONFLICT (name) DO UPDATE SET n = n + excluded.n", cols_event_count),
	[ROWS_SCHED_FIELDS] = TABLE("schedtrace_fields", "INSERT", NULL, cols_sched_field),
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

struct batch {
	sqlite3_stmt *one, *many; /* many: NULL when the table is not batched */
	int nrows;
	struct val *vals; /* BATCH_ROWS x ncols */
	char *arena;      /* the texts of the batch's rows */
	size_t alen, acap;
};

struct rows {
	sqlite3 *db;
	struct batch b[ROWS_TABLES];
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

struct rows *rows_create(sqlite3 *db, struct wsr_err *err)
{
	struct rows *rw = calloc(1, sizeof(*rw));

	if (rw == NULL) {
		err_push(err, "out of memory");
		return NULL;
	}
	rw->db = db;
	for (int k = 0; k < ROWS_TABLES; k++) {
		const struct table *t = &tables[k];
		struct batch *b = &rw->b[k];
		char *one = table_sql(t, 1);
		/* not for upserts (the ON CONFLICT clause follows the tuples) */
		char *many = t->suffix == NULL ? table_sql(t, BATCH_ROWS) : NULL;
		b->vals = calloc((size_t)BATCH_ROWS * (size_t)t->ncols, sizeof(*b->vals));
		if (one == NULL || (t->suffix == NULL && many == NULL) || b->vals == NULL) {
			free(one);
			free(many);
			err_push(err, "out of memory");
			goto fail;
		}
		int rc = db_prepare(db, &b->one, one, err);
		if (rc == 0 && many != NULL)
			rc = db_prepare(db, &b->many, many, err);
		free(one);
		free(many);
		if (rc < 0)
			goto fail;
	}
	return rw;
fail:
	rows_destroy(rw);
	return NULL;
}

void rows_destroy(struct rows *rw)
{
	if (rw == NULL)
		return;
	for (int k = 0; k < ROWS_TABLES; k++) {
		struct batch *b = &rw->b[k];
		sqlite3_finalize(b->one);
		sqlite3_finalize(b->many);
		free(b->vals);
		free(b->arena);
	}
	free(rw);
}

static void bind_vals(sqlite3_stmt *st, const struct batch *b, const struct val *v, int n)
{
	for (int i = 0; i < n; i++) {
		switch (v[i].t) {
		case V_INT:
			sqlite3_bind_int64(st, i + 1, v[i].i);
			break;
		case V_TEXT:
			sqlite3_bind_text(st, i + 1, b->arena + v[i].i, (int)v[i].len,
					  SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(st, i + 1);
		}
	}
}

static int flush_batch(struct rows *rw, int k, struct wsr_err *err)
{
	struct batch *b = &rw->b[k];
	int ncols = tables[k].ncols, rc = SQLITE_DONE;

	if (b->nrows == 0)
		return 0;
	if (b->many != NULL && b->nrows == BATCH_ROWS) {
		bind_vals(b->many, b, b->vals, ncols * BATCH_ROWS);
		rc = sqlite3_step(b->many);
		sqlite3_reset(b->many);
	} else {
		for (int r = 0; r < b->nrows && rc == SQLITE_DONE; r++) {
			bind_vals(b->one, b, b->vals + (size_t)r * (size_t)ncols, ncols);
			rc = sqlite3_step(b->one);
			sqlite3_reset(b->one);
		}
	}
	b->nrows = 0;
	b->alen = 0;
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: inserting into %s: %s", tables[k].name,
			 sqlite3_errmsg(rw->db));
		return -1;
	}
	return 0;
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
	memcpy(b->arena + b->alen, s, n);
	v->t = V_TEXT;
	v->i = (int64_t)b->alen;
	v->len = (uint32_t)n;
	b->alen += n;
	return 0;
}

int rows_add(struct rows *rw, enum rows_table k, const void *row, struct wsr_err *err)
{
	const struct table *t = &tables[k];
	struct batch *b = &rw->b[k];
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
		if ((cl->kind == C_OPT && x == ROW_NULL) || (cl->kind == C_ID && x < 0)) {
			v[c].t = V_NULL;
		} else {
			v[c].t = V_INT;
			v[c].i = x;
		}
	}
	b->nrows++;
	if (b->nrows == (b->many != NULL ? BATCH_ROWS : 1))
		return flush_batch(rw, k, err);
	return 0;
oom:
	err_push(err, "out of memory");
	return -1;
}

int rows_flush(struct rows *rw, struct wsr_err *err)
{
	for (int k = 0; k < ROWS_TABLES; k++)
		if (flush_batch(rw, k, err) < 0)
			return -1;
	return 0;
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
