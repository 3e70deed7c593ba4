/*
 * trace_stats.c - counts what a finished trace holds: events, discarded
 * events and packets (from the trace itself), stream bytes, time span.
 *
 * A libbabeltrace2 graph src.ctf.fs -> flt.utils.muxer -> simple sink. The
 * loss counts come from the discarded-events / discarded-packets messages
 * that src.ctf.fs derives from each packet context's `events_discarded`
 * and `packet_seq_num`, so they say what the trace lacks, not what the
 * tracer believed (record_session_discarded() gives that figure).
 *
 * Invariants:
 *   - Every CTF trace below the directory (a folder with a `metadata` file,
 *     e.g. ust/uid/0/64-bit) is one input of the single source component.
 *   - All bt2 references taken here are put before returning.
 * Concurrency: single-threaded; bt2 runs the graph in this thread.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <babeltrace2/babeltrace.h>

#include "ctfindex.h"
#include "record.h"

/* nftw() has no user pointer: the walk state lives here for one call. */
static struct {
	bt_value *inputs; /* array of trace directories */
	uint64_t bytes;
	int failed;
} walk;

static int walk_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;

	if (type != FTW_F)
		return 0;
	if (strcmp(base, "metadata") == 0) {
		char *dir = strndup(path, (size_t)ftw->base - 1);

		if (dir == NULL ||
		    bt_value_array_append_string_element(walk.inputs, dir) !=
			    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
			walk.failed = 1;
		free(dir);
	} else if (strstr(path, "/index/") == NULL) {
		walk.bytes += (uint64_t)sb->st_size;
	}
	return 0;
}

/* Pushes bt2's current-thread error causes (innermost first) onto ERR. */
static void push_bt_error(struct wsr_err *err)
{
	const bt_error *error = bt_current_thread_take_error();

	if (error == NULL)
		return;
	for (uint64_t i = bt_error_get_cause_count(error); i > 0; i--) {
		const bt_error_cause *cause = bt_error_borrow_cause_by_index(error, i - 1);

		err_push(err, "%s", bt_error_cause_get_message(cause));
	}
	bt_error_release(error);
}

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it,
								      void *data)
{
	(void)it;
	(void)data;
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static uint64_t msg_time(const bt_message *msg)
{
	const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	int64_t ns = 0;

	if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) != BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
		return 0;
	return (uint64_t)ns;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it,
								       void *data)
{
	struct trace_stats *st = data;
	bt_message_array_const msgs;
	uint64_t count = 0, n;

	switch (bt_message_iterator_next(it, &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < count; i++) {
		const bt_message *msg = msgs[i];

		switch (bt_message_get_type(msg)) {
		case BT_MESSAGE_TYPE_EVENT:
			st->events++;
			if (bt_message_event_borrow_stream_class_default_clock_class_const(msg) != NULL) {
				uint64_t t = msg_time(msg);

				if (st->begin_ns == 0 || t < st->begin_ns)
					st->begin_ns = t;
				if (t > st->end_ns)
					st->end_ns = t;
			}
			break;
		case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
			st->discard_msgs++;
			n = 0;
			if (bt_message_discarded_events_get_count(msg, &n) ==
			    BT_PROPERTY_AVAILABILITY_AVAILABLE)
				st->discarded_events += n;
			break;
		case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
			st->discard_msgs++;
			n = 0;
			if (bt_message_discarded_packets_get_count(msg, &n) ==
			    BT_PROPERTY_AVAILABILITY_AVAILABLE)
				st->discarded_packets += n;
			break;
		default:
			break;
		}
		bt_message_put_ref(msg);
	}
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* Finds plugin NAME; *PLUGIN gets a reference the caller puts. */
static int find_plugin(struct wsr_err *err, const char *name, const bt_plugin **plugin)
{
	if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, plugin) !=
	    BT_PLUGIN_FIND_STATUS_OK) {
		push_bt_error(err);
		err_push(err, "babeltrace2 plugin '%s' not found (Debian: apt install babeltrace2)",
				name);
		return -1;
	}
	return 0;
}

