/*
 * decode.c - babeltrace2 messages to wsr records (see decode.h).
 *
 * Design: the libbabeltrace2 C API does the CTF decoding; this file only
 * reads decoded fields. Per event it borrows the payload structure and
 * reads members by the indices cached in an ec_desc for the event class
 * (names are compared once per class, never per event). Integer fields are
 * read as signed or unsigned according to their class, enumerations as
 * their integer value.
 *
 * Invariants:
 *   - Stream and event class caches are keyed by pointer and live as long
 *     as the decoder; a stream's slot is freed at its stream-end message
 *     (bt2 may reuse the address afterwards).
 *   - Records are emitted in message order; REC_STREAM precedes the first
 *     record naming a stream.
 *   - A field missing from an event class leaves its REC_F_* bit unset; the
 *     deriver decides whether that is acceptable (it is not for p and m).
 * Concurrency: single-threaded (the graph's thread).
 * Rejected: reading the text output of the babeltrace2 CLI (slow, lossy,
 *   and forbidden by issue 5); one bt2 plugin call per field by name
 *   (bt_field_structure_borrow_member_field_by_name_const per event cost
 *   ~3x the decode time in a first measurement).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <babeltrace2/babeltrace.h>

#include "decode.h"
#include "sbuf.h"
#include "recframe.h"

#define DEC_MAX_STREAMS 4096
#define DEC_EC_SLOTS    1024

struct ec_desc {
	const bt_event_class *cls;
	uint8_t ev;
	/* integer members: int_member_index() codes (-1: none) */
	int idx_p, idx_m, idx_g, idx_a[3];
	int idx_vtid, idx_vpid; /* payload fields (wsr_tp.h), -1 in older traces */
	int idx_extra;          /* a member index */
	int json[WSR_CAT_JSON_COUNT]; /* the catalog's JSON fields (schedtrace's) */
	char *name; /* full name, for EV_FOREIGN and EV_WSR_UNKNOWN */
};

struct sc_desc {
	const bt_stream_class *cls;
	int idx_vtid, idx_vpid; /* int_member_index() codes */
};

struct stream_slot {
	const bt_stream *stream; /* NULL: free */
	const bt_stream_class *sc;
	struct sc_desc *scd;
};

struct wsr_decoder {
	wsr_rec_cb cb;
	void *ctx;
	struct ec_desc ec[DEC_EC_SLOTS];
	int n_ec;
	struct sc_desc sc[64];
	int n_sc;
	struct stream_slot streams[DEC_MAX_STREAMS];
	int n_streams;
	int last_stream;
	const bt_packet *last_packet;
	int32_t last_cpu;
	const bt_trace *traces[16];
	int n_traces;
	char *buf; /* extra scratch */
	size_t buf_size;
};

struct wsr_decoder *decoder_create(wsr_rec_cb cb, void *ctx)
{
	struct wsr_decoder *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->cb = cb;
	d->ctx = ctx;
	d->last_stream = -1;
	d->buf_size = WSR_REC_MAX_EXTRA;
	d->buf = malloc(d->buf_size);
	if (d->buf == NULL) {
		free(d);
		return NULL;
	}
	return d;
}

void decoder_destroy(struct wsr_decoder *d)
{
	if (d == NULL)
		return;
	for (int i = 0; i < DEC_EC_SLOTS; i++)
		free(d->ec[i].name);
	free(d->buf);
	free(d);
}

void decode_take_bt_error(struct wsr_err *err)
{
	const bt_error *e = bt_current_thread_take_error();

	if (e == NULL)
		return;
	/* Cause 0 is the root cause: push it first (err.h keeps innermost first).
	 * The library's own causes repeat the component's in internal terms
	 * (addresses, status names): leave them out unless nothing else is there. */
	uint64_t n = bt_error_get_cause_count(e);
	int pushed = 0;
	for (int pass = 0; pass < 2 && pushed == 0; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
			const char *msg = bt_error_cause_get_message(c);
			const char *mod = bt_error_cause_get_module_name(c);
			if (pass == 0 &&
			    bt_error_cause_get_actor_type(c) == BT_ERROR_CAUSE_ACTOR_TYPE_UNKNOWN)
				continue;
			err_push(err, "babeltrace2 %s: %s", mod != NULL ? mod : "?",
				 msg != NULL ? msg : "?");
			pushed++;
		}
	}
	bt_error_release(e);
}

