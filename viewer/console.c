/*
 * console.c - the SQL console's worker threads (see console.h).
 *
 * Why threads of its own: a console query may run for API_SQL_TIME_MS and
 * a client may send many at once. Run on the HTTP server's threads under one
 * lock (as before), 8 such queries held all 4 server threads and the
 * timeline waited 11.7 s behind them. Here the server hands the query over
 * and suspends the connection (server.c), so its threads stay free for
 * every other answer; the queue is bounded, so a flood gets 503 at once
 * instead of piling up.
 *
 * Invariants: see console.h. A worker takes a job from the queue under the
 *   lock and runs it without the lock; stop is only set once.
 * Concurrency: console_stop() sets stop under the lock, wakes the workers
 *   and interrupts their connections (sqlite3_interrupt() is thread-safe);
 *   each worker then answers the jobs left in the queue and exits.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "console.h"
#include "rodb.h"
#include "sbuf.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Interrupts a query past its deadline (called every 1000 VM steps). */
static int progress(void *ud)
{
	const struct console_worker *w = ud;

	return now_ms() > w->deadline_ms;
}

/*
 * One read-only statement, time and row limits. A refused or failed query
 * is still a 200 answer whose "error" says why: the request itself was fine.
 */
static void run_query(struct console_worker *w, const char *sql, struct sbuf *out)
{
	sqlite3 *db = w->db;
	sqlite3_stmt *q = NULL;
	const char *tail = NULL;
	long long n = 0, t_start = now_ms();
	int rc, ncol;

	w->deadline_ms = t_start + API_SQL_TIME_MS;
	if (sqlite3_prepare_v2(db, sql, -1, &q, &tail) != SQLITE_OK) {
		sb_puts(out, "{\"error\":");
		sb_json_str(out, sqlite3_errmsg(db));
		sb_putc(out, '}');
		goto out;
	}
	if (q == NULL) {
		sb_puts(out, "{\"error\":\"empty query\"}");
		goto out;
	}
	while (tail != NULL && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == '\r' ||
				*tail == ';'))
		tail++;
	if (tail != NULL && *tail != '\0') {
		sb_puts(out, "{\"error\":\"one statement per query\"}");
		goto out;
	}
	if (!sqlite3_stmt_readonly(q)) {
		sb_puts(out, "{\"error\":\"not authorized: the console is read-only\"}");
		goto out;
	}
	ncol = sqlite3_column_count(q);
	sb_puts(out, "{\"columns\":[");
	for (int i = 0; i < ncol; i++) {
		sb_json_str(out, sqlite3_column_name(q, i));
		sb_putc(out, ',');
	}
	sb_uncomma(out);
	sb_puts(out, "],\"rows\":[");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (n == API_SQL_MAX_ROWS)
			break;
		sb_putc(out, '[');
		for (int i = 0; i < ncol; i++) {
			api_json_value(out, q, i);
			sb_putc(out, ',');
		}
		sb_uncomma(out);
		sb_puts(out, "],");
		n++;
	}
	sb_uncomma(out);
	sb_puts(out, "]");
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sb_puts(out, ",\"error\":");
		if (rc == SQLITE_INTERRUPT)
			sb_printf(out, "\"interrupted: over the %d ms limit\"", API_SQL_TIME_MS);
		else
			sb_json_str(out, sqlite3_errmsg(db));
	}
	sb_printf(out, ",\"truncated\":%s,\"max_rows\":%d,\"ms\":%lld}",
		  rc == SQLITE_ROW ? "true" : "false", API_SQL_MAX_ROWS, now_ms() - t_start);
out:
	sqlite3_finalize(q);
}

static void answer(struct console_job *job, int status, struct sbuf *out)
{
	size_t len;
	char *body;

	if (out->oom) {
		sb_free(out);
		sb_init(out);
		sb_puts(out, "{\"error\":\"out of memory\"}");
		status = 500;
	}
	body = sb_steal(out, &len);
	job->done(job->arg, status, body, len);
	free(job->sql);
}

static void *worker_main(void *arg)
{
	struct console_worker *w = arg;
	struct console *con = w->con;

	for (;;) {
		struct console_job job;
		struct sbuf out;
		int stop;

		pthread_mutex_lock(&con->lock);
		while (!con->stop && con->n == 0)
			pthread_cond_wait(&con->wake, &con->lock);
		if (con->n == 0) {
			pthread_mutex_unlock(&con->lock);
			return NULL;
		}
		job = con->queue[con->head];
		con->head = (con->head + 1) % CONSOLE_QUEUE;
		con->n--;
		stop = con->stop;
		pthread_mutex_unlock(&con->lock);
		sb_init(&out);
		if (stop) {
			sb_puts(&out, "{\"error\":\"the server is stopping\"}");
			answer(&job, 503, &out);
			continue;
		}
		run_query(w, job.sql, &out);
		answer(&job, 200, &out);
	}
}

int console_start(struct console *con, const char *path, struct wsr_err *err)
{
	memset(con, 0, sizeof(*con));
	pthread_mutex_init(&con->lock, NULL);
	pthread_cond_init(&con->wake, NULL);
	for (int i = 0; i < CONSOLE_THREADS; i++) {
		struct console_worker *w = &con->w[i];
		w->con = con;
		if (rodb_open(path, 0, &w->db, err) < 0)
			goto fail;
		sqlite3_progress_handler(w->db, 1000, progress, w);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			sqlite3_close(w->db);
			w->db = NULL;
			err_push(err, "cannot start a console thread");
			goto fail;
		}
		con->nworkers++;
	}
	return 0;
fail:
	console_stop(con);
	return -1;
}

int console_submit(struct console *con, const char *sql, console_done_fn done, void *arg)
{
	char *copy = strdup(sql);
	int ret = -1;

	if (copy == NULL)
		return -1;
	pthread_mutex_lock(&con->lock);
	if (!con->stop && con->nworkers > 0 && con->n < CONSOLE_QUEUE) {
		con->queue[(con->head + con->n) % CONSOLE_QUEUE] =
			(struct console_job){.sql = copy, .done = done, .arg = arg};
		con->n++;
		pthread_cond_signal(&con->wake);
		ret = 0;
	}
	pthread_mutex_unlock(&con->lock);
	if (ret < 0)
		free(copy);
	return ret;
}

void console_stop(struct console *con)
{
	pthread_mutex_lock(&con->lock);
	con->stop = 1;
	pthread_cond_broadcast(&con->wake);
	pthread_mutex_unlock(&con->lock);
	for (int i = 0; i < con->nworkers; i++)
		sqlite3_interrupt(con->w[i].db);
	for (int i = 0; i < con->nworkers; i++)
		pthread_join(con->w[i].thread, NULL);
	for (int i = 0; i < CONSOLE_THREADS; i++) {
		sqlite3_close(con->w[i].db);
		con->w[i].db = NULL;
	}
	con->nworkers = 0;
	pthread_cond_destroy(&con->wake);
	pthread_mutex_destroy(&con->lock);
}
