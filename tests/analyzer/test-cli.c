/*
 * test-cli.c - the duration grammar (analyzer/duration.c) and the option
 * parser (analyzer/cli.c) on their own (suite unit).
 *
 * Invariants: each case checks one rule of duration.h or cli.h; the
 *   command-line paths (`wsr report --interval 10` and the HTML report's
 *   `--interval 10` reading the same 10 ms) are in test_analyzer.py's
 *   viewer case.
 * Concurrency: none.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "duration.h"
#include "wsrtest.h"

static int64_t dur(const char *s)
{
	int64_t ns = -7;

	return duration_parse(s, &ns) == 0 ? ns : -1;
}

WSR_TEST(duration_bare_number_is_ms)
{
	/* The defect: the text report read 10 as 10 ms and wsr-view as 10 ns. */
	ASSERT_EQ(dur("10"), 10000000);
	ASSERT_EQ(dur("0.5"), 500000);
	ASSERT_EQ(dur("2e3"), 2000000000);
}

WSR_TEST(duration_units)
{
	ASSERT_EQ(dur("100000ns"), 100000);
	ASSERT_EQ(dur("500us"), 500000);
	ASSERT_EQ(dur("10ms"), 10000000);
	ASSERT_EQ(dur("1s"), 1000000000);
	ASSERT_EQ(dur("1.5s"), 1500000000);
	ASSERT_EQ(dur(".25ms"), 250000);
	ASSERT_EQ(dur("0.7us"), 700); /* rounded, not truncated to 699 */
}

WSR_TEST(duration_range)
{
	ASSERT_EQ(dur("1ns"), 1);
	ASSERT_EQ(dur("0.4ns"), -1);
	ASSERT_EQ(dur("0"), -1);
	ASSERT_EQ(dur("1e15ns"), 1000000000000000);
	ASSERT_EQ(dur("1e16ns"), -1);
	ASSERT_EQ(dur("1e300s"), -1);
}

WSR_TEST(duration_refuses_everything_else)
{
	static const char *bad[] = {"",    "ms",   "-1",    "+1",    " 1",  "1 ",  "1 ms",
				    "1m",  "1h",   "1S",    "0x10",  "inf", "nan", "1e",
				    "1e+", "1..2", "10msx", "1e3e3", ".",   "e3",  NULL};

	for (int i = 0; bad[i] != NULL; i++)
		if (dur(bad[i]) != -1)
			wsrtest_fail(__FILE__, __LINE__, "'%s' accepted as %lld ns", bad[i],
				     (long long)dur(bad[i]));
	int64_t ns = 42;
	ASSERT_EQ(duration_parse("soon", &ns), -1);
	ASSERT_EQ(ns, 42); /* untouched on failure */
}

enum {
	K_A = CLI_LONG,
	K_B
};

struct seen {
	char log[256];
};

static int record(void *ctx, int key, const char *arg)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	snprintf(s->log + n, sizeof(s->log) - n, "%s%d=%s", n ? "," : "", key,
		 arg != NULL ? arg : "-");
	return strcmp(arg != NULL ? arg : "", "bad") == 0 ? 2 : 0;
}

static const struct cli_opt opts[] = {
	{"alpha", K_A, "DUR", "a"},
	{"beta", K_B, NULL, "b"},
	{"out", 'o', "FILE", "o"},
	{NULL, 0, NULL, NULL},
};

static int parse(bool in_order, int argc, char **argv, struct seen *s, int *first)
{
	struct cli c = {.prog = "t",
			.synopsis = "t",
			.opts = opts,
			.in_order = in_order,
			.min_args = 1,
			.max_args = -1};

	memset(s, 0, sizeof(*s));
	return cli_parse(&c, argc, argv, record, s, first);
}

WSR_TEST(cli_options_after_operands_and_in_order)
{
	char *a1[] = {"x", "db", "--alpha=10ms", "-oF", "--beta", NULL};
	char *a2[] = {"x", "--beta", "prog", "--alpha", "1", NULL};
	struct seen s;
	int first = -1;

	/* GNU order: options after the operand, --name=value, -oVALUE. */
	ASSERT_EQ(parse(false, 5, a1, &s, &first), -1);
	ASSERT_STREQ(s.log, "256=10ms,111=F,257=-");
	ASSERT_STREQ(a1[first], "db");
	/* In order (wsr run): options end at PROGRAM, after one in-order parse
	 * and before another GNU one (glibc keeps the ordering unless optind = 0). */
	ASSERT_EQ(parse(true, 5, a2, &s, &first), -1);
	ASSERT_STREQ(s.log, "257=-");
	ASSERT_STREQ(a2[first], "prog");
	char *a3[] = {"x", "db", "--beta", NULL};
	ASSERT_EQ(parse(false, 3, a3, &s, &first), -1);
	ASSERT_STREQ(s.log, "257=-");
}

WSR_TEST(cli_usage_errors_exit_2)
{
	char *unknown[] = {"x", "--gamma", "db", NULL};
	char *novalue[] = {"x", "db", "--alpha", NULL};
	char *badvalue[] = {"x", "--alpha", "bad", "db", NULL};
	char *nothing[] = {"x", NULL};
	char *help[] = {"x", "--help", NULL};
	struct seen s;
	int first;

	ASSERT_EQ(parse(false, 3, unknown, &s, &first), 2);
	ASSERT_EQ(parse(false, 3, novalue, &s, &first), 2);
	ASSERT_EQ(parse(false, 4, badvalue, &s, &first), 2);
	ASSERT_EQ(parse(false, 1, nothing, &s, &first), 2);
	/* --help prints on stdout, which is the TAP stream here: catch it. */
	FILE *out = tmpfile();
	char text[512] = "";
	int saved = dup(1);
	ASSERT(out != NULL && saved >= 0);
	fflush(stdout);
	ASSERT(dup2(fileno(out), 1) >= 0);
	int rc = parse(false, 2, help, &s, &first);
	fflush(stdout);
	ASSERT(dup2(saved, 1) >= 0);
	close(saved);
	rewind(out);
	size_t n = fread(text, 1, sizeof(text) - 1, out);
	text[n] = '\0';
	fclose(out);
	ASSERT_EQ(rc, 0);
	ASSERT(strncmp(text, "usage: t", 8) == 0);
	ASSERT(strstr(text, "--alpha DUR") != NULL);
}
