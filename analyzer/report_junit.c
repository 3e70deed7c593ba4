/*
 * report_junit.c - `wsr report --format junit`: one testcase per
 * diagnostic rule (failing when it fires), one for the program's exit, and
 * the text report as system-out, so CI shows each pattern as a test.
 *
 * Invariants: XML text escaped by xml_fputs() (sbuf.c); the text report is
 *   rendered by report_text.c, never a second time here.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dag.h"
#include "db.h"
#include "metrics.h"
#include "report.h"
#include "sbuf.h"

int report_junit_write(struct report *r, FILE *f, struct wsr_err *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int failures = 0;

	if (mem == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (report_text_write(r, mem, false, err) < 0) {
		fclose(mem);
		free(text);
		return -1;
	}
	fclose(mem);
	for (int i = 0; i < r->ndiags; i++)
		failures++;
	/* One more test case: the program itself ended well (status 0). */
	bool exit_bad = r->m->exit_status > 0;
	failures += exit_bad;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		   "  <testsuite name=\"wsr report ");
	xml_fputs(f, r->m->program);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" time=\"%.6f\">\n", diag_rule_count + 1,
		failures, (double)r->m->duration_ns / 1e9);
	fprintf(f, "    <testcase classname=\"wsr.program\" name=\"the program exited with status "
		   "0\">");
	if (exit_bad) {
		fprintf(f, "\n      <failure type=\"exit\" message=\"");
		xml_fputs(f, r->exit_text);
		fprintf(f, "\"/>\n    ");
	} else if (r->m->exit_status < 0) {
		fprintf(f, "<skipped message=\"");
		xml_fputs(f, r->exit_text);
		fprintf(f, "\"/>");
	}
	fprintf(f, "</testcase>\n");
	for (int k = 0; k < diag_rule_count; k++) {
		fprintf(f, "    <testcase classname=\"wsr.diagnostics\" name=\"");
		xml_fputs(f, diag_rules[k].title);
		fprintf(f, "\">");
		for (int i = 0; i < r->ndiags; i++) {
			if (strcmp(r->diags[i].id, diag_rules[k].id) != 0)
				continue;
			fprintf(f, "\n      <failure type=\"%s\" message=\"", diag_rules[k].id);
			xml_fputs(f, r->diags[i].text);
			fprintf(f, "\"/>\n    ");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "    <system-out>");
	xml_fputs(f, text);
	fprintf(f, "</system-out>\n  </testsuite>\n</testsuites>\n");
	free(text);
	return 0;
}
