/*
 * fuzz-derive.c - libFuzzer target: the event validation and the state
 * machines of analyzer/derive.c, fed decoded records (rec.h) made from the
 * fuzz input, then derive_finish(), db_finish() and metrics_load().
 *
 * Design. fuzz-ingest reaches derive.c only through babeltrace2, which
 * rejects most mutated streams long before an odd field value gets through;
 * this target skips the CTF layer and gives derive.c any sequence of
 * records the decoder could send, thousands of inputs a second. Each
 * 16-byte chunk of the input is one record:
 *   byte 0      kind: 0..11 an event, 12 discarded events/packets,
 *               13 a meta entry, 14 a stream re-declaration, 15 a foreign
 *               event; bit 4: the time goes back by the delta instead.
 *   byte 1      catalog event id (mod EV_COUNT + 1: EV_WSR_UNKNOWN too)
 *   byte 2      bits 0-1 stream; bits 2-7 fields to drop (p, m, g, a1,
 *               a2, ts) when bit 2 of byte 14 is set
 *   bytes 3-4   time delta (ns, little-endian)
 *   byte 5, 6   p, m (signed; -1 is "none" as in the catalog)
 *   byte 7      g (0..255); with bit 5 of byte 0 set, 2^48 + that
 *   bytes 8-13  a1, a2, a3 (signed 16-bit)
 *   byte 14     bit 0: a second process's vpid; bit 1: streams carry a cpu
 *   byte 15     the value of an extra text (init's version, schedtrace
 *               JSON numbers, a foreign event's name)
 * The records keep the decoder's contract (rec.h): a stream is declared
 * before a record names it, stream indices are small, extra text is
 * NUL-terminated, ev is a catalog id, EV_WSR_UNKNOWN or EV_FOREIGN.
 *
 * Invariants:
 *   - derive_rec() either accepts a record or fails with a cause; after the
 *     first failure the input ends (as in ingest.c).
 *   - When every record was accepted and derive_finish() and db_finish()
 *     succeed, metrics_load() succeeds on the database.
 *   - WSR_FUZZ_VERBOSE=1 prints why an input was rejected (to check seeds).
 *   - Each input gets a fresh in-memory database: a copy of the one
 *     db_create() made at start (sqlite3_deserialize), since creating the
 *     schema per input would cost more than the rest of the run.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "blockvtab.h"
#include "db.h"
#include "derive.h"
#include "err.h"
#include "metrics.h"
#include "rec.h"

#define CHUNK 16
#define NSTREAMS 4

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *schema_image; /* a database just made by db_create(), serialized */
static sqlite3_int64 schema_size;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct wsr_err err;
	sqlite3 *db = NULL;

	(void)argc;
	(void)argv;
	err_init(&err);
	if (db_create(":memory:", &db, &err) < 0 || db_exec(db, "COMMIT", &err) < 0) {
		err_print(&err, "fuzz-derive: db_create", stderr);
		exit(1);
	}
	schema_image = sqlite3_serialize(db, "main", &schema_size, 0);
	if (schema_image == NULL) {
		fprintf(stderr, "fuzz-derive: sqlite3_serialize failed\n");
		exit(1);
	}
	sqlite3_close(db);
	return 0;
}

/* A fresh in-memory database with the schema and an open transaction, as
 * db_create() leaves it, without paying for creating the schema again. */
static sqlite3 *fresh_db(void)
{
	struct wsr_err err;
	sqlite3 *db = NULL;
	unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)schema_size);

	err_init(&err);
	if (copy == NULL || sqlite3_open(":memory:", &db) != SQLITE_OK) {
		fprintf(stderr, "fuzz-derive: out of memory\n");
		abort();
	}
	if (blockvtab_register(db) != SQLITE_OK) {
		fprintf(stderr, "fuzz-derive: registering wsr_blocks\n");
		abort();
	}
	memcpy(copy, schema_image, (size_t)schema_size);
	if (sqlite3_deserialize(db, "main", copy, schema_size, schema_size,
				SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) !=
		    SQLITE_OK ||
	    db_exec(db, "PRAGMA journal_mode = OFF; PRAGMA temp_store = MEMORY; BEGIN", &err) < 0) {
		err_print(&err, "fuzz-derive: loading the schema", stderr);
		abort();
	}
	return db;
}

static int16_t s16(const uint8_t *p)
{
	return (int16_t)(uint16_t)(p[0] | p[1] << 8);
}

