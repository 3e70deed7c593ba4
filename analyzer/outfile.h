/*
 * outfile.h - an output written whole or not at all (outfile.c): FILE.tmp,
 * then renamed over FILE; no path (or "-") means stdout.
 *
 * Invariants: after out_file_close(.., ok = false, ..) or any failure, FILE
 *   is as it was before and FILE.tmp is gone.
 * Concurrency: one thread per struct out_file.
 */
#ifndef WSR_ANALYZER_OUTFILE_H
#define WSR_ANALYZER_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

struct out_file {
	FILE *f;          /* write here */
	const char *path; /* NULL: stdout */
	char *tmp;        /* PATH.tmp while open */
};

/* Opens PATH.tmp (PATH NULL or "-": stdout); 0, or -1 with the cause in err. */
int out_file_open(struct out_file *of, const char *path, struct wsr_err *err);
/* OK: flushes, closes and renames PATH.tmp to PATH; else removes PATH.tmp. 0 or -1. */
int out_file_close(struct out_file *of, bool ok, struct wsr_err *err);

#endif /* WSR_ANALYZER_OUTFILE_H */
