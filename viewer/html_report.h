/*
 * html_report.h - the self-contained HTML report (html_report.c).
 *
 * Invariants: FILE is replaced whole or not at all (FILE.tmp + rename);
 *   path NULL or "-" writes to stdout.
 * Concurrency: single-threaded.
 */
#ifndef WSR_VIEWER_HTML_REPORT_H
#define WSR_VIEWER_HTML_REPORT_H

#include "api.h"
#include "err.h"

int html_report_write(struct api *api, const char *path, struct wsr_err *err);

#endif /* WSR_VIEWER_HTML_REPORT_H */
