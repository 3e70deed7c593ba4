/*
 * publish.c - from OUT.PID.tmp to OUT (publish.h): the one finish-and-
 * publish sequence of `wsr ingest` and of the bt2 plugin.
 *
 * Invariants: see publish.h. The lock on OUT.PID.tmp is held from its
 *   creation to publish_end(), so another ingest never removes a live
 *   ingest's file, even one of a stopped process.
 * Concurrency: one thread.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "publish.h"

/*
 * Temporary files. The database is written to OUT.PID.tmp, created here
 * (O_EXCL) and flock()ed for as long as this process writes it; rename()
 * makes it OUT. A `wsr ingest` killed by SIGKILL leaves its file behind: the
 * next ingest to the same OUT removes every OUT.N.tmp (and OUT.tmp, the name
 * before) whose process N is gone and whose lock it can take, so a live
 * ingest's file, even one of a stopped process, is never touched.
 */
/* The directory part of OUT ("." for a bare name, "/" at the root). */
static void out_dirname(const char *out, char *dir, size_t size)
{
	const char *slash = strrchr(out, '/');

	if (slash == NULL)
		snprintf(dir, size, ".");
	else
		snprintf(dir, size, "%.*s", slash > out ? (int)(slash - out) : 1, out);
}

static int tmp_is_ours(const char *name, const char *base, pid_t *pid)
{
	size_t bl = strlen(base);
	char *end;

	if (strncmp(name, base, bl) != 0 || name[bl] != '.')
		return 0;
	if (strcmp(name + bl, ".tmp") == 0) {
		*pid = 0;
		return 1;
	}
	long v = strtol(name + bl + 1, &end, 10);
	if (end == name + bl + 1 || v <= 0 || strcmp(end, ".tmp") != 0)
		return 0;
	*pid = (pid_t)v;
	return 1;
}

static void remove_stale_tmps(const char *out)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	const char *slash = strrchr(out, '/');
	const char *base = slash != NULL ? slash + 1 : out;
	struct dirent *de;
	DIR *d;

	out_dirname(out, dir, sizeof(dir));
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t pid;
		if (!tmp_is_ours(de->d_name, base, &pid))
			continue;
		if (pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH))
			continue; /* that process lives (or is not ours to probe) */
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			struct stat a, b;
			/* Still the file we locked (not replaced meanwhile). */
			if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_ino == b.st_ino &&
			    a.st_dev == b.st_dev && unlink(path) == 0)
				fprintf(stderr,
					"wsr ingest: removed %s, left by an ingest that was killed\n",
					path);
		}
		close(fd);
	}
	closedir(d);
}

