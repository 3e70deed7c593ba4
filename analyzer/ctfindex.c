/*
 * ctfindex.c - reads LTTng's CTF packet index files (see ctfindex.h).
 *
 * Invariants: every read is checked; an entry shorter than the header's
 *   entry length is a truncated index, reported as such.
 * Concurrency: none.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctfindex.h"

#define CTF_INDEX_MAGIC 0xC1F1DCC1u

static uint64_t be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int ctf_index_load(const char *path, struct ctf_index_entry **entries, size_t *n,
		   struct wsr_err *err)
{
	unsigned char hdr[16], *ent = NULL;
	struct ctf_index_entry *v = NULL;
	size_t cnt = 0, cap = 0, got;
	uint32_t major, minor, len;
	int ret = -1;
	FILE *f = fopen(path, "rb");

	*entries = NULL;
	*n = 0;
	if (f == NULL) {
		err_push(err, "opening %s: %s", path, strerror(errno));
		return -1;
	}
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr) || be32(hdr) != CTF_INDEX_MAGIC) {
		err_input(err, "%s: not a CTF packet index (bad or missing header)", path);
		goto out;
	}
	major = be32(hdr + 4);
	minor = be32(hdr + 8);
	len = be32(hdr + 12);
	if (major != 1 || len < 56 || len > 4096) {
		err_input(err, "%s: unsupported index format %u.%u (entry %u bytes)", path, major,
			  minor, len);
		goto out;
	}
	ent = malloc(len);
	if (ent == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	while ((got = fread(ent, 1, len, f)) == len) {
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ctf_index_entry *nv = realloc(v, nc * sizeof(*nv));

			if (nv == NULL) {
				err_push(err, "out of memory");
				goto out;
			}
			v = nv;
			cap = nc;
		}
		struct ctf_index_entry *e = &v[cnt++];

		e->offset = be64(ent);
		e->packet_size = be64(ent + 8);
		e->content_size = be64(ent + 16);
		e->ts_begin = be64(ent + 24);
		e->ts_end = be64(ent + 32);
		e->events_discarded = be64(ent + 40);
		e->has_seq = minor >= 1 && len >= 72;
		e->seq = e->has_seq ? be64(ent + 64) : 0;
	}
	if (ferror(f)) {
		err_push(err, "reading %s: %s", path, strerror(errno));
		goto out;
	}
	if (got != 0) {
		err_input(err,
			  "%s: the index ends inside entry %zu (%zu of %u bytes): it is "
			  "truncated",
			  path, cnt, got, len);
		goto out;
	}
	*entries = v;
	*n = cnt;
	v = NULL;
	ret = 0;
out:
	free(v);
	free(ent);
	fclose(f);
	return ret;
}