static int member_index(const bt_field_class *st, const char *name)
{
	if (st == NULL || bt_field_class_get_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return -1;
	uint64_t n = bt_field_class_structure_get_member_count(st);
	for (uint64_t i = 0; i < n; i++) {
		const bt_field_class_structure_member *mb =
			bt_field_class_structure_borrow_member_by_index_const(st, i);
		if (strcmp(bt_field_class_structure_member_get_name(mb), name) == 0)
			return (int)i;
	}
	return -1;
}

static int is_int_class(const bt_field_class *st, int idx)
{
	if (idx < 0)
		return 0;
	const bt_field_class_structure_member *mb =
		bt_field_class_structure_borrow_member_by_index_const(st, (uint64_t)idx);
	bt_field_class_type t = bt_field_class_get_type(
		bt_field_class_structure_member_borrow_field_class_const(mb));
	return bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER);
}

/* Integer member NAME of structure class ST as a code: its index << 1,
 * bit 0 set when it is signed (field_at reads it with the right getter, no
 * type check per event); -1: none. */
static int int_member_index(const bt_field_class *st, const char *name)
{
	int idx = member_index(st, name);

	if (!is_int_class(st, idx))
		return -1;
	const bt_field_class_structure_member *mb =
		bt_field_class_structure_borrow_member_by_index_const(st, (uint64_t)idx);
	bt_field_class_type t = bt_field_class_get_type(
		bt_field_class_structure_member_borrow_field_class_const(mb));
	return idx << 1 | (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER) ? 1 : 0);
}

static struct ec_desc *ec_lookup(struct wsr_decoder *d, const bt_event_class *cls)
{
	size_t h = ((uintptr_t)cls >> 4) % DEC_EC_SLOTS;

	for (int probe = 0; probe < DEC_EC_SLOTS; probe++) {
		struct ec_desc *e = &d->ec[(h + (size_t)probe) % DEC_EC_SLOTS];
		if (e->cls == cls)
			return e;
		if (e->cls == NULL) {
			if (d->n_ec >= DEC_EC_SLOTS - 1)
				return NULL;
			d->n_ec++;
			e->cls = cls;
			return e;
		}
	}
	return NULL;
}

static void ec_init(struct ec_desc *e, const bt_event_class *cls)
{
	const char *name = bt_event_class_get_name(cls);
	const bt_field_class *pl = bt_event_class_borrow_payload_field_class_const(cls);

	if (name == NULL)
		name = "?";
	e->ev = EV_FOREIGN;
	if (strncmp(name, "wsr:", 4) == 0) {
		e->ev = EV_WSR_UNKNOWN;
		for (int i = 0; i < EV_COUNT; i++)
			if (strcmp(name + 4, wsr_catalog[i].name) == 0)
				e->ev = (uint8_t)i;
	}
	e->name = strdup(name);
	e->idx_p = int_member_index(pl, "p");
	e->idx_m = int_member_index(pl, "m");
	e->idx_vtid = int_member_index(pl, "vtid");
	e->idx_vpid = int_member_index(pl, "vpid");
	e->idx_g = -1;
	e->idx_extra = -1;
	for (int k = 0; k < 3; k++)
		e->idx_a[k] = -1;
	for (int k = 0; k < WSR_CAT_JSON_COUNT; k++)
		e->json[k] = -1;
	if (e->ev >= EV_COUNT)
		return;
	const struct wsr_catalog_entry *c = &wsr_catalog[e->ev];
	if (c->g != NULL)
		e->idx_g = int_member_index(pl, c->g);
	for (int k = 0; k < 3; k++)
		if (c->a[k] != NULL)
			e->idx_a[k] = int_member_index(pl, c->a[k]);
	if (c->text != NULL)
		e->idx_extra = member_index(pl, c->text);
	for (int k = 0; k < c->n_json; k++)
		e->json[k] = member_index(pl, c->json[k].name);
}

