/*
 * ingest.c - `wsr ingest TRACE_DIR [-o trace.db] [--force]`: CTF -> SQLite.
 *
 * Design. Three stages, two processes:
 *   1. precheck (this process): the directory exists, holds CTF metadata,
 *      the metadata is complete (packet sizes fit the file, braces balance)
 *      and, for LTTng's stream layout, every stream packet fits its file,
 *      is the one its packet index lists there, and every indexed packet is
 *      there; wsr-run.json, when the trace has one, must agree on the count
 *      of packets and bytes (a stream cut at a packet boundary decodes
 *      without any error: only the index and the run record tell).
 *      Babeltrace 2.0.4 loops forever on some truncated metadata and aborts
 *      on some corrupted packet headers, so most bad input is caught here
 *      with a precise message before bt2 ever sees it.
 *   2. decode (a forked child): the bt2 graph source.ctf.fs -> muxer ->
 *      simple sink (decode.c) streams records (rec.h) through a pipe. The
 *      child is killed if it makes no progress for --timeout seconds, and a
 *      crash (abort) is reported as a corrupted trace: what is left of bt2's
 *      misbehaviour cannot take the analyzer down or hang it.
 *   3. derive (this process): derive.c validates each record and writes the
 *      rows into OUT.PID.tmp inside one transaction; indexes are built at the
 *      end, then OUT.PID.tmp is renamed to OUT.
 * The two processes also run in parallel on the two cores: decoding and
 * SQLite insertion overlap.
 * Rejected: a second SQLite writer (the child writing `events` into the
 *   final file while this process writes the derived tables into another,
 *   merged at the end with INSERT ... SELECT). On this 2-core machine under
 *   load it was no faster and the merge cost a third of the run (10M events:
 *   144 s instead of ~62 s); one writer is simpler.
 *
 * Invariants:
 *   - OUT is created only by the final rename(); on any failure or on
 *     SIGINT/SIGTERM/SIGHUP the temporary file is removed; after a SIGKILL
 *     the next ingest to OUT removes it (remove_stale_tmps). An existing OUT
 *     is replaced only with --force, and only if it is a wsr database.
 *   - The decoder child dies with this process (PR_SET_PDEATHSIG).
 *   - Exit codes: 0 done; 1 failure (I/O, SQLite); 2 usage error or bad
 *     input (not a trace, empty, no wsr events, truncated, corrupted).
 * Concurrency: single-threaded parent; the child only writes the pipe.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "ctfindex.h"
#include "db.h"
#include "decode.h"
#include "derive.h"
#include "duration.h"
#include "ingest.h"
#include "runinfo.h"

#define CTF_MAGIC    0xC1FC1FC1u
#define TSDL_MAGIC   0x75D11D57u
#define MAX_METADATA (64u << 20)

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- precheck ---- */

struct pre {
	struct wsr_err *err;
	const char *root;
	int files, metadata, streams;
	uint64_t stream_bytes;
	/* packets walked in the LTTng stream files, and their sizes in bytes */
	uint64_t packets, packet_bytes;
	char first_meta[PATH_MAX];
	char **dirs; /* directories holding a metadata file */
	int ndirs;
	/* time range of the LTTng packets, in ns (0 when unknown) */
	int64_t begin_ns, end_ns;
	int failed;
};

static struct pre *g_pre; /* nftw has no user pointer */

