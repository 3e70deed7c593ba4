/*
 * duration.h - the one duration grammar of wsr (duration.c): every option
 * and API parameter that takes a duration reads it with duration_parse().
 *
 * Grammar: NUMBER [UNIT]. NUMBER is a decimal number (digits, an optional
 *   fraction, an optional exponent: 10, 0.5, 2e3); UNIT is one of ns, us,
 *   ms, s. A bare number is milliseconds (as Go's schedtrace=MS). The value
 *   is rounded to the nearest nanosecond and must be 1 ns .. 1e15 ns.
 * Invariants: on failure *ns is left alone; nothing else is accepted (no
 *   sign, no hexadecimal, no inf/nan, no space, no other unit).
 * Concurrency: pure function.
 */
#ifndef WSR_ANALYZER_DURATION_H
#define WSR_ANALYZER_DURATION_H

#include <stdint.h>

/* What a bad duration should be told (for messages): the grammar in a few words. */
#define DURATION_HINT "a number with a unit, ns, us, ms or s (e.g. 10ms); a bare number is ms"

/* Parses S into *NS; 0, or -1 if S is not a duration of the grammar above. */
int duration_parse(const char *s, int64_t *ns);

#endif /* WSR_ANALYZER_DURATION_H */
