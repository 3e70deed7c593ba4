/*
 * wsr_tp_write.h - one ring-buffer write per event in the `wsr` probes.
 *
 * LTTng-UST's generated probe writes every field with its own call through
 * the channel's event_write op; each call costs about 63 instructions in
 * liblttng-ust 2.13 (bounds-checked shared-memory pointers, alignment,
 * memcpy), and a `wsr` event has four to six fields. On architectures where
 * LTTng-UST packs its ring buffer (x86: LTTNG_UST_RING_BUFFER_NATURAL_ALIGN
 * is not defined, lttng_ust_rb_alignof() is 1), an event's payload is its
 * fields' bytes back to back, so the probe may gather the fixed-size fields
 * on its stack and write them with one call: the bytes in the trace, the
 * metadata and the event size are the same.
 *
 * Invariants:
 *   - Only the probe stage (stage 5 of lttng/ust-tracepoint-event.h, the only
 *     one that defines lttng_ust__get_dynamic_len) of the translation unit
 *     that creates the probes is changed, and only for LTTng-UST 2.13 with a
 *     packed ring buffer; everywhere else, and when WSR_TP_NO_GATHER is
 *     defined (tests/analyzer compares the two: same decoded trace), this
 *     file defines nothing and the stock macros stay.
 *   - Field order is kept: integers, enums and floats go to the gather
 *     buffer in order; a string, array or sequence first writes what is
 *     gathered, then itself, with LTTng-UST's own code for it; the buffer is
 *     written out when the next field would not fit and at the end of the
 *     fields. No field is ever dropped.
 *   - The header resets every macro it redefines at the start of the next
 *     stage (lttng/ust-tracepoint-event-reset.h), so nothing leaks.
 * Concurrency: none; the gather buffer is a local of the probe function.
 *
 * Deliberately no include guard: lttng/ust-tracepoint-event.h includes
 * wsr_tp.h once per stage, and this file must be re-evaluated each time.
 */
#if defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ) && defined(lttng_ust__get_dynamic_len) && \
	!defined(LTTNG_UST_RING_BUFFER_NATURAL_ALIGN) && LTTNG_UST_MAJOR_VERSION == 2 && \
	LTTNG_UST_MINOR_VERSION == 13 && !defined(WSR_TP_NO_GATHER)

#define WSR_TP_GATHER_MAX 64

#undef WSR_TP_FLUSH
#define WSR_TP_FLUSH()							\
	{								\
		if (__wsr_len != 0)					\
			__chan->ops->event_write(&__ctx, __wsr_buf, __wsr_len, 1); \
		__wsr_len = 0;						\
	}

#undef LTTNG_UST_TP_FIELDS
#define LTTNG_UST_TP_FIELDS(...)					\
	{								\
		unsigned char __wsr_buf[WSR_TP_GATHER_MAX];		\
		size_t __wsr_len = 0;					\
									\
		__VA_ARGS__						\
		WSR_TP_FLUSH()						\
	}

#undef lttng_ust__field_integer_ext
#define lttng_ust__field_integer_ext(_type, _item, _src, _byte_order, _base, _nowrite) \
	{								\
		_type __tmp = (_src);					\
									\
		if (__wsr_len + sizeof(__tmp) > sizeof(__wsr_buf))	\
			WSR_TP_FLUSH()					\
		__builtin_memcpy(__wsr_buf + __wsr_len, &__tmp, sizeof(__tmp)); \
		__wsr_len += sizeof(__tmp);				\
	}

#undef lttng_ust__field_float
#define lttng_ust__field_float(_type, _item, _src, _nowrite)		\
	lttng_ust__field_integer_ext(_type, _item, _src, LTTNG_UST_BYTE_ORDER, 10, _nowrite)

/* The variable-size fields: LTTng-UST 2.13's stage-5 code, after a flush. */
#undef lttng_ust__field_array_encoded
#define lttng_ust__field_array_encoded(_type, _item, _src, _byte_order, _length, \
			_encoding, _nowrite, _elem_type_base)		\
	WSR_TP_FLUSH()							\
	if (lttng_ust_string_encoding_##_encoding == lttng_ust_string_encoding_none) \
		__chan->ops->event_write(&__ctx, _src, sizeof(_type) * (_length), \
			lttng_ust_rb_alignof(_type));			\
	else								\
		__chan->ops->event_pstrcpy_pad(&__ctx, (const char *)(_src), _length);

#undef lttng_ust__field_sequence_encoded
#define lttng_ust__field_sequence_encoded(_type, _item, _src, _byte_order, _length_type, \
			_src_length, _encoding, _nowrite, _elem_type_base) \
	WSR_TP_FLUSH()							\
	{								\
		_length_type __tmpl = __stackvar.__dynamic_len[__dynamic_len_idx]; \
		__chan->ops->event_write(&__ctx, &__tmpl, sizeof(_length_type), \
			lttng_ust_rb_alignof(_length_type));		\
	}								\
	if (lttng_ust_string_encoding_##_encoding == lttng_ust_string_encoding_none) \
		__chan->ops->event_write(&__ctx, _src,			\
			sizeof(_type) * lttng_ust__get_dynamic_len(dest), lttng_ust_rb_alignof(_type)); \
	else								\
		__chan->ops->event_pstrcpy_pad(&__ctx, (const char *)(_src), \
			lttng_ust__get_dynamic_len(dest));

#undef lttng_ust__field_string
#define lttng_ust__field_string(_item, _src, _nowrite)			\
	WSR_TP_FLUSH()							\
	{								\
		const char *__ctf_tmp_string = ((_src) ? (_src) : LTTNG_UST__NULL_STRING); \
		__chan->ops->event_strcpy(&__ctx, __ctf_tmp_string,	\
			lttng_ust__get_dynamic_len(dest));		\
	}

#endif
