/*
 * html_report.h - the self-contained HTML report (html_report.c).
 *
 * Invariants: FILE is replaced whole or not at all (FILE.tmp + rename);
 *   path NULL or "-" writes to stdout.
 * Concurrency: single-threaded.
 */
#ifndef WSR_VIEWER_HTML_REPORT_H
#define WSR_VIEWER_HTML_REPORT_H

#include <stdint.h>

#include "api.h"
#include "err.h"

/* interval_ns: the schedtrace table's interval (0: meta.schedtrace_interval_ns). */
int html_report_write(struct api *api, const char *path, int64_t interval_ns, struct wsr_err *err);

#endif /* WSR_VIEWER_HTML_REPORT_H */