static inline int64_t field_int(const bt_field *f)
{
	bt_field_class_type t = bt_field_get_class_type(f);

	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return bt_field_integer_signed_get_value(f);
	return (int64_t)bt_field_integer_unsigned_get_value(f);
}

static inline const bt_field *member(const bt_field *st, int idx)
{
	return bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)idx);
}

/* The integer member of st that int_member_index() coded as code (>= 0). */
static inline int64_t field_at(const bt_field *st, int code)
{
	const bt_field *f = member(st, code >> 1);

	if (code & 1)
		return bt_field_integer_signed_get_value(f);
	return (int64_t)bt_field_integer_unsigned_get_value(f);
}

/* vtid and vpid from members idx_vtid and idx_vpid of structure st (-1: absent). */
static void rec_ids(struct wsr_rec *r, const bt_field *st, int idx_vtid, int idx_vpid)
{
	if (idx_vtid >= 0) {
		r->tid = (int32_t)field_at(st, idx_vtid);
		r->flags |= REC_F_TID;
	}
	if (idx_vpid >= 0) {
		r->vpid = (int32_t)field_at(st, idx_vpid);
		r->flags |= REC_F_VPID;
	}
}

static struct sc_desc *sc_get(struct wsr_decoder *d, const bt_stream_class *sc)
{
	for (int i = 0; i < d->n_sc; i++)
		if (d->sc[i].cls == sc)
			return &d->sc[i];
	if (d->n_sc >= (int)(sizeof(d->sc) / sizeof(d->sc[0])))
		return NULL;
	struct sc_desc *s = &d->sc[d->n_sc++];
	const bt_field_class *cc =
		bt_stream_class_borrow_event_common_context_field_class_const(sc);
	s->cls = sc;
	s->idx_vtid = int_member_index(cc, "vtid");
	s->idx_vpid = int_member_index(cc, "vpid");
	return s;
}

static int emit(struct wsr_decoder *d, struct wsr_rec *r, const char *extra, size_t len,
		struct wsr_err *err)
{
	rec_frame(r, len);
	if (d->cb(d->ctx, r, extra) < 0) {
		err_push(err, "processing a decoded record");
		return -1;
	}
	return 0;
}

/* Appends a JSON string literal of s to buf at *off (bounded), escaped by
 * the one rule of every JSON wsr writes (json_escape, sbuf.h). */
static void json_str(char *buf, size_t size, size_t *off, const char *s)
{
	char esc[8];

	if (*off + 2 >= size)
		return;
	buf[(*off)++] = '"';
	for (; *s != '\0' && *off + 8 < size; s++) {
		const char *e = json_escape((unsigned char)*s, esc);
		if (e == NULL) {
			buf[(*off)++] = *s;
		} else {
			size_t el = strlen(e);
			memcpy(buf + *off, e, el);
			*off += el;
		}
	}
	buf[(*off)++] = '"';
	buf[*off] = '\0';
}

#define APPEND(...)                                       \
 do {                                                     \
  if (off < size) {                                       \
   int w_ = snprintf(buf + off, size - off, __VA_ARGS__); \
   off = w_ > 0 ? off + (size_t)w_ : off;                 \
   if (off >= size)                                       \
    off = size - 1;                                       \
  }                                                       \
 } while (0)

