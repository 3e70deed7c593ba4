/*
 * cmd_run.c - `wsr run`: placeholder until the recorder lands (issue 4).
 *
 * Invariants: exits 2 with a clear message; never pretends to have traced.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "wsr run: error: recording is not built yet\n");
	return 2;
}
