/*
 * plugin.c - the Babeltrace 2 plugin `wsr` with one sink component class,
 * `sink.wsr.sqlite`: the database of `wsr ingest`, from any bt2 graph.
 *
 *   babeltrace2 --plugin-path=DIR TRACE -c sink.wsr.sqlite -p 'path="trace.db"'
 *
 * Parameters: path (string, required), force (bool: replace an existing
 * database), vpid (integer: keep only that process's events), dag (bool:
 * every DAG strand and edge in dag_strand / dag_edge, as `wsr ingest --dag`).
 *
 * Design: the same decoder (decode.c) and deriver (derive.c) as `wsr
 * ingest`, called in-process on each batch of messages from the upstream
 * iterator (the CLI puts a muxer in front, so messages come in time order).
 * Unlike `wsr ingest`, nothing protects the process from babeltrace2
 * itself looping or aborting on a damaged trace: use `wsr ingest` for
 * untrusted input.
 *
 * Invariants:
 *   - The database is written and published as `wsr ingest` does it
 *     (publish.c): to PATH.PID.tmp, renamed to PATH only after the last
 *     message, the derivation, the indexes and the COMMIT succeeded; on any
 *     failure (or when the graph is torn down early) the file is removed.
 *   - An existing PATH is replaced only with force=true, and only if it is
 *     a wsr database.
 *   - Errors are appended to the bt2 error of the current thread as causes
 *     from this component, so the CLI prints them.
 * Concurrency: bt2 calls a component from one thread.
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>
#include <sqlite3.h>

#include "db.h"
#include "decode.h"
#include "derive.h"
#include "err.h"
#include "publish.h"

struct wsr_sink {
	bt_self_component_sink *self;
	bt_message_iterator *it;
	struct wsr_decoder *dec;
	struct derive *dv;
	struct publish pb;
	struct wsr_err err;
};

static int sink_rec(void *ctx, const struct wsr_rec *r, const char *extra)
{
	struct wsr_sink *s = ctx;

	return derive_rec(s->dv, r, extra, &s->err);
}

static void report(struct wsr_sink *s)
{
	char buf[WSR_ERR_MAX * (WSR_ERR_LEN + 16)];

	err_format(&s->err, buf, sizeof(buf));
	BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
		bt_self_component_sink_as_self_component(s->self), "sink.wsr.sqlite: %s", buf);
}

static void sink_cleanup(struct wsr_sink *s)
{
	derive_destroy(s->dv);
	s->dv = NULL;
	decoder_destroy(s->dec);
	s->dec = NULL;
	publish_end(&s->pb);
}

static bt_component_class_initialize_method_status
sink_init(bt_self_component_sink *self, bt_self_component_sink_configuration *config,
	  const bt_value *params, void *init_data)
{
	struct wsr_sink *s = calloc(1, sizeof(*s));
	const bt_value *v;
	bool force = false, dag = false;
	int64_t vpid = 0;
	char path[PATH_MAX];

	(void)config;
	(void)init_data;
	if (s == NULL)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	s->self = self;
	s->pb.lock_fd = -1;
	err_init(&s->err);
	v = bt_value_map_borrow_entry_value_const(params, "path");
	if (v == NULL || !bt_value_is_string(v)) {
		err_push(&s->err, "the parameter path (string) is required: -p 'path=\"x.db\"'");
		goto fail;
	}
	snprintf(path, sizeof(path), "%s", bt_value_string_get(v));
	v = bt_value_map_borrow_entry_value_const(params, "force");
	if (v != NULL && bt_value_is_bool(v))
		force = bt_value_bool_get(v);
	v = bt_value_map_borrow_entry_value_const(params, "vpid");
	if (v != NULL && bt_value_is_signed_integer(v))
		vpid = bt_value_integer_signed_get(v);
	else if (v != NULL && bt_value_is_unsigned_integer(v))
		vpid = (int64_t)bt_value_integer_unsigned_get(v);
	v = bt_value_map_borrow_entry_value_const(params, "dag");
	if (v != NULL && bt_value_is_bool(v))
		dag = bt_value_bool_get(v);
	if (publish_begin(&s->pb, path, force, "-p force=true", &s->err) < 0)
		goto fail;
	s->dv = derive_create(s->pb.db, path, &s->err);
	s->dec = decoder_create(sink_rec, s);
	if (s->dv == NULL || s->dec == NULL) {
		err_push(&s->err, "out of memory");
		goto fail;
	}
	if (vpid > 0)
		derive_set_vpid(s->dv, vpid);
	derive_set_dag_rows(s->dv, dag);
	if (bt_self_component_sink_add_input_port(self, "in", NULL, NULL) !=
	    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
		err_push(&s->err, "cannot add the input port");
		goto fail;
	}
	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), s);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
fail:
	report(s);
	sink_cleanup(s);
	free(s);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

static void sink_finalize(bt_self_component_sink *self)
{
	struct wsr_sink *s =
		bt_self_component_get_data(bt_self_component_sink_as_self_component(self));

	if (s == NULL)
		return;
	bt_message_iterator_put_ref(s->it);
	sink_cleanup(s);
	free(s);
}

static bt_component_class_sink_graph_is_configured_method_status
sink_graph_is_configured(bt_self_component_sink *self)
{
	struct wsr_sink *s =
		bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	bt_self_component_port_input *port =
		bt_self_component_sink_borrow_input_port_by_name(self, "in");

	if (bt_message_iterator_create_from_sink_component(self, port, &s->it) !=
	    BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
	return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static int sink_finish(struct wsr_sink *s)
{
	bool init_missing;

	return publish_finish(&s->pb, &s->dv, "the trace", NULL, NULL, NULL, &init_missing,
			      &s->err);
}

static bt_component_class_sink_consume_method_status sink_consume(bt_self_component_sink *self)
{
	struct wsr_sink *s =
		bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	bt_message_array_const msgs;
	uint64_t count;

	switch (bt_message_iterator_next(s->it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		if (decoder_messages(s->dec, msgs, count, &s->err) < 0) {
			report(s);
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
		}
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		if (sink_finish(s) < 0) {
			report(s);
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
		}
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
	default:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
	}
}

BT_PLUGIN_MODULE();
BT_PLUGIN(wsr);
BT_PLUGIN_DESCRIPTION("wsr: work-stealing scheduler traces to SQLite");
BT_PLUGIN_AUTHOR("wsr");
BT_PLUGIN_LICENSE("MIT");
BT_PLUGIN_SINK_COMPONENT_CLASS(sqlite, sink_consume);
BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(
	sqlite,
	"Write the wsr trace database (docs/schema.md): events and derived scheduler state.");
BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(sqlite, sink_init);
BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(sqlite, sink_finalize);
BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(sqlite, sink_graph_is_configured);