/* A field as a JSON value (integers, reals, strings, arrays; others null). */
static void json_field(char *buf, size_t size, size_t *offp, const bt_field *f, int depth)
{
	size_t off = *offp;
	bt_field_class_type t = bt_field_get_class_type(f);

	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_INTEGER)) {
		if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
			APPEND("%" PRId64, bt_field_integer_signed_get_value(f));
		else
			APPEND("%" PRIu64, bt_field_integer_unsigned_get_value(f));
	} else if (t == BT_FIELD_CLASS_TYPE_STRING) {
		json_str(buf, size, &off, bt_field_string_get_value(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL)) {
		APPEND("%.17g", t == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL
					? (double)bt_field_real_single_precision_get_value(f)
					: bt_field_real_double_precision_get_value(f));
	} else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY) && depth < 4) {
		uint64_t n = bt_field_array_get_length(f);
		APPEND("[");
		for (uint64_t i = 0; i < n && off + 32 < size; i++) {
			if (i > 0)
				APPEND(",");
			json_field(buf, size, &off,
				   bt_field_array_borrow_element_field_by_index_const(f, i),
				   depth + 1);
		}
		APPEND("]");
	} else if (t == BT_FIELD_CLASS_TYPE_STRUCTURE && depth < 4) {
		const bt_field_class *fc = bt_field_borrow_class_const(f);
		uint64_t n = bt_field_class_structure_get_member_count(fc);
		APPEND("{");
		for (uint64_t i = 0; i < n && off + 32 < size; i++) {
			const bt_field_class_structure_member *mb =
				bt_field_class_structure_borrow_member_by_index_const(fc, i);
			if (i > 0)
				APPEND(",");
			json_str(buf, size, &off, bt_field_class_structure_member_get_name(mb));
			APPEND(":");
			json_field(buf, size, &off,
				   bt_field_structure_borrow_member_field_by_index_const(f, i),
				   depth + 1);
		}
		APPEND("}");
	} else {
		APPEND("null");
	}
	*offp = off;
}

/* schedtrace.read_ts (wsr_tp_schedtrace.h) as a JSON array of ns from
 * origin, the unit of every event time: its values are the trace clock's
 * cycles (CLOCK_MONOTONIC, LTTng-UST's default clock), converted by the
 * event's clock class. null when the clock is not that one (a clock plugin)
 * or a value does not convert: the reader then has no read times. */
static void json_read_ts(char *buf, size_t size, size_t *offp, const bt_field *f,
			 const bt_clock_class *cc)
{
	size_t off = *offp;
	const char *cname = cc != NULL ? bt_clock_class_get_name(cc) : NULL;

	if (cname == NULL || strcmp(cname, "monotonic") != 0 ||
	    bt_clock_class_get_frequency(cc) != 1000000000 ||
	    !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY)) {
		APPEND("null");
		*offp = off;
		return;
	}
	uint64_t n = bt_field_array_get_length(f);
	size_t start = off;
	APPEND("[");
	for (uint64_t i = 0; i < n && off + 32 < size; i++) {
		const bt_field *el = bt_field_array_borrow_element_field_by_index_const(f, i);
		int64_t v = field_int(el), ns;
		if (v < 0 || bt_clock_class_cycles_to_ns_from_origin(cc, (uint64_t)v, &ns) !=
				     BT_CLOCK_CLASS_CYCLES_TO_NS_FROM_ORIGIN_STATUS_OK) {
			off = start;
			APPEND("null");
			*offp = off;
			return;
		}
		APPEND("%s%" PRId64, i > 0 ? "," : "", ns);
	}
	APPEND("]");
	*offp = off;
}