/* Builds the extra text of an event the way decode.c does. */
static uint32_t make_extra(const struct wsr_rec *r, uint8_t v, char *buf, size_t size)
{
	int n;

	if (r->ev == EV_INIT) {
		n = snprintf(buf, size, "0.%u.%u", v >> 4, v & 15);
	} else if (r->ev == EV_SCHEDTRACE) {
		n = snprintf(buf, size,
			     "{\"gomaxprocs\":%d,\"idleprocs\":%d,\"threads\":%d,"
			     "\"spinningthreads\":%d,\"needspinning\":%d,\"idlethreads\":%d,"
			     "\"runqueue\":%d,\"runq\":[%d,%d]}",
			     v & 7, (v >> 3) & 3, v & 15, v & 1, (v >> 1) & 1, v >> 5, v, v & 3,
			     v >> 6);
	} else if (r->ev >= EV_COUNT) {
		/* "name\0{json}" */
		n = snprintf(buf, size, "%s%u", r->ev == EV_FOREIGN ? "lttng_ust_statedump:x" : "wsr:x",
			     v);
		int k = snprintf(buf + n + 1, size - (size_t)n - 1, "{\"v\":%d}", v);
		n += 1 + k;
	} else {
		return 0;
	}
	return (uint32_t)n + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool declared[NSTREAMS] = {false};
	struct wsr_err err;
	struct derive *dv = NULL;
	sqlite3 *db = NULL;
	char extra[512];
	int64_t ts = 1000000;
	bool ok = true;

	err_init(&err);
	db = fresh_db();
	dv = derive_create(db, "fuzz", &err);
	if (dv == NULL) {
		err_print(&err, "fuzz-derive: derive_create", stderr);
		abort();
	}
	for (size_t off = 0; ok && off + CHUNK <= size; off += CHUNK) {
		const uint8_t *c = data + off;
		struct wsr_rec r = {0};
		int kind = c[0] & 15;
		uint16_t stream = c[2] & (NSTREAMS - 1);

		if (!declared[stream] || kind == 14) {
			struct wsr_rec s = {.type = REC_STREAM, .stream = stream};
			int n = snprintf(extra, sizeof(extra), "channel0_%u", stream);
			s.extra_len = (uint32_t)n + 1;
			s.size = (uint32_t)((sizeof(s) + s.extra_len + 7) & ~7u);
			if (c[14] & 2) {
				s.a1 = stream;
				s.flags |= REC_F_A1;
			}
			if (derive_rec(dv, &s, extra, &err) < 0) {
				ok = false;
				break;
			}
			declared[stream] = true;
			if (kind == 14)
				continue;
		}
		uint16_t delta = (uint16_t)(c[3] | c[4] << 8);
		ts += (c[0] & 16) ? -(int64_t)delta : (int64_t)delta;
		r.stream = stream;
		r.ts = ts;
		if (kind == 13) {
			r.type = REC_META;
			static const char *const keys[] = {"hostname", "procname", "vpid",
							   "tracer_name", "domain", "wsr_version",
							   "trace_name", "x"};
			int n = snprintf(extra, sizeof(extra), "%s", keys[c[1] & 7]);
			int k = snprintf(extra + n + 1, sizeof(extra) - (size_t)n - 1, "%d",
					 s16(c + 8));
			r.extra_len = (uint32_t)(n + 1 + k + 1);
		} else if (kind == 12) {
			r.type = REC_DISCARDED;
			r.a1 = (c[1] & 1) ? REC_DISC_PACKETS : REC_DISC_EVENTS;
			r.flags = REC_F_A1;
			if (!(c[2] & 4)) {
				r.a2 = (uint16_t)s16(c + 10);
				r.flags |= REC_F_A2;
			}
			if (!(c[2] & 8)) {
				r.flags |= REC_F_TS;
			}
			if (!(c[2] & 16)) {
				r.g = ts + s16(c + 12);
				r.flags |= REC_F_G;
			}
		} else {
			r.type = REC_EVENT;
			r.ev = kind == 15 ? EV_FOREIGN : (uint8_t)(c[1] % (EV_COUNT + 1));
			const struct wsr_catalog_entry *ce =
				r.ev < EV_COUNT ? &wsr_catalog[r.ev] : NULL;
			r.flags = REC_F_TS | REC_F_CPU | REC_F_TID | REC_F_VPID;
			r.cpu = stream;
			r.tid = 100 + (int8_t)c[6];
			r.vpid = (c[14] & 1) ? 4243 : 4242;
			if (ce != NULL || r.ev == EV_WSR_UNKNOWN) {
				r.p = (int8_t)c[5];
				r.m = (int8_t)c[6];
				r.flags |= REC_F_P | REC_F_M;
			}
			if (ce == NULL || ce->g != NULL) {
				r.g = (c[0] & 32) ? ((int64_t)1 << 48) + c[7] : c[7];
				r.flags |= ce != NULL ? REC_F_G : 0;
			}
			r.a1 = s16(c + 8);
			r.a2 = s16(c + 10);
			r.a3 = s16(c + 12);
			for (int k = 0; k < 3; k++)
				if (ce != NULL && ce->a[k] != NULL)
					r.flags |= (uint32_t)REC_F_A1 << k;
			/* Fields the decoder could not find in a (foreign) metadata. */
			static const uint32_t drop[6] = {REC_F_P,  REC_F_M,  REC_F_G,
							 REC_F_A1, REC_F_A2, REC_F_TS};
			for (int k = 0; k < 6; k++)
				if ((c[14] & 4) && ((c[2] >> (2 + k)) & 1))
					r.flags &= ~drop[k];
			r.extra_len = make_extra(&r, c[15], extra, sizeof(extra));
		}
		r.size = (uint32_t)((sizeof(r) + r.extra_len + 7) & ~7u);
		if (derive_rec(dv, &r, r.extra_len > 0 ? extra : NULL, &err) < 0)
			ok = false;
	}
	if (ok && derive_finish(dv, &err) == 0 && db_finish(db, &err) == 0) {
		struct metrics *m = calloc(1, sizeof(*m));
		if (m != NULL && metrics_load(db, "fuzz", m, &err) < 0 &&
		    derive_wsr_event_count(dv) > 0) {
			err_print(&err, "fuzz-derive: metrics of a derived trace", stderr);
			abort();
		}
		free(m);
	}
	if (err.n > 0 && getenv("WSR_FUZZ_VERBOSE") != NULL)
		err_print(&err, "fuzz-derive: input rejected", stderr);
	derive_destroy(dv);
	sqlite3_close(db);
	return 0;
}
