/*
 * decode.h - babeltrace2 messages to wsr records (rec.h).
 *
 * Invariants:
 *   - The decoder turns each bt2 event message into one REC_EVENT, in the
 *     order it receives them (the muxer's time order), and each discarded
 *     events/packets message into one REC_DISCARDED. Streams are declared
 *     (REC_STREAM) and trace environment entries sent (REC_META) before the
 *     first record that needs them.
 *   - Field lookups by name happen once per event class / stream class and
 *     are cached by class pointer; per event the decoder only reads fields by
 *     index.
 *   - decode_trace_dirs() runs the graph source.ctf.fs -> filter.utils.muxer
 *     -> a simple sink in the calling process; ingest.c calls it in a child.
 * Concurrency: a decoder belongs to the thread running its graph.
 */
#ifndef WSR_ANALYZER_DECODE_H
#define WSR_ANALYZER_DECODE_H

#include <babeltrace2/babeltrace.h>

#include "err.h"
#include "rec.h"

/* Receives each record; extra points to rec->extra_len bytes. Returns 0, or
 * -1 to stop decoding (the callback has pushed a cause). */
typedef int (*wsr_rec_cb)(void *ctx, const struct wsr_rec *rec, const char *extra);

struct wsr_decoder;

struct wsr_decoder *decoder_create(wsr_rec_cb cb, void *ctx);
void decoder_destroy(struct wsr_decoder *d);
/* Converts count messages; returns 0, or -1 after pushing a cause. */
int decoder_messages(struct wsr_decoder *d, bt_message_array_const msgs, uint64_t count,
		     struct wsr_err *err);
/* Appends the causes of the current thread's bt2 error (and clears it). */
void decode_take_bt_error(struct wsr_err *err);
/* Decodes the CTF traces in dirs (each holds a metadata file), calling cb
 * for every record, then once with REC_END. */
int decode_trace_dirs(const char *const *dirs, int ndirs, wsr_rec_cb cb, void *ctx,
		      struct wsr_err *err);

#endif /* WSR_ANALYZER_DECODE_H */
