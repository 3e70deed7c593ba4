/*
 * err.c - cause chains (see err.h).
 *
 * Invariants: messages are truncated to WSR_ERR_LEN - 1 bytes, never
 * overflowing; an empty chain prints "unknown error".
 * Concurrency: none (one chain per thread).
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "err.h"

void err_init(struct wsr_err *err)
{
	err->n = 0;
	err->exit_code = 1;
}

static __attribute__((format(printf, 2, 0))) void err_vpush(struct wsr_err *err, const char *fmt,
							    va_list ap)
{
	/* Full: drop the second outermost-so-far cause to keep the innermost
	 * (the root cause) and make room for the new, outer one. */
	if (err->n == WSR_ERR_MAX) {
		memmove(err->msg[1], err->msg[2], (size_t)(WSR_ERR_MAX - 2) * WSR_ERR_LEN);
		err->n--;
	}
	int slot = err->n;

	vsnprintf(err->msg[slot], WSR_ERR_LEN, fmt, ap);
	if (err->n < WSR_ERR_MAX)
		err->n++;
}

void err_push(struct wsr_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vpush(err, fmt, ap);
	va_end(ap);
}

void err_input(struct wsr_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vpush(err, fmt, ap);
	va_end(ap);
	err->exit_code = 2;
}

void err_format(const struct wsr_err *err, char *buf, size_t size)
{
	size_t off = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (err->n == 0) {
		snprintf(buf, size, "unknown error");
		return;
	}
	for (int i = err->n - 1; i >= 0 && off < size; i--) {
		int w = snprintf(buf + off, size - off, "%s%s", err->msg[i],
				 i > 0 ? ": caused by: " : "");
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

void err_print(const struct wsr_err *err, const char *prog, FILE *f)
{
	char buf[WSR_ERR_MAX * (WSR_ERR_LEN + 16)];

	err_format(err, buf, sizeof(buf));
	fprintf(f, "%s: error: %s\n", prog, buf);
}

void err_option(const char *prog, int c, const char *arg, FILE *f)
{
	if (c == ':')
		fprintf(f, "%s: error: option '%s' needs a value\n", prog, arg);
	else
		fprintf(f, "%s: error: unknown option '%s'\n", prog, arg);
}
