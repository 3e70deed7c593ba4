/*
 * san.h - sanitizer and valgrind annotations for stack switches.
 *
 * Invariants:
 *   - Every switch between stacks is bracketed: san_switch_begin() just
 *     before wsr__ctx_switch and san_switch_end() first thing after it
 *     returns on the new stack (ASan), and san_tsan_switch() just before the
 *     switch (TSan). The helpers are always inlined: a call would push a
 *     TSan shadow-stack frame on one fiber and pop it on another.
 *   - TSan fibers come from a per-P cache (tsanfiber.c), so a fiber's
 *     shadow stack must be empty when its G exits: the G's entry and exit
 *     path (wsr__gentry, wsr__goexit, mcall_noreturn), whose frames never
 *     return, is WSR_NO_FUNC_ENTRY. Without that attribute (gcc) each G's
 *     fiber is destroyed at its exit (WSR_TSAN_FIBER_REUSE 0).
 *   - In builds without sanitizers every helper is an empty inline.
 * Concurrency: the annotations are per thread; they need no locks.
 */
#ifndef WSR_RUNTIME_SAN_H
#define WSR_RUNTIME_SAN_H

#include "config.h"

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
# define WSR_SAN_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define WSR_SAN_ASAN 1
# endif
#endif
#ifndef WSR_SAN_ASAN
# define WSR_SAN_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
# define WSR_SAN_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define WSR_SAN_TSAN 1
# endif
#endif
#ifndef WSR_SAN_TSAN
# define WSR_SAN_TSAN 0
#endif

/* No sanitizer instrumentation at all, __tsan_func_entry included (clang's
 * no_sanitize("thread") keeps that one). */
#if WSR_SAN_TSAN && defined(__has_attribute)
# if __has_attribute(disable_sanitizer_instrumentation)
#  define WSR_NO_FUNC_ENTRY __attribute__((disable_sanitizer_instrumentation))
#  define WSR_TSAN_FIBER_REUSE 1
# endif
#endif
#ifndef WSR_NO_FUNC_ENTRY
# define WSR_NO_FUNC_ENTRY
# define WSR_TSAN_FIBER_REUSE 0
#endif

/* Every helper: inlined even at -O0 (see the invariants). */
#define SAN_INLINE static inline __attribute__((always_inline))

#if WSR_SAN_ASAN
# include <sanitizer/common_interface_defs.h>
#endif
#if WSR_SAN_TSAN
# include <sanitizer/tsan_interface.h>
#endif
#if WSR_HAVE_VALGRIND
# include <valgrind/valgrind.h>
#endif

/* ASan: about to leave the current stack for [bottom, bottom+size).
 * fake_save is NULL when the current stack is being left for good. */
SAN_INLINE void san_switch_begin(void **fake_save, const void *bottom, size_t size)
{
#if WSR_SAN_ASAN
	__sanitizer_start_switch_fiber(fake_save, bottom, size);
#else
	(void)fake_save;
	(void)bottom;
	(void)size;
#endif
}

/* ASan: arrived on this stack; fake_save is what san_switch_begin stored here. */
SAN_INLINE void san_switch_end(void *fake_save)
{
#if WSR_SAN_ASAN
	__sanitizer_finish_switch_fiber(fake_save, NULL, NULL);
#else
	(void)fake_save;
#endif
}

SAN_INLINE void *san_tsan_current(void)
{
#if WSR_SAN_TSAN
	return __tsan_get_current_fiber();
#else
	return NULL;
#endif
}

SAN_INLINE void *san_tsan_create(void)
{
#if WSR_SAN_TSAN
	return __tsan_create_fiber(0);
#else
	return NULL;
#endif
}

SAN_INLINE void san_tsan_destroy(void *fiber)
{
#if WSR_SAN_TSAN
	__tsan_destroy_fiber(fiber);
#else
	(void)fiber;
#endif
}

/* TSan: the next instructions run on fiber (flags 0: synchronise with it). */
SAN_INLINE void san_tsan_switch(void *fiber)
{
#if WSR_SAN_TSAN
	__tsan_switch_to_fiber(fiber, 0);
#else
	(void)fiber;
#endif
}

static inline unsigned san_stack_register(void *lo, void *hi)
{
#if WSR_HAVE_VALGRIND
	return VALGRIND_STACK_REGISTER(lo, hi);
#else
	(void)lo;
	(void)hi;
	return 0;
#endif
}

static inline void san_stack_deregister(unsigned id)
{
#if WSR_HAVE_VALGRIND
	VALGRIND_STACK_DEREGISTER(id);
#else
	(void)id;
#endif
}

#endif /* WSR_RUNTIME_SAN_H */
