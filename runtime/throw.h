/*
 * throw.h - the fatal path: wsr__throw(), wsr__fatal_exit(), WSR_ASSERT,
 * WSR_DASSERT.
 *
 * Invariants:
 *   - wsr__throw(msg) prints "wsr: fatal error: <msg>", the G/M/P dump in
 *     scheddetail format, and ends the process through wsr__fatal_exit().
 *     Messages start with the function name.
 *   - wsr__fatal_exit() is the one way a fatal error ends the process (the
 *     throw, the deadlock report, the stack-overflow report): exit status 2,
 *     as Go's, or abort() (SIGABRT, a core dump if allowed) with
 *     WSRTRACEBACK=crash, as Go's GOTRACEBACK=crash. Async-signal-safe once
 *     wsr__fatal_init() has run.
 *   - WSR_ASSERT is on in every build (cheap checks at state transitions);
 *     WSR_DASSERT compiles out with NDEBUG (hot paths). No side effects inside.
 * Concurrency: callable from any thread; concurrent throws print once.
 */
#ifndef WSR_RUNTIME_THROW_H
#define WSR_RUNTIME_THROW_H

#define WSR_NORETURN __attribute__((noreturn))

WSR_NORETURN void wsr__throw(const char *msg);
WSR_NORETURN void wsr__fatal_exit(void);
/* Reads WSRTRACEBACK (before a signal handler may need it). */
void wsr__fatal_init(void);
WSR_NORETURN void wsr__assert_fail(const char *expr, const char *file, int line);

#define WSR_ASSERT(c)                                                                              \
	do {                                                                                       \
		if (__builtin_expect(!(c), 0))                                                     \
			wsr__assert_fail(#c, __FILE__, __LINE__);                                  \
	} while (0)

#ifdef NDEBUG
# define WSR_DASSERT(c) ((void)0)
#else
# define WSR_DASSERT(c) WSR_ASSERT(c)
#endif

#endif /* WSR_RUNTIME_THROW_H */
