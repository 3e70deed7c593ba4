/*
 * catalog-dump.c - prints the event catalog as the built code holds it, for
 * the unit test catalog-drift (catalog_drift.py compares each listing with
 * what tracepoints/gen_catalog.py derives from tracepoints/catalog.toml).
 *
 * Usage: catalog-dump provider   libwsr's compiled LTTng-UST provider: its
 *                                enumerations and events, read from the probe
 *                                descriptor that liblttng-ust registers
 *        catalog-dump analyzer   the analyzer's tables (analyzer/catalog.c)
 *                                and metrics.c's latency_sources
 *                                (exit 77 when tracing is compiled out)
 *        catalog-dump stats      runs an empty wsr_main with
 *                                WSRDEBUG=stats=1: the runtime prints its
 *                                `wsr stats:` line on stderr
 *
 * Invariants: every listing is one line per item, in the order the code
 *   holds them (the provider's definition order, enum wsr_ev's order), in the
 *   format gen_catalog.py's `expect` writes; a field whose type this program
 *   does not know prints as `?`, so it can only fail the comparison.
 * Concurrency: single-threaded (the stats mode runs one G).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if WSR_HAVE_TRACING
# include <lttng/ust-events.h>
#endif

#include "metrics.h"
#include "rec.h"
#include "wsr.h"

#if WSR_HAVE_TRACING
/* tracepoints/wsr_tp.c, linked from libwsr's objects. */
extern const struct lttng_ust_probe_desc lttng_ust__probe_desc___wsr;

static const char *int_name(const struct lttng_ust_type_common *t)
{
	static char buf[16];
	const struct lttng_ust_type_integer *i;

	if (t->type != lttng_ust_type_integer)
		return "?";
	i = (const struct lttng_ust_type_integer *)t;
	snprintf(buf, sizeof(buf), "%sint%u", i->signedness ? "" : "u", i->size);
	return buf;
}

static void print_enum(const struct lttng_ust_enum_desc *d)
{
	printf("enum %s", d->name);
	for (unsigned i = 0; i < d->nr_entries; i++)
		printf(" %s=%lld", d->entries[i]->string, (long long)d->entries[i]->start.value);
	printf("\n");
}

/* name:type for one field; a sequence's length field (named by the next
 * field, or by none: then it is the field before) is folded into it as
 * sequence:ELEM:LENGTH_TYPE. */
static void print_field(const struct lttng_ust_event_field *f,
			const struct lttng_ust_event_field *len)
{
	const struct lttng_ust_type_common *t = f->type;

	printf(" %s:", f->name);
	switch (t->type) {
	case lttng_ust_type_integer:
		printf("%s", int_name(t));
		break;
	case lttng_ust_type_string:
		printf("string");
		break;
	case lttng_ust_type_enum: {
		const struct lttng_ust_type_enum *e = (const struct lttng_ust_type_enum *)t;
		printf("enum:%s:%s", e->desc->name, int_name(e->container_type));
		break;
	}
	case lttng_ust_type_sequence: {
		const struct lttng_ust_type_sequence *s = (const struct lttng_ust_type_sequence *)t;
		printf("sequence:%s:",
		       int_name(s->elem_type)); /* int_name's buffer: one per call */
		printf("%s", len != NULL ? int_name(len->type) : "?");
		break;
	}
	default:
		printf("?");
	}
}

static int dump_provider(void)
{
	const struct lttng_ust_probe_desc *pd = &lttng_ust__probe_desc___wsr;
	const struct lttng_ust_enum_desc *enums[16];
	unsigned n_enums = 0;

	/* The enumerations, in the order the events first use them. */
	for (unsigned i = 0; i < pd->nr_events; i++) {
		const struct lttng_ust_tracepoint_class *c = pd->event_desc[i]->tp_class;
		for (size_t k = 0; k < c->nr_fields; k++) {
			const struct lttng_ust_type_common *t = c->fields[k]->type;
			if (t->type != lttng_ust_type_enum)
				continue;
			const struct lttng_ust_enum_desc *d =
				((const struct lttng_ust_type_enum *)t)->desc;
			unsigned j = 0;
			while (j < n_enums && enums[j] != d)
				j++;
			if (j == n_enums && n_enums < sizeof(enums) / sizeof(enums[0]))
				enums[n_enums++] = d;
		}
	}
	for (unsigned j = 0; j < n_enums; j++)
		print_enum(enums[j]);
	for (unsigned i = 0; i < pd->nr_events; i++) {
		const struct lttng_ust_event_desc *ev = pd->event_desc[i];
		const struct lttng_ust_tracepoint_class *c = ev->tp_class;
		/* event_name is "provider:event" in 2.13 */
		const char *name = strchr(ev->event_name, ':');

		printf("event %s", name != NULL ? name + 1 : ev->event_name);
		for (size_t k = 0; k < c->nr_fields; k++) {
			const struct lttng_ust_event_field *f = c->fields[k];
			const struct lttng_ust_event_field *next =
				k + 1 < c->nr_fields ? c->fields[k + 1] : NULL;
			const struct lttng_ust_type_sequence *seq =
				next != NULL && next->type->type == lttng_ust_type_sequence
					? (const struct lttng_ust_type_sequence *)next->type
					: NULL;
			/* length_name NULL: the length is the previous field */
			if (seq != NULL && f->type->type == lttng_ust_type_integer &&
			    (seq->length_name == NULL || strcmp(seq->length_name, f->name) == 0)) {
				print_field(next, f);
				k++;
				continue;
			}
			print_field(f, NULL);
		}
		printf("\n");
	}
	return 0;
}
#else
static int dump_provider(void)
{
	fprintf(stderr, "catalog-dump: tracing is compiled out (-Dtracing=disabled)\n");
	return 77;
}
#endif

static void print_names(const char *what, const char *const *names, int n)
{
	printf("%s", what);
	for (int i = 0; i < n; i++)
		printf(" %s", names[i]);
	printf("\n");
}

static int dump_analyzer(void)
{
	static const char *const cols[] = {"g", "a1", "a2", "a3", "extra"};

	print_names("enum policy", wsr_policy_names, WSR_POLICY_COUNT);
	print_names("enum g_source", wsr_g_source_names, WSR_G_SOURCE_COUNT);
	print_names("enum g_reason", wsr_g_reason_names, WSR_G_REASON_COUNT);
	for (int i = 0; i < EV_COUNT; i++) {
		const struct wsr_catalog_entry *c = &wsr_catalog[i];
		const char *v[5] = {c->g, c->a[0], c->a[1], c->a[2], c->text};

		printf("event %s", c->name);
		for (int k = 0; k < 5; k++)
			printf(" %s=%s", cols[k], v[k] != NULL ? v[k] : "-");
		for (int k = 0; k < c->n_json; k++)
			printf(" $.%s%s", c->json[k].name, c->json[k].clock ? ":clock" : "");
		printf("\n");
	}
	print_names("latency_sources", latency_sources, LATENCY_SOURCES);
	return 0;
}

static int empty_main(void *arg)
{
	(void)arg;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "provider") == 0)
		return dump_provider();
	if (argc == 2 && strcmp(argv[1], "analyzer") == 0)
		return dump_analyzer();
	if (argc == 2 && strcmp(argv[1], "stats") == 0) {
		if (setenv("WSRDEBUG", "stats=1", 1) != 0)
			return 2;
		return wsr_main(empty_main, NULL);
	}
	fprintf(stderr, "usage: catalog-dump provider|analyzer|stats\n");
	return 2;
}
