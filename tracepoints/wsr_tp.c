/*
 * wsr_tp.c - instantiates the `wsr` LTTng-UST provider (probes + definitions).
 *
 * Invariants:
 *   - Exactly one translation unit in libwsr defines the probes; every other
 *     user includes wsr_tp.h through runtime/trace.h only.
 *   - The tracepoint definitions are hidden, as runtime/trace.h declares them
 *     (LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION): only their own module fires
 *     them, and it reads their state without the GOT.
 * Concurrency: none of its own; LTTng-UST registers the probes at load time.
 */
/* The probes' vtid reads syscall(SYS_gettid) (wsr_tp.h): declared by
 * <unistd.h> with _GNU_SOURCE or _DEFAULT_SOURCE only. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#include "wsr_tp.h"