/* Creates TMP (exclusive, locked); returns the lock's fd or -1. */
static int tmp_create(const char *tmp, const char *out, struct wsr_err *err)
{
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0) {
		int e = errno;
		char dir[PATH_MAX];
		out_dirname(out, dir, sizeof(dir));
		if (e == EACCES || e == EROFS || e == EPERM)
			err_push(err,
				 "cannot write the database %s: the directory %s is not "
				 "writable (%s): choose another place with -o",
				 out, dir, strerror(e));
		else if (e == ENOENT || e == ENOTDIR)
			err_push(err,
				 "cannot write the database %s: the directory %s does not exist",
				 out, dir);
		else
			err_push(err, "cannot create %s: %s", tmp, strerror(e));
		return -1;
	}
	if (flock(fd, LOCK_EX) != 0) {
		err_push(err, "locking %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	return fd;
}

/* meta rows from the run record: program, command, exit_status, exit_signal,
 * unflushed (only when `lttng stop` gave up on the last data), and procname when the trace's environment gave none (per-UID buffers). */
static int run_info_meta(sqlite3 *db, const struct run_info *ri, struct wsr_err *err)
{
	char name[256];

	if (!ri->found)
		return 0;
	const char *base = strrchr(ri->program, '/');
	if (db_meta_text(db, "program", ri->program, err) < 0 ||
	    db_meta_text(db, "command", ri->command, err) < 0)
		return -1;
	if (ri->exit_status >= 0 && db_meta_int(db, "exit_status", ri->exit_status, err) < 0)
		return -1;
	if (ri->exit_signal >= 0 && db_meta_int(db, "exit_signal", ri->exit_signal, err) < 0)
		return -1;
	if (ri->flushed == 0 && db_meta_int(db, "unflushed", 1, err) < 0)
		return -1;
	db_get_meta_text(db, "procname", name, sizeof(name));
	if (name[0] == '\0' &&
	    db_meta_text(db, "procname", base != NULL ? base + 1 : ri->program, err) < 0)
		return -1;
	return 0;
}

/* meta policy_knobs: the string of the first `knobs` event (emitted right
 * after init: the scan in (ts, id) order stops there); none in traces of
 * runtimes before the event. */
static int knobs_meta(sqlite3 *db, struct wsr_err *err)
{
	return db_exec(db,
		       "INSERT OR REPLACE INTO meta (key, value) SELECT 'policy_knobs', extra "
		       "FROM events WHERE name = 'knobs' AND extra IS NOT NULL "
		       "ORDER BY ts, id LIMIT 1",
		       err);
}

/* ---- the decoder child ---- */

int publish_begin(struct publish *pb, const char *out, bool force, const char *force_opt,
		  struct wsr_err *err)
{
	struct stat st;

	memset(pb, 0, sizeof(*pb));
	pb->lock_fd = -1;
	if (snprintf(pb->out, sizeof(pb->out), "%s", out) >= (int)sizeof(pb->out) ||
	    snprintf(pb->tmp, sizeof(pb->tmp), "%s.%d.tmp", out, (int)getpid()) >=
		    (int)sizeof(pb->tmp)) {
		err_input(err, "%s: path too long", out);
		return -1;
	}
	if (lstat(out, &st) == 0) {
		if (!force) {
			err_input(err, "%s exists: pass %s to replace it", out, force_opt);
			return -1;
		}
		/* force replaces a wsr database, nothing else. */
		if (db_check_replaceable(out, err) < 0)
			return -1;
	}
	remove_stale_tmps(out);
	pb->lock_fd = tmp_create(pb->tmp, out, err);
	if (pb->lock_fd < 0)
		return -1;
	return db_create(pb->tmp, &pb->db, err);
}

static void say(void (*phase)(void *, const char *), void *ctx, const char *step)
{
	if (phase != NULL)
		phase(ctx, step);
}

int publish_finish(struct publish *pb, struct derive **dvp, const char *what,
		   const struct run_info *ri, void (*phase)(void *ctx, const char *step), void *ctx,
		   bool *init_missing, struct wsr_err *err)
{
	struct derive *dv = *dvp;
	int64_t gmp;

	if (derive_event_count(dv) == 0) {
		err_input(err, "%s: the trace holds no events", what);
		return -1;
	}
	if (derive_wsr_event_count(dv) == 0) {
		err_input(err,
			  "%s: no wsr events among its %" PRIu64
			  " events: record a libwsr program with the `wsr:*` events enabled",
			  what, derive_event_count(dv));
		return -1;
	}
	say(phase, ctx, "closing the intervals");
	if (derive_finish(dv, err) < 0 || (ri != NULL && run_info_meta(pb->db, ri, err) < 0) ||
	    knobs_meta(pb->db, err) < 0)
		return -1;
	/* No init event: gomaxprocs and the runtime version are unknown. Say
	 * so (meta.init_missing, the report) rather than show a 0. */
	*init_missing = db_get_meta_int(pb->db, "gomaxprocs", &gmp) != 0;
	if (*init_missing && db_meta_int(pb->db, "init_missing", 1, err) < 0)
		return -1;
	say(phase, ctx, "building the indexes");
	if (db_finish(pb->db, err) < 0)
		return -1;
	derive_destroy(dv);
	*dvp = NULL;
	if (sqlite3_close(pb->db) != SQLITE_OK) {
		err_push(err, "closing %s: %s", pb->tmp, sqlite3_errmsg(pb->db));
		pb->db = NULL;
		return -1;
	}
	pb->db = NULL;
	if (rename(pb->tmp, pb->out) < 0) {
		err_push(err, "renaming %s to %s: %s", pb->tmp, pb->out, strerror(errno));
		return -1;
	}
	pb->done = true;
	say(phase, ctx, "done");
	return 0;
}

void publish_end(struct publish *pb)
{
	if (pb->db != NULL) {
		sqlite3_close(pb->db);
		pb->db = NULL;
	}
	if (!pb->done && pb->lock_fd >= 0)
		unlink(pb->tmp);
	if (pb->lock_fd >= 0)
		close(pb->lock_fd);
	pb->lock_fd = -1;
}
