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
 *   - The catalog order below is the order of docs/tracepoints.md; its
 *     field names are those of tracepoints/wsr_tp.h.
 * Concurrency: records are plain data, written by one thread (or the
 *   decoder child) and read by one.
 */
#ifndef WSR_ANALYZER_REC_H
#define WSR_ANALYZER_REC_H

#include <stdint.h>

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

enum wsr_ev {
	EV_INIT,
	EV_G_CREATE,
	EV_RUNQPUT,
	EV_RUNQ_SPILL,
	EV_GLOBRUNQ_PUT,
	EV_GLOBRUNQ_GET,
	EV_G_RUN,
	EV_G_STOP,
	EV_G_READY,
	EV_STEAL,
	EV_STEAL_SCAN,
	EV_SPIN_START,
	EV_SPIN_STOP,
	EV_P_IDLE,
	EV_P_BUSY,
	EV_M_PARK,
	EV_M_UNPARK,
	EV_M_CREATE,
	EV_SYSCALL_ENTER,
	EV_SYSCALL_EXIT,
	EV_HANDOFF,
	EV_RETAKE,
	EV_PREEMPT,
	EV_TIMER_FIRE,
	EV_NETPOLL,
	EV_SCHEDTRACE,
	EV_COUNT,                  /* number of catalog events */
	EV_WSR_UNKNOWN = EV_COUNT, /* a wsr: event this analyzer does not know */
	EV_FOREIGN,                /* an event of another provider */
};

/* The g_source and g_reason enumerators (docs/tracepoints.md; the names
 * are wsr_g_source_names and wsr_g_reason_names in catalog.c). */
enum wsr_g_source {
	WSR_SOURCE_RUNNEXT,
	WSR_SOURCE_LOCAL,
	WSR_SOURCE_GLOBAL,
	WSR_SOURCE_STEAL,
	WSR_SOURCE_NETPOLL,
	WSR_SOURCE_TIMER,
	WSR_G_SOURCE_COUNT
};

enum wsr_g_reason {
	WSR_REASON_YIELD,
	WSR_REASON_BLOCK,
	WSR_REASON_SLEEP,
	WSR_REASON_CHAN,
	WSR_REASON_MUTEX,
	WSR_REASON_SYSCALL,
	WSR_REASON_PREEMPT,
	WSR_REASON_EXIT,
	WSR_REASON_SELECT,
	WSR_REASON_WAITGROUP,
	WSR_REASON_IO,
	WSR_G_REASON_COUNT
};

struct wsr_catalog_entry {
	const char *name; /* without "wsr:" */
	const char *g;    /* payload field stored in the g column, or NULL */
	const char *a[3]; /* payload fields stored in a1..a3, or NULL */
	int extra;        /* 1: init's version string; 2: schedtrace JSON */
};

extern const struct wsr_catalog_entry wsr_catalog[EV_COUNT];
extern const char *const wsr_g_source_names[WSR_G_SOURCE_COUNT];
extern const char *const wsr_g_reason_names[WSR_G_REASON_COUNT];

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
