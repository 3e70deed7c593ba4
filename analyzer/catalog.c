/*
 * catalog.c - the wsr event catalog as the analyzer stores it (see rec.h).
 *
 * Invariants: every table here is expanded from the X-macros that the build
 * generates from tracepoints/catalog.toml (wsr_catalog.h), the source of the
 * provider (tracepoints/wsr_tp.h) and of sql/schema.sql's event_fields too:
 * one entry per enum wsr_ev, in its order, and every field named here is one
 * of the provider's (tests/tracing/catalog_drift.py checks the built analyzer
 * and provider against the catalog). At most one event has JSON fields
 * (gen_catalog.py refuses more), so they are one array.
 * Concurrency: read-only data.
 */
#include "config.h"

#include <stddef.h>

#include "rec.h"

static const struct wsr_json_field json_fields[] = {
#define WSR_JSON_FIELD(field, clock) {#field, clock},
	WSR_CAT_JSON(WSR_JSON_FIELD)
#undef WSR_JSON_FIELD
};

const struct wsr_catalog_entry wsr_catalog[EV_COUNT] = {
#define WSR_ENTRY(ev, EV, g, a1, a2, a3, text, n_json)                                             \
	[EV_##EV] = {#ev, g, {a1, a2, a3}, text, (n_json) ? json_fields : NULL, n_json},
	WSR_CAT_COLUMNS(WSR_ENTRY)
#undef WSR_ENTRY
};

const char *const wsr_g_source_names[WSR_G_SOURCE_COUNT] = {
#define WSR_ENUM_NAME(NAME, label, value) [value] = #label,
	WSR_CAT_ENUM_G_SOURCE(WSR_ENUM_NAME)
};

const char *const wsr_g_reason_names[WSR_G_REASON_COUNT] = {
	WSR_CAT_ENUM_G_REASON(WSR_ENUM_NAME)
};

const char *const wsr_policy_names[WSR_POLICY_COUNT] = {
	WSR_CAT_ENUM_POLICY(WSR_ENUM_NAME)
#undef WSR_ENUM_NAME
};
