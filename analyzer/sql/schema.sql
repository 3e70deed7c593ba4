-- schema.sql - the wsr trace database: tables (public interface, docs/schema.md).
--
-- Invariants:
--   - One database per trace; PRAGMA user_version is the schema version and
--     changes whenever a table, column or meaning below changes.
--   - Times (ts, start_ts, end_ts) are nanoseconds on the trace clock
--     (clock snapshot converted to ns from origin, as babeltrace2 prints them);
--     meta.start_ts is the first event, and views expose times relative to it.
--   - Ids are the runtime's: G ids from 1, P ids 0..gomaxprocs-1, M ids from 0.
--   - Interval tables (g_interval, p_state, m_state) hold half-open intervals
--     [start_ts, end_ts). Per P and per M the intervals tile [meta.start_ts,
--     meta.end_ts] (the P or M's first event to the end) without gap or
--     overlap; per G they tile [g.created_ts, g.end_ts]. cut = 1 marks an
--     interval closed by the end of the trace rather than by an event.
--   - Derived tables are computed in one pass over the events in time order;
--     nothing here is approximate unless the `discarded` table is non-empty,
--     and then meta.discarded_events / meta.discarded_packets say so.
-- Concurrency: written once by `wsr ingest` (to X.db.tmp, then renamed);
--   read-only afterwards (the viewer opens it with SQLITE_OPEN_READONLY).

PRAGMA user_version = 7;

-- Trace-wide facts: trace_path, hostname, procname, vpid, gomaxprocs,
-- runq_size, runtime_version, start_ts, end_ts, duration_ns, events,
-- discarded_events, discarded_packets, schema_version, analyzer_version,
-- schedtrace_interval_ns (the default interval of the schedtrace view),
-- idle_while_global_ns / idle_while_runnable_ns (time during which at least
-- one P was idle while the global queue held a G / while some G was
-- runnable: integrals of the counters step function), spins_found
-- (spin_stop events with found_work = 1), latency_n, latency_p50_ns,
-- latency_p90_ns, latency_p99_ns, latency_max_ns (sched_latency's
-- nearest-rank percentiles).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;

-- Every event, in time order (id is the muxer order, from 0; ts never
-- decreases with id). A virtual table (module wsr_blocks, registered by
-- the analyzer and the viewer on each connection, or loaded from the
-- wsr_sqlite extension: docs/schema.md, "Changes in version 6") over
-- column blocks of 1024 events: events_block holds each block's columns,
-- delta-coded (analyzer/colblock.c), events_zone its zone map (per column
-- min, max, NULL count, a mask of the texts). Ranges and equality on id
-- (also its rowid) and ts seek by the zone maps, equality on the other
-- columns skips the blocks that cannot hold the value, and ORDER BY ts or
-- id (ascending or descending) is the storage order. Read-only.
-- The payload fields beyond p, m, g live in a1..a3 (integers) and extra
-- (text: the init version string, the schedtrace record as JSON, or all
-- fields of an event unknown to this analyzer as JSON); event_fields maps
-- field names to columns and the ev_<name> views expose them by name.
--   name: the event name without the "wsr:" provider prefix; cpu: the
--   cpu_id context field (NULL if not recorded); tid, vpid: the vtid and
--   vpid fields (payload; the context fields in older traces); p: -1 when
--   the emitter held no P; m: -1 when not emitted by an M (sysmon,
--   monitor); g: the G the event is about (NULL if none).
--   The scheduler's counters after every event at ts, on the last event at
--   a ts at which one of them changed (NULL on the others): the counters
--   view (views.sql) is these rows. idle_ps = npidle, spinning_ms =
--   nmspinning, idle_ms = nmidle (parked Ms), threads = Ms started so far,
--   running_gs / runnable_gs = Gs in those g_state states, global_len =
--   global run queue length.
CREATE TABLE events_block (
  id   INTEGER PRIMARY KEY,  -- block number: 0, 1, ... in event order
  data BLOB NOT NULL
);
CREATE TABLE events_zone (
  id   INTEGER PRIMARY KEY,  -- events_block.id
  zone BLOB NOT NULL
);
CREATE VIRTUAL TABLE events USING wsr_blocks(rowid=id, order=ts,
  id INTEGER, ts INTEGER, name TEXT, cpu INTEGER, tid INTEGER, vpid INTEGER,
  p INTEGER, m INTEGER, g INTEGER, a1 INTEGER, a2 INTEGER, a3 INTEGER, extra TEXT,
  idle_ps INTEGER, spinning_ms INTEGER, idle_ms INTEGER, threads INTEGER,
  running_gs INTEGER, runnable_gs INTEGER, global_len INTEGER);

-- Events per name (all events, wsr and other providers), written at the end
-- of ingestion; equal to SELECT name, count(*) FROM events GROUP BY name.
CREATE TABLE event_counts (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;

-- Where each payload field of each event is stored (col is a1, a2, a3,
-- extra, or a JSON path into extra such as '$.idleprocs').
CREATE TABLE event_fields (
  name  TEXT NOT NULL,
  field TEXT NOT NULL,
  col   TEXT NOT NULL,
  PRIMARY KEY (name, field)
) WITHOUT ROWID;

-- BEGIN generated:event_fields by tracepoints/gen_catalog.py from tracepoints/catalog.toml (ninja -C build catalog-update); do not edit
INSERT INTO event_fields (name, field, col) VALUES
  ('init', 'gomaxprocs', 'a1'), ('init', 'runq_size', 'a2'), ('init', 'version', 'extra'),
  ('init', 'policy', 'a3'),
  ('g_create', 'parent_g', 'a1'),
  ('runqput', 'next', 'a1'), ('runqput', 'kicked_g', 'a2'), ('runqput', 'qlen', 'a3'),
  ('runq_spill', 'n', 'a1'), ('runq_spill', 'global_len', 'a2'),
  ('globrunq_put', 'global_len', 'a2'),
  ('globrunq_get', 'n', 'a1'), ('globrunq_get', 'global_len', 'a2'),
  ('g_run', 'source', 'a1'), ('g_run', 'inherit', 'a2'),
  ('g_stop', 'reason', 'a1'),
  ('g_ready', 'by_g', 'a1'),
  ('steal', 'victim', 'a1'), ('steal', 'n', 'a2'), ('steal', 'runnext', 'a3'),
  ('steal_scan', 'rounds', 'a1'), ('steal_scan', 'probed', 'a2'), ('steal_scan', 'found', 'a3'),
  ('spin_start', 'nmspinning', 'a1'), ('spin_start', 'found_work', 'a2'),
  ('spin_stop', 'nmspinning', 'a1'), ('spin_stop', 'found_work', 'a2'),
  ('p_idle', 'npidle', 'a1'),
  ('p_busy', 'npidle', 'a1'),
  ('m_park', 'nmidle', 'a1'), ('m_park', 'by_m', 'a2'),
  ('m_unpark', 'nmidle', 'a1'), ('m_unpark', 'by_m', 'a2'),
  ('m_create', 'new_m', 'a1'),
  ('syscall_exit', 'fast', 'a1'),
  ('handoff', 'to_m', 'a1'),
  ('retake', 'held_ns', 'a1'),
  ('preempt', 'ran_ns', 'a1'),
  ('netpoll', 'n_ready', 'a1'), ('netpoll', 'blocking', 'a2'),
  ('schedtrace', 'gomaxprocs', '$.gomaxprocs'), ('schedtrace', 'idleprocs', '$.idleprocs'),
  ('schedtrace', 'threads', '$.threads'), ('schedtrace', 'spinningthreads', '$.spinningthreads'),
  ('schedtrace', 'needspinning', '$.needspinning'), ('schedtrace', 'idlethreads', '$.idlethreads'),
  ('schedtrace', 'runqueue', '$.runqueue'), ('schedtrace', 'runq', '$.runq'),
  ('schedtrace', 'schedticks', '$.schedticks'), ('schedtrace', 'read_ts', '$.read_ts'),
  ('steal_lock_wait', 'victim', 'a1'), ('steal_lock_wait', 'wait_ns', 'a2'),
  ('steal_lock_wait', 'blocked', 'a3'),
  ('knobs', 'knobs', 'extra');
-- END generated:event_fields

-- The tracepoint enumerations (docs/tracepoints.md).
-- BEGIN generated:enums by tracepoints/gen_catalog.py from tracepoints/catalog.toml (ninja -C build catalog-update); do not edit
CREATE TABLE enum_policy (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO enum_policy VALUES
  (0, 'go'), (1, 'deque'), (2, 'locked'), (3, 'trylock'), (4, 'tokio');
CREATE TABLE enum_g_source (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO enum_g_source VALUES
  (0, 'runnext'), (1, 'local'), (2, 'global'), (3, 'steal'), (4, 'netpoll'), (5, 'timer');
CREATE TABLE enum_g_reason (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO enum_g_reason VALUES
  (0, 'yield'), (1, 'block'), (2, 'sleep'), (3, 'chan'), (4, 'mutex'), (5, 'syscall'),
  (6, 'preempt'), (7, 'exit'), (8, 'select'), (9, 'waitgroup'), (10, 'io');
-- END generated:enums

-- One row per G seen; the view g (g_state.sql) shows it with times. ended:
-- its g_stop(exit), as ns after created_ts, or NULL if the G was still alive
-- at the end of the trace; first_run likewise (NULL: it never ran). The
-- *_ns columns sum its g_interval rows. Offsets rather than times: 3 or 4
-- bytes instead of 8 (docs/schema.md, "Changes in version 5").
-- Rows in the order the Gs end (exit, or the end of the trace); a G id
-- seen again after its G ended (an exit lost, or ids of several
-- processes) has a row per G. A virtual table (module wsr_blocks) over
-- column blocks since version 7, like g_interval: g = ? reads the blocks
-- whose set filter may hold g; rowid: the row's position from 1.
--   parent: parent_g of g_create (0: none; NULL: no g_create seen);
--   created_ts: g_create, or the first event naming the G; runs: number of
--   g_run; stolen: runs whose source was steal.
CREATE TABLE g_info_block (
  id   INTEGER PRIMARY KEY,  -- block number: 0, 1, ... in the order the Gs end
  data BLOB NOT NULL
);
CREATE TABLE g_info_zone (
  id   INTEGER PRIMARY KEY,  -- g_info_block.id
  zone BLOB NOT NULL
);
CREATE VIRTUAL TABLE g_info USING wsr_blocks(base=1,
  g INTEGER, parent INTEGER, created_ts INTEGER, first_run INTEGER, ended INTEGER,
  create_p INTEGER, runs INTEGER, stolen INTEGER, run_ns INTEGER, runnable_ns INTEGER,
  waiting_ns INTEGER, syscall_ns INTEGER);

-- One row per P (0..gomaxprocs-1) and per M seen.
CREATE TABLE p (
  p            INTEGER PRIMARY KEY,
  schedticks   INTEGER NOT NULL,  -- g_run on this P with inherit = 0 (Go's schedtick)
  syscalls     INTEGER NOT NULL,  -- syscall_enter on this P (Go's syscalltick)
  run_ns       INTEGER NOT NULL,  -- time Gs ran on it (its g_interval running rows)
  runnext_runs INTEGER NOT NULL,  -- g_run with source runnext
  runs         INTEGER NOT NULL   -- g_run on this P
);
CREATE TABLE m (
  m          INTEGER PRIMARY KEY,
  tid        INTEGER,             -- vtid of its first event of its own (not a waker's spin_start)
  created_ts INTEGER NOT NULL,    -- m_create (or init for M0, or first event)
  creator    INTEGER              -- the M that emitted m_create (-1: sysmon), NULL if none seen
);

-- G intervals, one row per interval, in the order they end (rowid order is
-- end_ts order: an interval closes at the event that ends it, and the ones
-- open at the end close last). The view g_state (g_state.sql) shows them
-- with names and end_ts; this table stores codes and the length, which
-- halves its size (docs/schema.md, "Changes in version 5").
--   state: g_state_name.id: runnable | running | waiting | syscall | unknown.
--   runnable: p is the P whose local queue got it (NULL: global queue or
--     unknown); reason is how it became runnable (create, ready, yield,
--     preempt, syscall, ...); source is the g_run source that ended it.
--   running: p, m run it; reason is the g_stop reason that ended it.
--   waiting: reason is what it waits for (the g_stop reason: chan, sleep ...).
--   syscall: in a blocking call (wsr_syscall_enter); p, m at entry.
--   reason: g_reason.id (NULL: none); source: enum_g_source.id (NULL: none);
--   dur = end_ts - start_ts; end_ts (version 7) never decreases with rowid.
-- A virtual table (module wsr_blocks) over column blocks like events, since
-- version 7; rowid: the row's position from 1 (the rowids of the ordinary
-- table it was). The zone maps hold a set filter of each block's Gs, so
-- g = ? reads the blocks that may hold that G (1-3% of the others
-- besides), without an index; end_ts (= start_ts + dur, version 7) is its
-- order column, so a range of ends is a seek.
CREATE TABLE g_interval_block (
  id   INTEGER PRIMARY KEY,  -- block number: 0, 1, ... in end order
  data BLOB NOT NULL
);
CREATE TABLE g_interval_zone (
  id   INTEGER PRIMARY KEY,  -- g_interval_block.id
  zone BLOB NOT NULL
);
CREATE VIRTUAL TABLE g_interval USING wsr_blocks(base=1, order=end_ts,
  g INTEGER, state INTEGER, start_ts INTEGER, dur INTEGER, p INTEGER, m INTEGER,
  reason INTEGER, source INTEGER, cut INTEGER, end_ts INTEGER);

-- The names of g_interval's codes. The ids of g_state_name are the G
-- tracker's states (enum gstate, analyzer/gtable.h); g_reason holds the
-- g_stop reasons (enum_g_reason, same ids) and the two reasons of the
-- analyzer's own (GR_CREATE, GR_READY in gtable.h).
CREATE TABLE g_state_name (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO g_state_name VALUES
  (0, 'runnable'), (1, 'running'), (2, 'waiting'), (3, 'syscall'), (4, 'unknown');
CREATE TABLE g_reason (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO g_reason SELECT id, name FROM enum_g_reason;
INSERT INTO g_reason VALUES (100, 'create'), (101, 'ready');

-- P intervals. state: idle (on the idle list) | running (held by an M that
-- runs Gs or schedules) | spinning (held by a spinning M) | syscall (held by
-- an M blocked in a call, not yet handed off). m: the holder (NULL if idle).
CREATE TABLE p_state (
  p        INTEGER NOT NULL,
  state    TEXT NOT NULL,
  start_ts INTEGER NOT NULL,
  end_ts   INTEGER NOT NULL,
  m        INTEGER,
  cut      INTEGER NOT NULL DEFAULT 0
);

-- M intervals. state: running (holds a P) | spinning | syscall (blocked in
-- a call, with or without its P) | parked (asleep in stopm) | no_p (awake
-- without a P: starting, or between releasing its P and parking).
CREATE TABLE m_state (
  m        INTEGER NOT NULL,
  state    TEXT NOT NULL,
  start_ts INTEGER NOT NULL,
  end_ts   INTEGER NOT NULL,
  p        INTEGER,
  cut      INTEGER NOT NULL DEFAULT 0
);

-- Successful steals (thief = the stealing P), ring overflows to the global
-- queue, and batches taken from the global queue.
CREATE TABLE steals (
  ts      INTEGER NOT NULL,
  thief   INTEGER NOT NULL,
  victim  INTEGER NOT NULL,
  m       INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  runnext INTEGER NOT NULL
);
CREATE TABLE spills (
  ts         INTEGER NOT NULL,
  p          INTEGER NOT NULL,
  m          INTEGER NOT NULL,
  n          INTEGER NOT NULL,
  global_len INTEGER NOT NULL
);
CREATE TABLE global_gets (
  ts         INTEGER NOT NULL,
  p          INTEGER NOT NULL,
  m          INTEGER NOT NULL,
  n          INTEGER NOT NULL,
  global_len INTEGER NOT NULL
);

-- The scheduler's counters (a step function, one row per timestamp at
-- which any of them changed) are columns of events since schema 4: the
-- view counters of views.sql.

-- Per-P counters as a step function: one row per (p, ts) at which one of
-- them changed. runq = ring length (runnext excluded, as Go's schedtrace
-- prints it), runnext = the G in the runnext slot (0: empty), schedticks =
-- the P's schedtick as the runtime counts it: g_run events that do not
-- inherit the time slice (inherit = 0); runs = every g_run on the P so far.
-- A virtual table (module wsr_blocks) over column blocks like events, one
-- block stream per P (group=p): p = ? AND ts <= ? ORDER BY ts DESC reads
-- that P's blocks only, seeks ts by their zone maps and needs no sort.
-- rowid: the row's position in the blocks.
CREATE TABLE p_counters_block (
  id   INTEGER PRIMARY KEY,  -- block number; each block holds one P's rows
  data BLOB NOT NULL
);
CREATE TABLE p_counters_zone (
  id   INTEGER PRIMARY KEY,  -- p_counters_block.id
  zone BLOB NOT NULL
);
CREATE VIRTUAL TABLE p_counters USING wsr_blocks(group=p, order=ts,
  p INTEGER, ts INTEGER, runq INTEGER, runnext INTEGER, schedticks INTEGER, runs INTEGER);

-- Each field of each runtime schedtrace snapshot beside the reconstruction
-- (analyzer/schedcheck.c has the rule): snap_id/snap_ts the schedtrace
-- event, field one of idleprocs, threads, spinningthreads, idlethreads,
-- runqueue (p NULL) or runq, schedticks (p = the P); rt the runtime's value,
-- recon the reconstruction when the field was read (read_b: the start of its
-- read window, read_e its end; both the event's ts in traces without
-- read_ts); racing the events (ids) whose changes raced with the read and
-- add up to rt - recon; explained = 1 when rt = recon or racing explains it,
-- 0 when no subset of the racing events does, NULL when the field cannot be
-- checked (its read window is older than the history the check keeps).
CREATE TABLE schedtrace_fields (
  snap_id   INTEGER NOT NULL,
  snap_ts   INTEGER NOT NULL,
  field     TEXT NOT NULL,
  p         INTEGER,
  rt        INTEGER NOT NULL,
  recon     INTEGER NOT NULL,
  read_b    INTEGER NOT NULL,
  read_e    INTEGER NOT NULL,
  racing    TEXT,
  explained INTEGER
);

-- Where events were lost (LTTng discard mode, or packets lost in transit):
-- kind 'events' or 'packets', the stream (file name) and its cpu, the time
-- range babeltrace2 reports (NULL when unknown) and the count (NULL when the
-- trace does not say how many).
CREATE TABLE discarded (
  kind     TEXT NOT NULL,
  stream   TEXT NOT NULL,
  cpu      INTEGER,
  begin_ts INTEGER,
  end_ts   INTEGER,
  count    INTEGER
);

-- The computation DAG (analyzer/dag.c, docs/workspan.md), computed during
-- ingestion as its strands end. Only the critical path's strands are
-- written, unless `wsr ingest --dag` asked for every strand and edge
-- (meta.dag_tables = 'critical' / 'all'). A strand is a piece of a G's
-- running interval: a g_state running row cut at every g_create and
-- g_ready the G emitted during it. id is the order in which the strands
-- end (a topological order); g, seg:
-- the G and the index of its running interval (0 = its first run); ends:
-- what ended the strand ('spawn', 'wake', or the g_stop reason; 'cut' at
-- the end of the trace); span_ns / burdened_ns: the longest path ending
-- with this strand (it included), weighted by running time / plus edge
-- burdens; pred: the strand before it on that longest path (NULL: none);
-- critical = 1 on the critical path (the longest path of the DAG).
CREATE TABLE dag_strand (
  id          INTEGER PRIMARY KEY,
  g           INTEGER NOT NULL,
  seg         INTEGER NOT NULL,
  start_ts    INTEGER NOT NULL,
  end_ts      INTEGER NOT NULL,
  ends        TEXT NOT NULL,
  span_ns     INTEGER NOT NULL,
  burdened_ns INTEGER NOT NULL,
  pred        INTEGER,
  critical    INTEGER NOT NULL
);

-- Dependencies between strands (src < dst: ids of dag_strand; written
-- only with `wsr ingest --dag`). kind:
-- 'continue' (the next strand of the same G), 'spawn' (g_create: the
-- parent's strand -> the child's first), 'wake' (g_ready by_g: the waker's
-- strand -> the woken G's next strand). ts: the source event (g_create,
-- g_ready, or the end of the source strand); delay_ns: from ts to the
-- target's start; burden_ns: the scheduling delay the burdened span counts
-- on this edge (delay_ns for spawn and wake; for a continuation, the time
-- the G was runnable before the target ran, 0 when a G woke it: the wake
-- edge carries it); stolen = 1 when the target's run came from a steal;
-- relation (wake edges only): 'parent' (the waker's parent is the woken G),
-- 'ancestor' (a farther ancestor), 'other'.
CREATE TABLE dag_edge (
  src       INTEGER NOT NULL,
  dst       INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  ts        INTEGER NOT NULL,
  delay_ns  INTEGER NOT NULL,
  burden_ns INTEGER NOT NULL,
  stolen    INTEGER NOT NULL,
  relation  TEXT
);
