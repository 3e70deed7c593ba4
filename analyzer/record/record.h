/*
 * record.h - `wsr run`'s recorder: drives lttng-tools (record.c) and reads
 * back the counts of a finished trace's packet indexes (trace_index.c).
 *
 * Invariants:
 *   - Every function returns 0 on success or -1 after pushing at least one
 *     cause onto its `struct wsr_err` (err.h); none prints anything itself.
 *   - lttng-tools is driven through the `lttng` command-line tool run with
 *     fork/exec (never through a shell): no argument is ever re-parsed.
 * Concurrency: single-threaded; the only other processes are the lttng
 *   tools, the traced program and, when none was reachable, the
 *   lttng-sessiond that record_sessiond_start() started. Concurrent wsr runs
 *   share one session daemon through a lock file (record_daemon_acquire).
 */
#ifndef WSR_ANALYZER_RECORD_H
#define WSR_ANALYZER_RECORD_H

#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* Channel geometry and mode of one recording. */
struct record_opts {
	uint64_t subbuf_size; /* bytes, a power of two */
	uint64_t num_subbuf;  /* a power of two */
	int lossless;         /* 1: blocking mode, nothing discarded */
};

#define RECORD_DEFAULT_SUBBUF_SIZE (4u << 20)
#define RECORD_DEFAULT_NUM_SUBBUF  8u
#define RECORD_CHANNEL             "wsr"

/*
 * Runs ARGV[0] (looked up in PATH) with ARGV, stdin from /dev/null. With
 * OUT != NULL, its stdout and stderr are captured into *OUT (malloc'd,
 * NUL-terminated, the caller frees); otherwise they are discarded.
 * Returns the exit status, 128 + signal number for a killed process, or -1
 * when it could not be started.
 */
int record_spawn(struct wsr_err *err, char *const argv[], char **out);

/* What a bounded tool returns when it was killed for running too long. */
#define RECORD_TIMED_OUT -2

/* The longest waits for `lttng stop` and `lttng destroy` (record_session_stop
 * and record_session_destroy). */
#define RECORD_STOP_TIMEOUT_MS    20000
#define RECORD_DESTROY_TIMEOUT_MS 20000

/* What record_session_stop returns when it stopped without the last data. */
#define RECORD_UNFLUSHED 1

/* 1 when `lttng list` reaches a session daemon, else 0. */
int record_sessiond_reachable(void);

/*
 * Starts `lttng-sessiond --daemonize` and waits until it answers. *PID is the
 * daemon's pid, or 0 when another one won a race to start and is reachable
 * (then it is not ours to stop).
 */
int record_sessiond_start(struct wsr_err *err, pid_t *pid);

/*
 * Stops the session daemon PID that record_sessiond_start() started, unless
 * it holds sessions (another `wsr run` found it in the meantime); returns 1
 * when it was left running for that reason.
 */
int record_sessiond_stop(struct wsr_err *err, pid_t pid);

/* This run's share of the session daemon (record.c: the protocol). */
struct record_daemon {
	int lock_fd;   /* a shared flock on RUNDIR/wsr-run.lock, or -1 */
	pid_t started; /* the daemon this run started, or 0 */
};

/*
 * Takes the shared lock, then finds a reachable session daemon or starts one
 * (and names it in the lock file). Until record_daemon_release(), no other
 * wsr run stops the daemon.
 */
int record_daemon_acquire(struct wsr_err *err, struct record_daemon *d);

/*
 * Gives this run's share back (idempotent: D is reset). The last wsr run to
 * do so stops the daemon that a wsr run started, if it holds no session.
 */
int record_daemon_release(struct wsr_err *err, struct record_daemon *d);

/* create, enable-channel, enable-event wsr:* (no context fields: wsr_tp.h). */
int record_session_create(struct wsr_err *err, const char *session, const char *out_dir,
			  const struct record_opts *opts);

/* Restricts SESSION to the process PID (lttng track -u --vpid=PID). */
int record_session_track(struct wsr_err *err, const char *session, pid_t pid);

int record_session_start(struct wsr_err *err, const char *session);

/*
 * Stops SESSION; returns 0 after the consumer has flushed every buffer, or
 * RECORD_UNFLUSHED (with a warning on stderr) when it still had data pending
 * after RECORD_STOP_TIMEOUT_MS and the session was stopped without it.
 */
int record_session_stop(struct wsr_err *err, const char *session);

/* What record_session_destroy knows of SESSION. */
enum record_destroy {
	RECORD_DESTROY_STOPPED,   /* record_session_stop returned 0: its data is on disk */
	RECORD_DESTROY_UNFLUSHED, /* record_session_stop returned RECORD_UNFLUSHED */
	RECORD_DESTROY_RUNNING,   /* maybe still recording (clean-up paths, the watchdog) */
};

/*
 * Destroys SESSION (stopping it first if it runs). Waits for the destruction
 * to complete, but a destruction the session daemon does not report complete
 * in RECORD_DESTROY_TIMEOUT_MS counts as done (with a warning on stderr that
 * says what HOW means for the trace) once `lttng list` no longer lists
 * SESSION; with RECORD_DESTROY_STOPPED it then returns RECORD_UNFLUSHED: the
 * daemon was waiting for data it never got. RECORD_DESTROY_UNFLUSHED does not
 * wait (--no-wait): the wait would hang on the same data as the stop.
 */
int record_session_destroy(struct wsr_err *err, const char *session, enum record_destroy how);

/*
 * Starts the watchdog of SESSION (a child process): if this process dies
 * before record_watchdog_release(), it destroys SESSION and releases DAEMON
 * (record_daemon_release, on the lock it inherited). *FD is the pipe to it.
 */
pid_t record_watchdog_start(struct wsr_err *err, const char *session, const char *trace_dir,
			    struct record_daemon daemon, int *fd);

/* Tells the watchdog that the session is gone and reaps it (idempotent). */
void record_watchdog_release(int *fd, pid_t *pid);

/*
 * Destroys every session named wsr-PID-SECONDS-NANOS whose PID no longer
 * exists (left by a `wsr run` killed together with its watchdog). Returns
 * how many, or -1 when the sessions cannot be listed.
 */
int record_sweep_orphans(struct wsr_err *err);

/* What the packet indexes say (cheap: no event is decoded). */
struct trace_index {
	uint64_t streams;           /* index files found */
	uint64_t packets;           /* index entries */
	uint64_t discarded_events;  /* sum over streams of the last cumulative events_discarded */
	uint64_t lost_packets;      /* gaps in each stream's packet_seq_num */
	uint64_t bytes;             /* sum of packet sizes */
};

/*
 * Reads the CTF packet index files (index/<stream>.idx, format 1.x, big
 * endian) below DIR. A trace with no index file gives all zeros.
 */
int trace_index_read(struct wsr_err *err, const char *dir, struct trace_index *ix);

#endif /* WSR_ANALYZER_RECORD_H */
