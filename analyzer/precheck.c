/*
 * precheck.c - what a trace directory must be before babeltrace2 reads it
 * (precheck.h).
 *
 * The directory exists, holds CTF metadata, the metadata is complete
 * (packet sizes fit the file, braces balance) and, for LTTng's stream
 * layout, every stream packet fits its file, is the one its packet index
 * lists there, and every indexed packet is there; wsr-run.json, when the
 * trace has one, must agree on the count of packets and bytes (a stream cut
 * at a packet boundary decodes without any error: only the index and the
 * run record tell). Babeltrace 2.0.4 loops forever on some truncated
 * metadata and aborts on some corrupted packet headers, so most bad input
 * is caught here with a precise message before bt2 ever sees it.
 *
 * Invariants: reads only; every refusal is err_input (exit 2) naming the
 *   file and what is wrong with it.
 * Concurrency: one thread (nftw's callback reaches its state through a
 *   static pointer, set for the walk only).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctfindex.h"
#include "precheck.h"

#define CTF_MAGIC    0xC1FC1FC1u
#define TSDL_MAGIC   0x75D11D57u
#define MAX_METADATA (64u << 20)

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

int precheck(struct pre *pr, const char *dir)
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
int precheck_run_info(const struct pre *pr, const struct run_info *ri, const char *dir,
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

void precheck_free(struct pre *pr)
{
	for (int i = 0; i < pr->ndirs; i++)
		free(pr->dirs[i]);
	free(pr->dirs);
	pr->dirs = NULL;
	pr->ndirs = 0;
}