static int read_file(const char *path, char **out, size_t *len, size_t max, struct wsr_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (f == NULL) {
		err_push(err, "opening %s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				err_push(err, "out of memory reading %s", path);
				return -1;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
		if (n > max) {
			free(buf);
			fclose(f);
			err_input(err, "%s: larger than %zu bytes: not CTF metadata", path, max);
			return -1;
		}
	}
	if (ferror(f)) {
		err_push(err, "reading %s: %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Metadata text: packetized (LTTng) or plain; returns the TSDL text. */
static int metadata_text(const char *path, char **text, struct wsr_err *err)
{
	char *raw = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	int ret = -1;

	if (read_file(path, &raw, &len, MAX_METADATA, err) < 0)
		goto out;
	if (len == 0) {
		err_input(err, "%s: the metadata file is empty: the trace is truncated", path);
		goto out;
	}
	if (len >= 4 && le32((unsigned char *)raw) == TSDL_MAGIC) {
		out = malloc(len + 1);
		if (out == NULL) {
			err_push(err, "out of memory");
			goto out;
		}
		size_t off = 0;
		while (off < len) {
			const unsigned char *h = (const unsigned char *)raw + off;
			if (len - off < 37) {
				err_input(
					err,
					"%s: metadata packet header at offset %zu is cut short: the "
					"metadata is truncated",
					path, off);
				goto out;
			}
			if (le32(h) != TSDL_MAGIC) {
				err_input(
					err,
					"%s: bad metadata packet magic at offset %zu: the metadata "
					"is corrupted",
					path, off);
				goto out;
			}
			uint32_t content = le32(h + 24), packet = le32(h + 28);
			if (packet % 8 != 0 || content % 8 != 0 || content > packet ||
			    content / 8 < 37) {
				err_input(err,
					  "%s: metadata packet at offset %zu has sizes %u/%u bits: "
					  "the metadata is corrupted",
					  path, off, content, packet);
				goto out;
			}
			if (packet / 8 > len - off) {
				err_input(err,
					  "%s: metadata packet at offset %zu needs %u bytes, the "
					  "file has %zu: the metadata is truncated",
					  path, off, packet / 8, len - off);
				goto out;
			}
			memcpy(out + olen, h + 37, content / 8 - 37);
			olen += content / 8 - 37;
			off += packet / 8;
		}
		out[olen] = '\0';
	} else if (strncmp(raw, "/* CTF", 6) == 0) {
		out = raw;
		raw = NULL;
		olen = len;
	} else {
		err_input(err, "%s: not CTF metadata (neither packetized nor \"/* CTF\" text)",
			  path);
		goto out;
	}
	/* Truncated metadata: braces that do not balance, or text cut mid-statement. */
	int depth = 0;
	bool in_str = false, in_comment = false;
	for (size_t i = 0; i < olen; i++) {
		char c = out[i];
		if (in_comment) {
			if (c == '*' && i + 1 < olen && out[i + 1] == '/') {
				in_comment = false;
				i++;
			}
		} else if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '/' && i + 1 < olen && out[i + 1] == '*') {
			in_comment = true;
			i++;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{') {
			depth++;
		} else if (c == '}') {
			depth--;
		} else if (c == '\0') {
			err_input(err,
				  "%s: NUL byte in the metadata text: the metadata is corrupted",
				  path);
			goto out;
		}
		if (depth < 0)
			break;
	}
	size_t last = olen;
	while (last > 0 && (out[last - 1] == ' ' || out[last - 1] == '\n' ||
			    out[last - 1] == '\t' || out[last - 1] == '\r'))
		last--;
	if (depth != 0 || in_str || in_comment || last == 0 || out[last - 1] != ';') {
		err_input(err,
			  "%s: the metadata text ends inside a declaration (brace depth %d): the "
			  "metadata is truncated or corrupted",
			  path, depth);
		goto out;
	}
	if (strstr(out, "trace {") == NULL && strstr(out, "trace{") == NULL) {
		err_input(err, "%s: the metadata declares no trace block: it is corrupted", path);
		goto out;
	}
	*text = out;
	out = NULL;
	ret = 0;
out:
	free(raw);
	free(out);
	return ret;
}

/* True when the metadata declares LTTng's packet header and context layout:
 * header magic, uuid[16], stream_id, stream_instance_id (32 bytes); context
 * timestamp_begin, timestamp_end, content_size, packet_size (uint64 each),
 * all byte-aligned and little-endian. */
static bool lttng_layout(const char *t)
{
	const char *h = strstr(t, "packet.header := struct {");
	const char *c = strstr(t, "struct packet_context {");

	if (h == NULL || c == NULL || strstr(t, "byte_order = le;") == NULL)
		return false;
	const char *seq_h[] = {"uint32_t magic;", "uint8_t  uuid[16];", "uint32_t stream_id;",
			       "uint64_t stream_instance_id;", "}"};
	const char *seq_c[] = {"timestamp_begin;", "timestamp_end;", "uint64_t content_size;",
			       "uint64_t packet_size;", "}"};
	const char *p = h;
	for (size_t i = 0; i < 5; i++) {
		const char *n = strstr(p, seq_h[i]);
		if (n == NULL)
			return false;
		/* Nothing else may sit between the fields. */
		if (i > 0 && i < 4 && strchr(p, ';') < n)
			return false;
		p = n + strlen(seq_h[i]);
	}
	p = c;
	for (size_t i = 0; i < 4; i++) {
		const char *n = strstr(p, seq_c[i]);
		if (n == NULL)
			return false;
		if (i > 0 && strchr(p, ';') < n)
			return false;
		p = n + strlen(seq_c[i]);
	}
	return strstr(t, "typealias integer { size = 64; align = 8; signed = false; } := "
			 "uint64_t;") != NULL &&
	       strstr(t, "typealias integer { size = 32; align = 8; signed = false; } := "
			 "uint32_t;") != NULL;
}

static int64_t clock_offset_ns(const char *t)
{
	const char *c = strstr(t, "clock {");
	long long freq = 0, off = 0, off_s = 0;

	if (c == NULL)
		return INT64_MIN;
	const char *f = strstr(c, "freq = ");
	const char *o = strstr(c, "\toffset = ");
	const char *os = strstr(c, "offset_s = ");
	if (f == NULL || sscanf(f, "freq = %lld", &freq) != 1 || freq != 1000000000)
		return INT64_MIN;
	if (o != NULL)
		sscanf(o, "\toffset = %lld", &off);
	if (os != NULL)
		sscanf(os, "offset_s = %lld", &off_s);
	long long ns;
	if (__builtin_mul_overflow(off_s, 1000000000LL, &ns) ||
	    __builtin_add_overflow(ns, off, &ns))
		return INT64_MIN;
	return ns;
}

/*
 * Walks the packets of one LTTng stream file. With its packet index (IX, N
 * entries; N is SIZE_MAX when the stream has no index file), every packet
 * must be the one the index lists at that position, and every packet the
 * index lists must be there: a file cut at a packet boundary, or emptied,
 * is complete packet by packet and only the index tells what is missing.
 */
static int check_stream(struct pre *pr, const char *path, off_t size, int64_t offset_ns,
			const struct ctf_index_entry *ix, size_t nix)
{
	int fd = open(path, O_RDONLY);
	unsigned char h[64];
	uint64_t off = 0;
	size_t k = 0;
	int ret = -1;

	if (fd < 0) {
		err_push(pr->err, "opening %s: %s", path, strerror(errno));
		return -1;
	}
	while (off < (uint64_t)size) {
		ssize_t n = pread(fd, h, sizeof(h), (off_t)off);
		if (n < 0) {
			err_push(pr->err, "reading %s: %s", path, strerror(errno));
			goto out;
		}
		if (n < (ssize_t)sizeof(h)) {
			err_input(pr->err,
				  "%s: packet header at offset %" PRIu64
				  " is cut short: the stream file is truncated",
				  path, off);
			goto out;
		}
		if (le32(h) != CTF_MAGIC) {
			err_input(pr->err,
				  "%s: bad packet magic 0x%08x at offset %" PRIu64
				  ": the stream file is corrupted",
				  path, le32(h), off);
			goto out;
		}
		uint64_t tb = le64(h + 32), te = le64(h + 40);
		uint64_t content = le64(h + 48), packet = le64(h + 56);
		if (packet == 0 || packet % 8 != 0 || content > packet || packet / 8 < 64 ||
		    tb > te) {
			err_input(pr->err,
				  "%s: packet at offset %" PRIu64 " has impossible sizes (%" PRIu64
				  "/%" PRIu64 " bits) or times: the stream file is corrupted",
				  path, off, content, packet);
			goto out;
		}
		if (packet / 8 > (uint64_t)size - off) {
			err_input(pr->err,
				  "%s: packet at offset %" PRIu64 " needs %" PRIu64
				  " bytes, the file has %" PRIu64 ": the stream file is truncated",
				  path, off, packet / 8, (uint64_t)size - off);
			goto out;
		}
		if (nix != SIZE_MAX) {
			if (k >= nix) {
				err_input(
					pr->err,
					"%s: the file holds more packets than its packet index "
					"lists (%zu): the index is truncated or belongs to another "
					"stream",
					path, nix);
				goto out;
			}
			const struct ctf_index_entry *e = &ix[k];
			if (e->offset != off || e->packet_size != packet ||
			    e->content_size != content || e->ts_begin != tb || e->ts_end != te) {
				err_input(pr->err,
					  "%s: packet %zu (offset %" PRIu64 ", %" PRIu64
					  " bytes) is not the one its packet index lists there "
					  "(offset %" PRIu64 ", %" PRIu64
					  " bytes): packets are missing or the stream file is "
					  "corrupted",
					  path, k, off, packet / 8, e->offset, e->packet_size / 8);
				goto out;
			}
		}
		k++;
		pr->packets++;
		pr->packet_bytes += packet / 8;
		int64_t b, e;
		if (offset_ns != INT64_MIN && content > 64 * 8 && te <= INT64_MAX &&
		    !__builtin_add_overflow(offset_ns, (int64_t)tb, &b) &&
		    !__builtin_add_overflow(offset_ns, (int64_t)te, &e)) {
			if (pr->begin_ns == 0 || b < pr->begin_ns)
				pr->begin_ns = b;
			if (e > pr->end_ns)
				pr->end_ns = e;
		}
		off += packet / 8;
	}
	if (nix != SIZE_MAX && k < nix) {
		uint64_t want = 0;
		for (size_t i = k; i < nix; i++)
			want += ix[i].packet_size / 8;
		if (size == 0)
			err_input(pr->err,
				  "%s: the stream file is empty but its packet index lists %zu "
				  "packets (%" PRIu64 " bytes): the stream file was emptied or "
				  "never written",
				  path, nix, want);
		else
			err_input(
				pr->err,
				"%s: %zu of the %zu packets that its packet index lists are missing "
				"(%" PRIu64 " bytes from offset %" PRIu64 "; the file has %" PRIu64
				" bytes): the stream file is truncated",
				path, nix - k, nix, want, off, (uint64_t)size);
		goto out;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

/* Loads DIR/index/NAME.idx into *IX / *NIX; *NIX = SIZE_MAX when absent. */
static int stream_index(struct pre *pr, const char *dir, const char *name,
			struct ctf_index_entry **ix, size_t *nix)
{
	char path[PATH_MAX + 512];
	struct stat st;

	*ix = NULL;
	*nix = SIZE_MAX;
	snprintf(path, sizeof(path), "%s/index/%s.idx", dir, name);
	if (stat(path, &st) != 0)
		return 0;
	return ctf_index_load(path, ix, nix, pr->err);
}

static int check_metadata_dir(struct pre *pr, const char *meta_path)
{
	char *text = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 256];
	DIR *d = NULL;
	struct dirent *de;
	int ret = -1;

	if (metadata_text(meta_path, &text, pr->err) < 0)
		goto out;
	bool lttng = lttng_layout(text);
	int64_t offset_ns = clock_offset_ns(text);
	snprintf(dir, sizeof(dir), "%s", meta_path);
	char *slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	/* The stream files are the regular files beside the metadata. */
	d = opendir(dir);
	if (d == NULL) {
		err_push(pr->err, "opening %s: %s", dir, strerror(errno));
		goto out;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (de->d_name[0] == '.' || strcmp(de->d_name, "metadata") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		pr->streams++;
		pr->stream_bytes += (uint64_t)st.st_size;
		if (lttng) {
			struct ctf_index_entry *ix = NULL;
			size_t nix;
			int rc = stream_index(pr, dir, de->d_name, &ix, &nix);
			if (rc == 0)
				rc = check_stream(pr, path, st.st_size, offset_ns, ix, nix);
			free(ix);
			if (rc < 0)
				goto out;
		}
	}
	char **nd = realloc(pr->dirs, (size_t)(pr->ndirs + 1) * sizeof(*nd));
	if (nd == NULL || (nd[pr->ndirs] = strdup(dir)) == NULL) {
		if (nd != NULL)
			pr->dirs = nd;
		err_push(pr->err, "out of memory");
		goto out;
	}
	pr->dirs = nd;
	pr->ndirs++;
	ret = 0;
out:
	if (d != NULL)
		closedir(d);
	free(text);
	return ret;
}

static int walk_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F) {
		g_pre->files++;
		const char *base = strrchr(path, '/');
		base = base != NULL ? base + 1 : path;
		if (strcmp(base, "metadata") == 0 && S_ISREG(st->st_mode)) {
			g_pre->metadata++;
			if (g_pre->first_meta[0] == '\0')
				snprintf(g_pre->first_meta, sizeof(g_pre->first_meta), "%s", path);
			if (check_metadata_dir(g_pre, path) < 0) {
				g_pre->failed = 1;
				return 1;
			}
		}
	} else if (type == FTW_DNR) {
		err_push(g_pre->err, "%s: cannot read the directory", path);
		g_pre->failed = 1;
		return 1;
	}
	return 0;
}

static int precheck(struct pre *pr, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		err_input(pr->err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		err_input(pr->err,
			  "%s: not a directory: give the trace directory that lttng or `wsr run` "
			  "wrote",
			  dir);
		return -1;
	}
	g_pre = pr;
	int rc = nftw(dir, walk_cb, 32, FTW_PHYS);
	g_pre = NULL;
	if (pr->failed || rc < 0) {
		if (rc < 0 && !pr->failed)
			err_push(pr->err, "walking %s: %s", dir, strerror(errno));
		return -1;
	}
	if (pr->files == 0) {
		err_input(pr->err, "%s: empty directory: no trace was recorded there", dir);
		return -1;
	}
	if (pr->metadata == 0) {
		err_input(pr->err, "%s: not a CTF trace: no metadata file under it", dir);
		return -1;
	}
	if (pr->streams == 0 || pr->stream_bytes == 0) {
		err_input(pr->err, "%s: the trace has no stream data: no event was recorded", dir);
		return -1;
	}
	return 0;
}

/* ---- what `wsr run` recorded (wsr-run.json) ---- */

/*
 * The run record says how many packets (and bytes) the packet indexes held
 * when `wsr run` finished: a stream file removed together with its index,
 * or an index and its stream cut alike, shows only here.
 */
static int run_info_check(const struct pre *pr, const struct run_info *ri, const char *dir,
			  struct wsr_err *err)
{
	if (!ri->found || ri->packets < 0)
		return 0;
	if (pr->packets == (uint64_t)ri->packets &&
	    (ri->stream_bytes < 0 || pr->packet_bytes == (uint64_t)ri->stream_bytes))
		return 0;
	if (pr->packets < (uint64_t)ri->packets || pr->packet_bytes < (uint64_t)ri->stream_bytes)
		err_input(err,
			  "%s: %" PRIu64 " packets (%" PRIu64 " bytes) are missing: wsr-run.json "
			  "says the recording wrote %" PRId64 " packets (%" PRId64
			  " bytes), the stream files hold %" PRIu64 " (%" PRIu64
			  " bytes): a stream file and its index were removed or cut",
			  dir,
			  pr->packets < (uint64_t)ri->packets ? (uint64_t)ri->packets - pr->packets
							      : 0,
			  pr->packet_bytes < (uint64_t)ri->stream_bytes
				  ? (uint64_t)ri->stream_bytes - pr->packet_bytes
				  : 0,
			  ri->packets, ri->stream_bytes, pr->packets, pr->packet_bytes);
	else
		err_input(err,
			  "%s: the stream files hold %" PRIu64 " packets (%" PRIu64
			  " bytes), more than the %" PRId64 " (%" PRId64
			  " bytes) that wsr-run.json recorded: the trace is not that run's",
			  dir, pr->packets, pr->packet_bytes, ri->packets, ri->stream_bytes);
	return -1;
}

/* meta rows from the run record: program, command, exit_status, exit_signal,
 * and procname when the trace's environment gave none (per-UID buffers). */
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
	db_get_meta_text(db, "procname", name, sizeof(name));
	if (name[0] == '\0' &&
	    db_meta_text(db, "procname", base != NULL ? base + 1 : ri->program, err) < 0)
		return -1;
	return 0;
}

/* ---- the decoder child ---- */

struct writer {
	int fd;
	char *buf;
	size_t len, cap;
};

static int wflush(struct writer *w)
{
	size_t off = 0;

	while (off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)n;
	}
	w->len = 0;
	return 0;
}

static int child_cb(void *ctx, const struct wsr_rec *r, const char *extra)
{
	struct writer *w = ctx;

	if (w->len + r->size > w->cap && wflush(w) < 0)
		return -1;
	memcpy(w->buf + w->len, r, sizeof(*r));
	if (r->extra_len > 0)
		memcpy(w->buf + w->len + sizeof(*r), extra, r->extra_len);
	w->len += r->size;
	if (r->type == REC_END || r->type == REC_ERROR)
		return wflush(w);
	return 0;
}

static void child_main(int fd, const struct pre *pr)
{
	struct writer w = {.fd = fd, .cap = 1 << 20};
	struct wsr_err err;

	err_init(&err);
	w.buf = malloc(w.cap);
	if (w.buf == NULL)
		_exit(1);
	if (decode_trace_dirs((const char *const *)pr->dirs, pr->ndirs, child_cb, &w, &err) < 0) {
		/* The causes, innermost first, one per line (the parent pushes
		 * them one by one so none is cut short). */
		char msg[WSR_REC_MAX_EXTRA / 2];
		size_t off = 0;
		msg[0] = '\0';
		for (int i = 0; i < err.n && off + 2 < sizeof(msg); i++) {
			int k = snprintf(msg + off, sizeof(msg) - off, "%s%s", i ? "\n" : "",
					 err.msg[i]);
			if (k < 0)
				break;
			off += (size_t)k;
		}
		struct wsr_rec r = {.type = REC_ERROR};
		r.extra_len = (uint32_t)strlen(msg) + 1;
		r.size = (uint32_t)((sizeof(r) + r.extra_len + 7) & ~(size_t)7);
		w.len = 0;
		child_cb(&w, &r, msg);
		_exit(2);
	}
	wflush(&w);
	_exit(0);
}

/* ---- the parent ---- */

static void progress(const struct ingest_opts *o, struct derive *dv, const struct pre *pr,
		     double t0)
{
	if (!o->progress)
		return;
	double el = now_s() - t0;
	uint64_t n = derive_event_count(dv);
	double rate = el > 0 ? (double)n / el : 0;
	if (pr->end_ns > pr->begin_ns) {
		double pct = 100.0 * (double)(derive_last_ts(dv) - pr->begin_ns) /
			     (double)(pr->end_ns - pr->begin_ns);
		if (pct < 0)
			pct = 0;
		if (pct > 100)
			pct = 100;
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events, %.2fM events/s, %3.0f%%  ", n,
			rate / 1e6, pct);
	} else {
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events, %.2fM events/s  ", n,
			rate / 1e6);
	}
}

