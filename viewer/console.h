/*
 * console.h - the viewer's SQL console: read-only queries of `/api/sql` on
 * their own connections and threads, so that no console query can hold up
 * the timeline or any other answer (docs/viewer.md).
 *
 * Invariants:
 *   - CONSOLE_THREADS workers, each with its own read-only connection
 *     (rodb_open: the authorizer and its function list) and its own
 *     progress handler: a query runs at most API_SQL_TIME_MS from its start
 *     and returns at most API_SQL_MAX_ROWS rows; one statement per query;
 *     sqlite3_stmt_readonly() must hold.
 *   - At most CONSOLE_QUEUE queries wait for a worker; console_submit()
 *     refuses more at once (the caller answers 503), so the work in flight
 *     and the memory it takes are bounded whatever the clients do.
 *   - Every accepted query gets exactly one done() call, from a worker
 *     thread: its answer, or after console_stop() a 503 for the queries that
 *     never started. done() takes the body (malloc'd) and must not block.
 * Concurrency: console_submit() may be called from any thread; the queue is
 *   under its mutex; each connection belongs to its worker.
 */
#ifndef WSR_VIEWER_CONSOLE_H
#define WSR_VIEWER_CONSOLE_H

#include <pthread.h>
#include <stddef.h>

#include <sqlite3.h>

#include "err.h"

#define CONSOLE_THREADS 2
#define CONSOLE_QUEUE   8

typedef void (*console_done_fn)(void *arg, int status, char *body, size_t len);

struct console_job {
	char *sql;
	console_done_fn done;
	void *arg;
};

struct console_worker {
	struct console *con;
	pthread_t thread;
	sqlite3 *db;
	long long deadline_ms; /* this worker's thread only (its progress handler) */
};

struct console {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct console_job queue[CONSOLE_QUEUE]; /* ring: head, n; under lock */
	int head, n;
	int stop; /* under lock */
	int nworkers;
	struct console_worker w[CONSOLE_THREADS];
};

/* Opens the workers' connections to path and starts them. */
int console_start(struct console *con, const char *path, struct wsr_err *err);
/*
 * Queues sql (copied) for a worker; 0 if queued (done() will be called),
 * -1 if the queue is full or the console is stopping (done() will not be).
 */
int console_submit(struct console *con, const char *sql, console_done_fn done, void *arg);
/* Interrupts the running queries, answers the waiting ones 503, joins the workers. */
void console_stop(struct console *con);

#endif /* WSR_VIEWER_CONSOLE_H */
