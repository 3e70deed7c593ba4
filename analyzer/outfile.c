/*
 * outfile.c - FILE.tmp then rename (outfile.h), for every output file of
 * wsr: `wsr report -o`, the HTML report, the Perfetto export. A reader of
 * FILE sees the old file or the new one, never half of one.
 *
 * Invariants: see outfile.h. The temporary name is PATH.tmp, in PATH's
 *   directory, so the rename stays on one file system.
 * Concurrency: none.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

int out_file_open(struct out_file *of, const char *path, struct wsr_err *err)
{
	*of = (struct out_file){0};
	if (path == NULL || strcmp(path, "-") == 0) {
		of->f = stdout;
		return 0;
	}
	if (asprintf(&of->tmp, "%s.tmp", path) < 0) {
		of->tmp = NULL;
		err_push(err, "out of memory");
		return -1;
	}
	of->f = fopen(of->tmp, "w");
	if (of->f == NULL) {
		err_push(err, "creating %s: %s", of->tmp, strerror(errno));
		free(of->tmp);
		of->tmp = NULL;
		return -1;
	}
	of->path = path;
	return 0;
}

int out_file_close(struct out_file *of, bool ok, struct wsr_err *err)
{
	int ret = 0;

	if (of->f == NULL)
		return 0;
	if (of->path == NULL) {
		if (fflush(stdout) != 0 && ok) {
			err_push(err, "writing to stdout: %s", strerror(errno));
			ret = -1;
		}
		of->f = NULL;
		return ret;
	}
	if ((ferror(of->f) | fclose(of->f)) != 0 && ok) {
		err_push(err, "writing %s: %s", of->tmp, strerror(errno));
		ok = false;
		ret = -1;
	}
	of->f = NULL;
	if (ok && rename(of->tmp, of->path) != 0) {
		err_push(err, "renaming %s to %s: %s", of->tmp, of->path, strerror(errno));
		ok = false;
		ret = -1;
	}
	if (!ok)
		unlink(of->tmp);
	free(of->tmp);
	of->tmp = NULL;
	return ret;
}
