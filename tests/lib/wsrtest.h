/*
 * wsrtest.h - the TAP test harness: WSR_TEST(name) cases, ASSERT_* macros.
 *
 * Invariants:
 *   - Cases register through the "wsr_tests" ELF section, so none can be left
 *     out of a list; they run in definition order, each in its own fork,
 *     under alarm(10 s x WSR_TEST_TIMEOUT_MULTIPLIER).
 *   - Output is TAP: "1..N" then "ok N - name" / "not ok N - name".
 *   - WSR_TEST_FILTER=substr runs only the matching cases.
 *   - A case that calls wsrtest_skip() is reported "ok N - name # SKIP".
 *   - A case declared with WSR_TEST_KNOWN_BUG(name, secs, why) is not run
 *     (reported "ok N - name # SKIP known bug: why") unless
 *     WSR_TEST_KNOWN_BUGS=1, when it runs and is reported like any case:
 *     it marks a faithful test of behaviour the runtime gets wrong today,
 *     so that the fix turns it back into a WSR_TEST_TIMEOUT.
 * Concurrency: a case may start threads; the harness itself is single-threaded.
 */
#ifndef WSR_TESTS_LIB_WSRTEST_H
#define WSR_TESTS_LIB_WSRTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wsrtest_case {
	const char *name;
	void (*fn)(void);
	unsigned timeout_s;
	int line; /* cases run sorted by line: definition order */
	const char *known_bug; /* non-NULL: skipped unless WSR_TEST_KNOWN_BUGS=1 */
};

#define WSR_TEST_CASE_(name_, secs_, bug_)                                                         \
	static void wsrtest_fn_##name_(void);                                                      \
	static const struct wsrtest_case wsrtest_case_##name_                                      \
		__attribute__((used, section("wsr_tests"), aligned(sizeof(void *)))) = {           \
			#name_, wsrtest_fn_##name_, (secs_), __LINE__, (bug_)};                    \
	static void wsrtest_fn_##name_(void)

#define WSR_TEST_TIMEOUT(name_, secs_) WSR_TEST_CASE_(name_, secs_, NULL)
#define WSR_TEST(name_) WSR_TEST_TIMEOUT(name_, 10)
#define WSR_TEST_KNOWN_BUG(name_, secs_, why_) WSR_TEST_CASE_(name_, secs_, why_)

/* Ends the calling case as skipped, with the reason as a TAP comment. */
void wsrtest_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

void wsrtest_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* A test's random numbers: xorshift64 on *state (not 0), the same sequence on
 * every machine, so that a failing seed fails again. */
static inline uint64_t wsrtest_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* WSR_STRESS_SCALE from the environment (default 1). */
long wsrtest_scale(void);
/* What the sanitizer builds divide the bulk of a stress test by: 10 (TSan is ~40x slower
 * per G), 1 in the plain build. (This library is built with the tests' flags.) */
long wsrtest_sanitizer_divisor(void);

#define ASSERT(c)                                                                                  \
	do {                                                                                       \
		if (!(c))                                                                          \
			wsrtest_fail(__FILE__, __LINE__, "assertion failed: %s", #c);              \
	} while (0)

#define ASSERT_CMP_(a, b, op)                                                                      \
	do {                                                                                       \
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);                                   \
		if (!(a_ op b_))                                                                   \
			wsrtest_fail(__FILE__, __LINE__, "%s %s %s: %jd vs %jd", #a, #op, #b, a_,  \
				     b_);                                                          \
	} while (0)

#define ASSERT_EQ(a, b) ASSERT_CMP_(a, b, ==)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, b, !=)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, b, <)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, b, <=)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, b, >)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, b, >=)
#define ASSERT_STREQ(a, b)                                                                         \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (strcmp(a_, b_) != 0)                                                           \
			wsrtest_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b, a_, \
				     b_);                                                          \
	} while (0)

#endif /* WSR_TESTS_LIB_WSRTEST_H */