static int stream_index(struct wsr_decoder *d, const bt_stream *s, struct wsr_err *err)
{
	if (d->last_stream >= 0 && d->streams[d->last_stream].stream == s)
		return d->last_stream;
	int free_slot = -1;
	for (int i = 0; i < d->n_streams; i++) {
		if (d->streams[i].stream == s) {
			d->last_stream = i;
			return i;
		}
		if (d->streams[i].stream == NULL && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		if (d->n_streams >= DEC_MAX_STREAMS) {
			err_push(err, "more than %d streams", DEC_MAX_STREAMS);
			return -1;
		}
		free_slot = d->n_streams++;
	}
	struct stream_slot *slot = &d->streams[free_slot];
	slot->stream = s;
	slot->sc = bt_stream_borrow_class_const(s);
	slot->scd = sc_get(d, slot->sc);
	d->last_stream = free_slot;

	/* A new trace: send its environment first. */
	const bt_trace *tr = bt_stream_borrow_trace_const(s);
	int known = 0;
	for (int i = 0; i < d->n_traces; i++)
		known |= d->traces[i] == tr;
	if (!known && d->n_traces < 16) {
		d->traces[d->n_traces++] = tr;
		uint64_t n = bt_trace_get_environment_entry_count(tr);
		for (uint64_t i = 0; i < n; i++) {
			const char *name;
			const bt_value *v;
			char val[1024];
			bt_trace_borrow_environment_entry_by_index_const(tr, i, &name, &v);
			if (bt_value_get_type(v) == BT_VALUE_TYPE_STRING)
				snprintf(val, sizeof(val), "%s", bt_value_string_get(v));
			else if (bt_value_get_type(v) == BT_VALUE_TYPE_SIGNED_INTEGER)
				snprintf(val, sizeof(val), "%" PRId64,
					 bt_value_integer_signed_get(v));
			else
				continue;
			size_t kl = strlen(name), vl = strlen(val);
			if (kl + vl + 8 > d->buf_size)
				continue;
			memcpy(d->buf, name, kl + 1);
			memcpy(d->buf + kl + 1, val, vl + 1);
			struct wsr_rec r = {.type = REC_META};
			if (emit(d, &r, d->buf, kl + vl + 2, err) < 0)
				return -1;
		}
	}

	/* Declare the stream: its name (the file for source.ctf.fs) and cpu. */
	const char *name = bt_stream_get_name(s);
	char nbuf[64];
	if (name == NULL) {
		snprintf(nbuf, sizeof(nbuf), "stream-%" PRIu64, bt_stream_get_id(s));
		name = nbuf;
	}
	struct wsr_rec r = {.type = REC_STREAM, .stream = (uint16_t)free_slot, .a1 = -1};
	const char *us = strrchr(name, '_');
	if (us != NULL && us[1] >= '0' && us[1] <= '9') {
		r.a1 = strtol(us + 1, NULL, 10);
		r.flags |= REC_F_A1;
	}
	size_t nl = strlen(name);
	if (nl + 1 > d->buf_size)
		nl = d->buf_size - 1;
	memcpy(d->buf, name, nl);
	d->buf[nl] = '\0';
	if (emit(d, &r, d->buf, nl + 1, err) < 0)
		return -1;
	return free_slot;
}

static int decode_event(struct wsr_decoder *d, const bt_message *msg, struct wsr_err *err)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_event_class *cls = bt_event_borrow_class_const(ev);
	struct ec_desc *e = ec_lookup(d, cls);
	struct wsr_rec r = {.type = REC_EVENT};
	size_t extra_len = 0;

	if (e == NULL) {
		err_push(err, "too many event classes");
		return -1;
	}
	if (e->name == NULL)
		ec_init(e, cls);

	int si = stream_index(d, bt_event_borrow_stream_const(ev), err);
	if (si < 0)
		return -1;
	r.stream = (uint16_t)si;
	r.ev = e->ev;

	const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	int64_t ns;
	if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) !=
	    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
		err_push(err, "event timestamp overflows");
		return -1;
	}
	r.ts = ns;
	r.flags |= REC_F_TS;

	const bt_packet *pk = bt_event_borrow_packet_const(ev);
	if (pk != d->last_packet) {
		d->last_packet = pk;
		d->last_cpu = -1;
		const bt_field *pc = pk != NULL ? bt_packet_borrow_context_field_const(pk) : NULL;
		if (pc != NULL) {
			const bt_field *c =
				bt_field_structure_borrow_member_field_by_name_const(pc, "cpu_id");
			if (c != NULL && bt_field_class_type_is(bt_field_get_class_type(c),
								BT_FIELD_CLASS_TYPE_INTEGER))
				d->last_cpu = (int32_t)field_int(c);
		}
	}
	if (d->last_cpu >= 0) {
		r.cpu = d->last_cpu;
		r.flags |= REC_F_CPU;
	}

	/* The ids: payload fields (wsr_tp.h since 94a0303), or the context
	 * fields of older traces; a session may add both, with the same values. */
	struct sc_desc *scd = d->streams[si].scd;
	int ctx_vtid = scd != NULL && e->idx_vtid < 0 ? scd->idx_vtid : -1;
	int ctx_vpid = scd != NULL && e->idx_vpid < 0 ? scd->idx_vpid : -1;
	if (ctx_vtid >= 0 || ctx_vpid >= 0) {
		const bt_field *cc = bt_event_borrow_common_context_field_const(ev);
		if (cc != NULL)
			rec_ids(&r, cc, ctx_vtid, ctx_vpid);
	}

	const bt_field *pl = bt_event_borrow_payload_field_const(ev);
	if (pl != NULL) {
		if (e->idx_p >= 0) {
			r.p = (int32_t)field_at(pl, e->idx_p);
			r.flags |= REC_F_P;
		}
		rec_ids(&r, pl, e->idx_vtid, e->idx_vpid);
		if (e->idx_m >= 0) {
			r.m = (int32_t)field_at(pl, e->idx_m);
			r.flags |= REC_F_M;
		}
		if (e->idx_g >= 0) {
			r.g = field_at(pl, e->idx_g);
			r.flags |= REC_F_G;
		}
		if (e->idx_a[0] >= 0) {
			r.a1 = field_at(pl, e->idx_a[0]);
			r.flags |= REC_F_A1;
		}
		if (e->idx_a[1] >= 0) {
			r.a2 = field_at(pl, e->idx_a[1]);
			r.flags |= REC_F_A2;
		}
		if (e->idx_a[2] >= 0) {
			r.a3 = field_at(pl, e->idx_a[2]);
			r.flags |= REC_F_A3;
		}
	}

	char *buf = d->buf;
	size_t size = d->buf_size, off = 0;
	const struct wsr_catalog_entry *c = e->ev < EV_COUNT ? &wsr_catalog[e->ev] : NULL;
	if (c != NULL && c->text != NULL && e->idx_extra >= 0 && pl != NULL) {
		const bt_field *f = member(pl, e->idx_extra);
		if (bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_STRING) {
			APPEND("%s", bt_field_string_get_value(f));
			extra_len = off + 1;
		}
	} else if (c != NULL && c->n_json > 0 && pl != NULL) {
		APPEND("{");
		for (int k = 0; k < c->n_json; k++) {
			if (e->json[k] < 0)
				continue;
			APPEND("%s\"%s\":", off > 1 ? "," : "", c->json[k].name);
			if (c->json[k].clock)
				json_read_ts(buf, size, &off, member(pl, e->json[k]),
					     bt_clock_snapshot_borrow_clock_class_const(cs));
			else
				json_field(buf, size, &off, member(pl, e->json[k]), 0);
		}
		APPEND("}");
		extra_len = off + 1;
	} else if (c == NULL) {
		/* "name\0{json payload}" */
		APPEND("%s", e->name);
		off = off + 1 < size ? off + 1 : size - 1; /* a name that fills buf: no payload */
		if (pl != NULL)
			json_field(buf, size, &off, pl, 0);
		else
			APPEND("{}");
		extra_len = off + 1;
	}
	return emit(d, &r, buf, extra_len, err);
}

