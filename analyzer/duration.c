/*
 * duration.c - the one duration grammar (duration.h): `wsr report
 * --interval`, `wsr ingest --timeout`, the HTML report's --interval and the
 * viewer's /api/schedtrace?interval= all read their value here, so the same
 * text means the same time everywhere (docs/report.md, "Durations").
 *
 * Invariants:
 *   - A bare number is milliseconds; units are ns, us, ms, s, nothing else.
 *   - The result is in [1, 1e15] ns, rounded to the nearest nanosecond.
 *   - Only the C locale's decimal point is read (strtod after our own check
 *     that the text is digits, '.', and an exponent), so "0x10", "inf",
 *     "nan", " 1", "+1" and "-1" are refused before strtod could take them.
 * Concurrency: pure function.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

/* Length of the decimal number at the head of S (digits [. digits] [e [+-] digits]), 0 if none. */
static size_t number_len(const char *s)
{
	size_t i = 0, digits = 0;

	while (isdigit((unsigned char)s[i]))
		i++, digits++;
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i]))
			i++, digits++;
	}
	if (digits == 0)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;
		if (s[j] == '+' || s[j] == '-')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

int duration_parse(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {{"", 1e6}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

	size_t len;
	char *end;
	double v;

	if (s == NULL || (len = number_len(s)) == 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end != s + len || !isfinite(v))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) != 0)
			continue;
		double t = nearbyint(v * units[i].mul);
		if (!(t >= 1) || t > 1e15)
			return -1;
		*ns = (int64_t)t;
		return 0;
	}
	return -1;
}