/* The progress line during the steps after decoding (closing the intervals,
 * building the indexes), which take a while on big traces and show no count. */
static void progress_phase(const struct ingest_opts *o, struct derive *dv, const char *what)
{
	if (!o->progress)
		return;
	fprintf(stderr, "\rwsr ingest: %" PRIu64 " events decoded; %s...%20s",
		derive_event_count(dv), what, "");
}

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

int ingest_trace(const char *dir, const char *out, const struct ingest_opts *o,
		 struct ingest_stats *stats, struct wsr_err *err)
{
	struct pre pr = {.err = err, .root = dir};
	char tmp[PATH_MAX];
	sqlite3 *db = NULL;
	struct derive *dv = NULL;
	int fds[2] = {-1, -1};
	pid_t pid = -1;
	char *buf = NULL;
	size_t cap = 8 << 20, len = 0;
	bool got_end = false, timed_out = false;
	char child_msg[WSR_REC_MAX_EXTRA] = "";
	int ret = -1, lock_fd = -1;
	struct stat st;
	struct run_info ri;
	double t0 = now_s();

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", out, (int)getpid()) >= (int)sizeof(tmp)) {
		err_input(err, "%s: path too long", out);
		return -1;
	}
	if (lstat(out, &st) == 0) {
		if (!o->force) {
			err_input(err, "%s exists: pass --force to replace it", out);
			return -1;
		}
		/* --force replaces a wsr database, nothing else. */
		if (db_check_replaceable(out, err) < 0)
			return -1;
	}
	remove_stale_tmps(out);
	lock_fd = tmp_create(tmp, out, err);
	if (lock_fd < 0)
		return -1;
	if (precheck(&pr, dir) < 0)
		goto out;

	if (db_create(tmp, &db, err) < 0)
		goto out;
	if (run_info_load(db, dir, &ri, err) < 0 || run_info_check(&pr, &ri, dir, err) < 0)
		goto out;
	dv = derive_create(db, dir, err);
	if (dv == NULL)
		goto out;
	if (o->vpid > 0)
		derive_set_vpid(dv, o->vpid);
	buf = malloc(cap);
	if (buf == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (pipe(fds) < 0) {
		err_push(err, "pipe: %s", strerror(errno));
		goto out;
	}
	/* A 1 MiB pipe (the default is 64 KiB): the decoder writes 1 MiB at a
	 * time, so each side sleeps and wakes up 16 times less often. Best
	 * effort: the limit may be lower (/proc/sys/fs/pipe-max-size). */
	(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	fflush(NULL);
	pid_t parent = getpid();
	pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		close(lock_fd);
		/* Killed with the parent, whatever kills it (a parent that died
		 * before the prctl is seen by the check after it). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(1);
		/* bt2 may print assertion failures: keep them off the user's terminal
		 * unless asked; the parent reports a crash itself. */
		if (!o->verbose) {
			int dn = open("/dev/null", O_WRONLY);
			if (dn >= 0) {
				dup2(dn, 2);
				close(dn);
			}
		}
		child_main(fds[1], &pr);
	}
	close(fds[1]);
	fds[1] = -1;

	double last_data = now_s(), last_progress = 0;
	for (;;) {
		if (interrupted) {
			err_push(err, "interrupted by signal %d", (int)interrupted);
			goto out;
		}
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		int pr_rc = poll(&pfd, 1, 250);
		if (pr_rc < 0 && errno != EINTR) {
			err_push(err, "poll: %s", strerror(errno));
			goto out;
		}
		double t = now_s();
		if (pr_rc <= 0) {
			if (t - last_data > o->timeout_s) {
				timed_out = true;
				break;
			}
			continue;
		}
		ssize_t n = read(fds[0], buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_push(err, "reading from the decoder: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		last_data = t;
		len += (size_t)n;
		size_t off = 0;
		while (len - off >= sizeof(struct wsr_rec)) {
			const struct wsr_rec *r = (const struct wsr_rec *)(buf + off);
			if (r->size < sizeof(*r) || r->size > sizeof(*r) + WSR_REC_MAX_EXTRA + 8 ||
			    r->extra_len > r->size - sizeof(*r)) {
				err_push(err, "internal: bad record from the decoder");
				goto out;
			}
			if (len - off < r->size)
				break;
			const char *extra = r->extra_len > 0 ? buf + off + sizeof(*r) : NULL;
			if (r->type == REC_END) {
				got_end = true;
			} else if (r->type == REC_ERROR) {
				snprintf(child_msg, sizeof(child_msg), "%.*s", (int)r->extra_len,
					 extra != NULL ? extra : "");
			} else if (derive_rec(dv, r, extra, err) < 0) {
				goto out;
			}
			off += r->size;
		}
		memmove(buf, buf + off, len - off);
		len -= off;
		if (o->progress && t - last_progress > 0.25) {
			progress(o, dv, &pr, t0);
			last_progress = t;
		}
	}

	int status = 0;
	if (timed_out) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		pid = -1;
		err_input(err,
			  "%s: babeltrace2 made no progress for %d s after %" PRIu64
			  " events: the metadata or a stream is probably truncated or corrupted",
			  dir, o->timeout_s, derive_event_count(dv));
		goto out;
	}
	if (waitpid(pid, &status, 0) < 0) {
		err_push(err, "waitpid: %s", strerror(errno));
		goto out;
	}
	pid = -1;
	if (WIFSIGNALED(status)) {
		err_input(err,
			  "%s: babeltrace2 crashed (%s) after %" PRIu64
			  " events: a stream or the metadata is corrupted",
			  dir, strsignal(WTERMSIG(status)), derive_event_count(dv));
		goto out;
	}
	if (child_msg[0] != '\0' || WEXITSTATUS(status) != 0 || !got_end) {
		if (child_msg[0] == '\0')
			err_push(err, "the decoder exited with status %d", WEXITSTATUS(status));
		for (char *line = child_msg; line != NULL && *line != '\0';) {
			char *nl = strchr(line, '\n');
			if (nl != NULL)
				*nl = '\0';
			err_push(err, "%s", line);
			line = nl != NULL ? nl + 1 : NULL;
		}
		err_input(err, "%s: cannot decode the trace after %" PRIu64 " events", dir,
			  derive_event_count(dv));
		goto out;
	}
	if (o->progress)
		progress(o, dv, &pr, t0);
	if (derive_event_count(dv) == 0) {
		err_input(err, "%s: the trace holds no events", dir);
		goto out;
	}
	if (derive_wsr_event_count(dv) == 0) {
		err_input(err,
			  "%s: no wsr events among its %" PRIu64
			  " events: record a libwsr program with the `wsr:*` events enabled",
			  dir, derive_event_count(dv));
		goto out;
	}
	double t_dec = now_s();
	progress_phase(o, dv, "closing the intervals");
	if (derive_finish(dv, err) < 0 || run_info_meta(db, &ri, err) < 0)
		goto out;
	/* No init event: gomaxprocs and the runtime version are unknown. Say
	 * so (meta.init_missing, the report) rather than show a 0. */
	int64_t gmp;
	bool init_missing = db_get_meta_int(db, "gomaxprocs", &gmp) != 0;
	if (init_missing && db_meta_int(db, "init_missing", 1, err) < 0)
		goto out;
	double t_fin = now_s();
	progress_phase(o, dv, "building the indexes");
	if (db_finish(db, err) < 0)
		goto out;
	if (o->progress)
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events decoded; done.%40s\n",
			derive_event_count(dv), "");
	if (getenv("WSR_INGEST_TIMING") != NULL)
		fprintf(stderr, "wsr ingest: decode+derive %.2f s, finish %.2f s, indexes %.2f s\n",
			t_dec - t0, t_fin - t_dec, now_s() - t_fin);
	if (stats != NULL) {
		stats->events = derive_event_count(dv);
		stats->seconds = now_s() - t0;
		stats->init_missing = init_missing;
	}
	derive_destroy(dv);
	dv = NULL;
	if (sqlite3_close(db) != SQLITE_OK) {
		err_push(err, "closing %s: %s", tmp, sqlite3_errmsg(db));
		db = NULL;
		goto out;
	}
	db = NULL;
	if (rename(tmp, out) < 0) {
		err_push(err, "renaming %s to %s: %s", tmp, out, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(buf);
	derive_destroy(dv);
	if (db != NULL)
		sqlite3_close(db);
	if (ret < 0 && lock_fd >= 0)
		unlink(tmp);
	if (lock_fd >= 0)
		close(lock_fd);
	for (int i = 0; i < pr.ndirs; i++)
		free(pr.dirs[i]);
	free(pr.dirs);
	return ret;
}

enum {
	OPT_TIMEOUT = CLI_LONG,
	OPT_VPID,
	OPT_VERBOSE
};

static const struct cli_opt ingest_opts[] = {
	{"output", 'o', "FILE", "the database to write (default TRACE_DIR/trace.db)"},
	{"force", 'f', NULL, "replace an existing wsr database (never another file)"},
	{"timeout", OPT_TIMEOUT, "DUR",
	 "give up when the decoder makes no progress for DUR, whole\n"
	 "seconds (default 30s)"},
	{"vpid", OPT_VPID, "PID", "analyse only the events of process PID"},
	{"quiet", 'q', NULL, "no progress line and no summary line"},
	{"verbose", OPT_VERBOSE, NULL, "let babeltrace2 print its own messages on stderr"},
	{NULL, 0, NULL, NULL},
};

static const struct cli ingest_cli = {
	.prog = "wsr ingest",
	.synopsis = "wsr ingest TRACE_DIR [-o trace.db] [--force] [--timeout DUR] [--vpid PID] "
		    "[--quiet] [--verbose]",
	.about = "Reads the CTF trace under TRACE_DIR (babeltrace2) and writes one SQLite\n"
		 "database (default TRACE_DIR/trace.db); see wsr-ingest(1) and docs/schema.md.",
	.opts = ingest_opts,
	.min_args = 1,
	.max_args = 1,
};

struct ingest_args {
	struct ingest_opts o;
	const char *out;
	bool quiet;
};

static int ingest_opt(void *ctx, int key, const char *arg)
{
	struct ingest_args *a = ctx;
	int64_t ns;
	char *end;
	long v;

	switch (key) {
	case 'f':
		a->o.force = true;
		break;
	case 'q':
		a->quiet = true;
		break;
	case OPT_VERBOSE:
		a->o.verbose = true;
		break;
	case 'o':
		a->out = arg;
		break;
	case OPT_VPID:
		v = strtol(arg, &end, 10);
		if (*end != '\0' || v < 1) {
			fprintf(stderr, "wsr ingest: error: bad --vpid '%s'\n", arg);
			return 2;
		}
		a->o.vpid = v;
		break;
	case OPT_TIMEOUT:
		if (duration_parse(arg, &ns) < 0 || ns % 1000000000 != 0 || ns > 86400000000000) {
			fprintf(stderr,
				"wsr ingest: error: bad --timeout '%s': whole seconds from 1s to "
				"86400s, e.g. 30s (" DURATION_HINT ")\n",
				arg);
			return 2;
		}
		a->o.timeout_s = (int)(ns / 1000000000);
		break;
	}
	return 0;
}

int ingest_main(const char *dir, const char *out, const struct ingest_opts *o, bool quiet)
{
	char outbuf[PATH_MAX];
	struct ingest_stats stats = {0};
	struct sigaction sa = {.sa_handler = on_signal}, old[3];
	static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
	struct wsr_err err;
	int ret;

	err_init(&err);
	if (out == NULL) {
		snprintf(outbuf, sizeof(outbuf), "%s/trace.db", dir);
		out = outbuf;
	}
	/* A stop signal makes ingest_trace() remove its temporary file and fail. */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	ret = ingest_trace(dir, out, o, &stats, &err);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (ret < 0) {
		if (o->progress)
			fputc('\n', stderr);
		err_print(&err, "wsr ingest", stderr);
		/* Interrupted: 128 + N, as a shell reports a process killed by signal N. */
		return interrupted ? 128 + (int)interrupted : err.exit_code;
	}
	if (stats.init_missing)
		fprintf(stderr,
			"wsr ingest: warning: the trace has no init event (the recording "
			"started after the program did): gomaxprocs and the runtime version "
			"are unknown (meta.init_missing = 1)\n");
	if (!quiet)
		fprintf(stderr, "wsr ingest: %" PRIu64 " events in %.2f s (%.2fM events/s) -> %s\n",
			stats.events, stats.seconds,
			stats.seconds > 0 ? (double)stats.events / stats.seconds / 1e6 : 0.0, out);
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_args a = {.o = {.timeout_s = 30, .progress = isatty(2)}};
	int first, rc = cli_parse(&ingest_cli, argc, argv, ingest_opt, &a, &first);

	if (rc >= 0)
		return rc;
	if (a.quiet)
		a.o.progress = false;
	return ingest_main(argv[first], a.out, &a.o, a.quiet);
}