static int decode_discarded(struct wsr_decoder *d, const bt_message *msg, int packets,
			    struct wsr_err *err)
{
	const bt_stream *s;
	const bt_clock_snapshot *b = NULL, *e = NULL;
	uint64_t count = 0;
	int have_count;
	struct wsr_rec r = {.type = REC_DISCARDED};

	if (packets) {
		s = bt_message_discarded_packets_borrow_stream_const(msg);
		have_count = bt_message_discarded_packets_get_count(msg, &count) ==
			     BT_PROPERTY_AVAILABILITY_AVAILABLE;
		if (bt_stream_class_discarded_packets_have_default_clock_snapshots(
			    bt_stream_borrow_class_const(s))) {
			b = bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(
				msg);
			e = bt_message_discarded_packets_borrow_end_default_clock_snapshot_const(
				msg);
		}
		r.a1 = REC_DISC_PACKETS;
	} else {
		s = bt_message_discarded_events_borrow_stream_const(msg);
		have_count = bt_message_discarded_events_get_count(msg, &count) ==
			     BT_PROPERTY_AVAILABILITY_AVAILABLE;
		if (bt_stream_class_discarded_events_have_default_clock_snapshots(
			    bt_stream_borrow_class_const(s))) {
			b = bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(
				msg);
			e = bt_message_discarded_events_borrow_end_default_clock_snapshot_const(
				msg);
		}
		r.a1 = REC_DISC_EVENTS;
	}
	int si = stream_index(d, s, err);
	if (si < 0)
		return -1;
	r.stream = (uint16_t)si;
	r.flags = REC_F_A1;
	/* A count past INT64_MAX is a tracer's running counter that went
	 * backwards between two packets (seen under load in discard mode):
	 * the loss is real, its size unknown (the count is left NULL). */
	if (have_count && count <= (uint64_t)INT64_MAX) {
		r.a2 = (int64_t)count;
		r.flags |= REC_F_A2;
	}
	int64_t ns;
	if (b != NULL && bt_clock_snapshot_get_ns_from_origin(b, &ns) ==
				 BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
		r.ts = ns;
		r.flags |= REC_F_TS;
	}
	if (e != NULL && bt_clock_snapshot_get_ns_from_origin(e, &ns) ==
				 BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
		r.g = ns;
		r.flags |= REC_F_G;
	}
	return emit(d, &r, NULL, 0, err);
}