int trace_stats_read(struct wsr_err *err, const char *dir, struct trace_stats *st)
{
	const bt_plugin *ctf = NULL, *utils = NULL;
	const bt_component_source *src = NULL;
	const bt_component_filter *mux = NULL;
	const bt_component_sink *sink = NULL;
	bt_value *params = NULL;
	bt_graph *graph = NULL;
	bt_graph_run_status run;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	memset(&walk, 0, sizeof(walk));
	walk.inputs = bt_value_array_create();
	if (walk.inputs == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (nftw(dir, walk_visit, 16, FTW_PHYS) != 0 || walk.failed) {
		err_push(err, "walking %s: %s", dir, walk.failed ? "out of memory" : strerror(errno));
		goto out;
	}
	st->bytes = walk.bytes;
	if (bt_value_array_get_length(walk.inputs) == 0) {
		ret = 0; /* no trace: the program emitted nothing this session kept */
		goto out;
	}
	st->found = 1;

	if (find_plugin(err, "ctf", &ctf) != 0 || find_plugin(err, "utils", &utils) != 0)
		goto out;
	params = bt_value_map_create();
	graph = bt_graph_create(0);
	if (params == NULL || graph == NULL ||
	    bt_value_map_insert_entry(params, "inputs", walk.inputs) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
		err_push(err, "out of memory");
		goto out;
	}
	if (bt_graph_add_source_component(
		    graph, bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"), "src",
		    params, BT_LOGGING_LEVEL_NONE, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_filter_component(
		    graph, bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"),
		    "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
	    bt_graph_add_simple_sink_component(graph, "count", sink_init, sink_consume, NULL, st,
					       &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		push_bt_error(err);
		err_push(err, "cannot open the CTF trace in %s", dir);
		goto out;
	}
	/* The muxer adds an input port each time one is connected: always use the last. */
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
		const bt_port_output *o = bt_component_source_borrow_output_port_by_index_const(src, i);
		uint64_t nin = bt_component_filter_get_input_port_count(mux);
		const bt_port_input *in =
			bt_component_filter_borrow_input_port_by_index_const(mux, nin - 1);

		if (bt_graph_connect_ports(graph, o, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			push_bt_error(err);
			err_push(err, "cannot connect the trace's streams");
			goto out;
		}
	}
	if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
				   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
				   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		push_bt_error(err);
		err_push(err, "cannot connect the muxer to the counter");
		goto out;
	}
	do
		run = bt_graph_run(graph);
	while (run == BT_GRAPH_RUN_STATUS_AGAIN);
	if (run != BT_GRAPH_RUN_STATUS_OK) {
		push_bt_error(err);
		err_push(err, "reading the CTF trace in %s", dir);
		goto out;
	}
	ret = 0;
out:
	bt_graph_put_ref(graph);
	bt_value_put_ref(params);
	bt_value_put_ref(walk.inputs);
	walk.inputs = NULL;
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	return ret;
}

/* nftw() state for trace_index_read(): the first error wins. */
static struct {
	struct trace_index *ix;
	struct wsr_err *err;
	int failed;
} iwalk;

/*
 * One index file (ctfindex.h). events_discarded is cumulative per stream,
 * so the last entry holds the stream's total; a gap in packet_seq_num is a
 * lost packet.
 */
static int index_file(const char *path)
{
	struct ctf_index_entry *e = NULL;
	size_t n = 0;

	if (ctf_index_load(path, &e, &n, iwalk.err) != 0)
		return -1;
	iwalk.ix->streams++;
	for (size_t i = 0; i < n; i++) {
		iwalk.ix->packets++;
		iwalk.ix->bytes += e[i].packet_size / 8;
		if (i > 0 && e[i].has_seq && e[i - 1].has_seq && e[i].seq > e[i - 1].seq + 1)
			iwalk.ix->lost_packets += e[i].seq - e[i - 1].seq - 1;
	}
	if (n > 0)
		iwalk.ix->discarded_events += e[n - 1].events_discarded;
	free(e);
	return 0;
}

static int iwalk_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)sb;
	(void)ftw;
	if (type != FTW_F || n < 4 || strcmp(path + n - 4, ".idx") != 0 ||
	    strstr(path, "/index/") == NULL)
		return 0;
	if (index_file(path) != 0) {
		iwalk.failed = 1;
		return 1; /* stop the walk */
	}
	return 0;
}

int trace_index_read(struct wsr_err *err, const char *dir, struct trace_index *ix)
{
	int rc;

	memset(ix, 0, sizeof(*ix));
	iwalk.ix = ix;
	iwalk.err = err;
	iwalk.failed = 0;
	rc = nftw(dir, iwalk_visit, 16, FTW_PHYS);
	if (iwalk.failed)
		return -1;
	if (rc != 0) {
		err_push(err, "walking %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}
