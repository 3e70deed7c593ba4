/*
 * report.h - helpers of `wsr report` shared with check.c.
 *
 * Invariants: parse_duration_ns() accepts a positive number with a unit
 *   (ns, us, ms, s; none means ms) and rejects anything else.
 * Concurrency: pure functions.
 */
#ifndef WSR_ANALYZER_REPORT_H
#define WSR_ANALYZER_REPORT_H

#include <stdint.h>

int parse_duration_ns(const char *s, int64_t *ns);

#endif /* WSR_ANALYZER_REPORT_H */