int decoder_messages(struct wsr_decoder *d, bt_message_array_const msgs, uint64_t count,
		     struct wsr_err *err)
{
	int ret = 0;

	for (uint64_t i = 0; i < count; i++) {
		const bt_message *m = msgs[i];
		if (ret == 0) {
			switch (bt_message_get_type(m)) {
			case BT_MESSAGE_TYPE_EVENT:
				ret = decode_event(d, m, err);
				break;
			case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
				ret = decode_discarded(d, m, 0, err);
				break;
			case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
				ret = decode_discarded(d, m, 1, err);
				break;
			case BT_MESSAGE_TYPE_STREAM_END: {
				const bt_stream *s = bt_message_stream_end_borrow_stream_const(m);
				for (int k = 0; k < d->n_streams; k++)
					if (d->streams[k].stream == s)
						d->streams[k].stream = NULL;
				d->last_stream = -1;
				d->last_packet = NULL;
				break;
			}
			case BT_MESSAGE_TYPE_PACKET_END:
				if (bt_message_packet_end_borrow_packet_const(m) == d->last_packet)
					d->last_packet = NULL;
				break;
			default:
				break;
			}
		}
		bt_message_put_ref(m);
	}
	return ret;
}

/* The simple sink of decode_trace_dir(). */
struct run_ctx {
	struct wsr_decoder *d;
	bt_message_iterator *it;
	struct wsr_err *err;
	int failed;
};

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it,
								       void *data)
{
	struct run_ctx *rc = data;

	rc->it = it;
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it,
								       void *data)
{
	struct run_ctx *rc = data;

	rc->it = it;
	bt_message_array_const msgs;
	uint64_t count;

	switch (bt_message_iterator_next(rc->it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		if (decoder_messages(rc->d, msgs, count, rc->err) < 0) {
			rc->failed = 1;
			return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
		}
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
}

int decode_trace_dirs(const char *const *dirs, int ndirs, wsr_rec_cb cb, void *ctx,
		      struct wsr_err *err)
{
	const bt_plugin *ctf = NULL, *utils = NULL;
	bt_graph *graph = NULL;
	bt_value *params = NULL, *inputs = NULL;
	const bt_component_source *src = NULL;
	const char *dir = ndirs > 0 ? dirs[0] : "?";
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	struct run_ctx rc = {.err = err};
	int ret = -1;

	rc.d = decoder_create(cb, ctx);
	if (rc.d == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils) !=
		    BT_PLUGIN_FIND_STATUS_OK) {
		decode_take_bt_error(err);
		err_push(err, "cannot load the babeltrace2 plugins ctf and utils");
		goto out;
	}
	const bt_component_class_source *src_cls =
		bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	const bt_component_class_filter *mux_cls =
		bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	if (src_cls == NULL || mux_cls == NULL) {
		err_push(err, "babeltrace2 lacks source.ctf.fs or filter.utils.muxer");
		goto out;
	}
	graph = bt_graph_create(0);
	if (graph == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (bt_graph_add_filter_component(graph, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_NONE,
					  &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_simple_sink_component(graph, "wsr", sink_init, sink_consume, NULL, &rc,
					       &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		decode_take_bt_error(err);
		err_push(err, "building the babeltrace2 graph");
		goto out;
	}
	/* One source.ctf.fs per trace directory (as the babeltrace2 CLI does
	 * after its auto-discovery), all into the muxer. */
	for (int t = 0; t < ndirs; t++) {
		char cname[32];
		bt_value_put_ref(params);
		params = bt_value_map_create();
		if (params == NULL ||
		    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) !=
			    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
		    bt_value_array_append_string_element(inputs, dirs[t]) !=
			    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
			err_push(err, "out of memory");
			goto out;
		}
		snprintf(cname, sizeof(cname), "src%d", t);
		if (bt_graph_add_source_component(graph, src_cls, cname, params,
						  BT_LOGGING_LEVEL_NONE,
						  &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
			decode_take_bt_error(err);
			err_push(err, "source.ctf.fs cannot open %s", dirs[t]);
			goto out;
		}
		uint64_t nout = bt_component_source_get_output_port_count(src);
		for (uint64_t i = 0; i < nout; i++) {
			const bt_port_output *op =
				bt_component_source_borrow_output_port_by_index_const(src, i);
			const bt_port_input *ip = NULL;
			uint64_t nin = bt_component_filter_get_input_port_count(mux);
			for (uint64_t k = 0; k < nin && ip == NULL; k++) {
				const bt_port_input *cand =
					bt_component_filter_borrow_input_port_by_index_const(mux,
											     k);
				if (!bt_port_is_connected(bt_port_input_as_port_const(cand)))
					ip = cand;
			}
			if (ip == NULL || bt_graph_connect_ports(graph, op, ip, NULL) !=
						  BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
				decode_take_bt_error(err);
				err_push(err, "connecting source.ctf.fs to the muxer");
				goto out;
			}
		}
	}
	const bt_port_input *sink_in = bt_component_sink_borrow_input_port_by_index_const(sink, 0);
	const bt_port_output *mux_out =
		bt_component_filter_borrow_output_port_by_index_const(mux, 0);
	if (bt_graph_connect_ports(graph, mux_out, sink_in, NULL) !=
	    BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		decode_take_bt_error(err);
		err_push(err, "connecting the muxer to the sink");
		goto out;
	}
	for (;;) {
		bt_graph_run_status st = bt_graph_run(graph);
		if (st == BT_GRAPH_RUN_STATUS_OK)
			break;
		if (st == BT_GRAPH_RUN_STATUS_AGAIN)
			continue;
		if (!rc.failed) {
			decode_take_bt_error(err);
			err_push(err, "babeltrace2 cannot decode %s", dir);
		} else {
			bt_current_thread_clear_error();
		}
		goto out;
	}
	struct wsr_rec end = {.type = REC_END};
	rec_frame(&end, 0);
	if (cb(ctx, &end, NULL) < 0)
		goto out;
	ret = 0;
out:
	bt_graph_put_ref(graph);
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	decoder_destroy(rc.d);
	return ret;
}
