/*
 * rec.h - the decoded-event record passed from the decoder (a babeltrace2
 * graph, decode.c) to the deriver (derive.c), and the event catalog.
 *
 * Invariants:
 *   - A record is a struct wsr_rec followed by `extra_len` bytes (text,
 *     NUL-terminated when extra_len > 0); `size` is the total, 8-aligned.
 *   - REC_EVENT: ev is a catalog id (enum wsr_ev); the REC_F_* bits of
 *     `flags` say which optional fields are valid; for EV_FOREIGN (an event
 *     outside the wsr catalog) extra holds "name\0{json}".
 *   - REC_STREAM declares stream index `stream` (extra: its name; a1: cpu)
 *     before any other record names it. REC_META: extra "key\0value".
 *     REC_DISCARDED: a1 = REC_DISC_EVENTS | REC_DISC_PACKETS, a2 = count
 *     (REC_F_A2 unset if unknown), ts/g = begin/end ns (REC_F_TS/REC_F_G).
 *     REC_ERROR: extra is the decoder's message; REC_END closes the stream.
 *   - The event ids, enumerators and field mapping below are expanded from
 *     the catalog (tracepoints/catalog.toml, through the generated
 *     wsr_catalog.h), as the provider and docs/tracepoints.md are.
 * Concurrency: records are plain data, written by one thread (or the
 *   decoder child) and read by one.
 */
#ifndef WSR_ANALYZER_REC_H
#define WSR_ANALYZER_REC_H

#include <stdint.h>

#include "wsr_catalog.h"

enum wsr_rec_type {
	REC_EVENT = 1,
	REC_STREAM,
	REC_META,
	REC_DISCARDED,
	REC_ERROR,
	REC_END,
};

enum {
	REC_F_TS = 1 << 0,
	REC_F_G = 1 << 1,
	REC_F_A1 = 1 << 2,
	REC_F_A2 = 1 << 3,
	REC_F_A3 = 1 << 4,
	REC_F_CPU = 1 << 5,
	REC_F_TID = 1 << 6,
	REC_F_VPID = 1 << 7,
	REC_F_P = 1 << 8,
	REC_F_M = 1 << 9,
};

enum {
	REC_DISC_EVENTS = 1,
	REC_DISC_PACKETS = 2
};

/* The catalog ids, in the order of tracepoints/catalog.toml (EV_INIT, ...). */
enum wsr_ev {
#define WSR_EV_ID(ev, EV) EV_##EV,
	WSR_CAT_EVENTS(WSR_EV_ID)
#undef WSR_EV_ID
	EV_COUNT,                  /* number of catalog events */
	EV_WSR_UNKNOWN = EV_COUNT, /* a wsr: event this analyzer does not know */
	EV_FOREIGN,                /* an event of another provider */
};

/* The g_source and g_reason enumerators (WSR_SOURCE_RUNNEXT, WSR_REASON_YIELD,
 * ...; the names are wsr_g_source_names and wsr_g_reason_names in catalog.c). */
enum wsr_g_source {
#define WSR_ENUM_VALUE(NAME, label, value) WSR_SOURCE_##NAME = value,
	WSR_CAT_ENUM_G_SOURCE(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
	WSR_G_SOURCE_COUNT
};

enum wsr_g_reason {
#define WSR_ENUM_VALUE(NAME, label, value) WSR_REASON_##NAME = value,
	WSR_CAT_ENUM_G_REASON(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
	WSR_G_REASON_COUNT
};

/* The policy enumerators (init.policy; names: wsr_policy_names in catalog.c). */
enum wsr_policy_id {
#define WSR_ENUM_VALUE(NAME, label, value) WSR_POLICY_ID_##NAME = value,
	WSR_CAT_ENUM_POLICY(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
	WSR_POLICY_COUNT
};

/* A payload field the analyzer stores in the JSON object in extra. */
struct wsr_json_field {
	const char *name;
	int clock; /* 1: a trace-clock value, stored as ns from origin */
};

/* Where the analyzer stores an event's payload fields (WSR_CAT_COLUMNS). */
struct wsr_catalog_entry {
	const char *name;                  /* without "wsr:" */
	const char *g;                     /* payload field stored in the g column, or NULL */
	const char *a[3];                  /* payload fields stored in a1..a3, or NULL */
	const char *text;                  /* string field stored in extra as is, or NULL */
	const struct wsr_json_field *json; /* n_json fields stored in extra as JSON */
	int n_json;
};

extern const struct wsr_catalog_entry wsr_catalog[EV_COUNT];
extern const char *const wsr_g_source_names[WSR_G_SOURCE_COUNT];
extern const char *const wsr_g_reason_names[WSR_G_REASON_COUNT];
extern const char *const wsr_policy_names[WSR_POLICY_COUNT];

struct wsr_rec {
	uint32_t size;
	uint8_t type;
	uint8_t ev;
	uint16_t stream;
	uint32_t flags;
	uint32_t extra_len;
	int32_t p, m;
	int32_t cpu, tid, vpid;
	int32_t pad;
	int64_t ts, g, a1, a2, a3;
};

#define WSR_REC_MAX_EXTRA 65536

#endif /* WSR_ANALYZER_REC_H */
