-- views.sql - the wsr trace database: views (public interface, docs/schema.md).
--
-- Invariants:
--   - Views only read the tables of schema.sql; they hold no state, so the
--     database stays valid read-only.
--   - `t` columns are nanoseconds relative to meta.start_ts; `t_ms` are whole
--     milliseconds relative to it (Go's schedtrace "SCHED Nms").
--   - schedtrace (sql/schedtrace.sql) samples the counters step function at
--     schedtrace_ticks; metrics.c runs the same SELECT over its own ticks for
--     `wsr report --interval` and the viewer.
-- Concurrency: none (read by any number of readers).

-- One row: trace start and end, gomaxprocs, default schedtrace interval.
CREATE VIEW trace_info AS
SELECT
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ts') AS start_ts,
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'end_ts') AS end_ts,
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'duration_ns') AS duration_ns,
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'gomaxprocs') AS gomaxprocs,
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schedtrace_interval_ns') AS interval_ns;

-- The scheduler's counters as a step function: one row per timestamp at
-- which any of them changed, holding the values after every event at ts
-- (columns of the last event at ts: schema.sql, events). A table until
-- schema 4, with the same columns and rows.
CREATE VIEW counters AS
SELECT ts, idle_ps, spinning_ms, idle_ms, threads, running_gs, runnable_gs, global_len
FROM events WHERE running_gs IS NOT NULL;

-- Events by name, payload fields by name (event_fields).
-- BEGIN generated:ev_views by tracepoints/gen_catalog.py from tracepoints/catalog.toml (ninja -C build catalog-update); do not edit
CREATE VIEW ev_init AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS gomaxprocs, a2 AS runq_size, (SELECT name FROM enum_policy WHERE id = a3) AS policy, extra AS version
FROM events WHERE name = 'init';

CREATE VIEW ev_g_create AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS parent_g
FROM events WHERE name = 'g_create';

CREATE VIEW ev_runqput AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS next, a2 AS kicked_g, a3 AS qlen
FROM events WHERE name = 'runqput';

CREATE VIEW ev_runq_spill AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS n, a2 AS global_len
FROM events WHERE name = 'runq_spill';

CREATE VIEW ev_globrunq_put AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a2 AS global_len
FROM events WHERE name = 'globrunq_put';

CREATE VIEW ev_globrunq_get AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS n, a2 AS global_len
FROM events WHERE name = 'globrunq_get';

CREATE VIEW ev_g_run AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  (SELECT name FROM enum_g_source WHERE id = a1) AS source, a2 AS inherit
FROM events WHERE name = 'g_run';

CREATE VIEW ev_g_stop AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  (SELECT name FROM enum_g_reason WHERE id = a1) AS reason
FROM events WHERE name = 'g_stop';

CREATE VIEW ev_g_ready AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS by_g
FROM events WHERE name = 'g_ready';

CREATE VIEW ev_steal AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS victim, a2 AS n, a3 AS runnext
FROM events WHERE name = 'steal';

CREATE VIEW ev_steal_scan AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS rounds, a2 AS probed, a3 AS found
FROM events WHERE name = 'steal_scan';

CREATE VIEW ev_spin AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, name,
  a1 AS nmspinning, a2 AS found_work
FROM events WHERE name IN ('spin_start', 'spin_stop');

CREATE VIEW ev_p_idle_busy AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, name,
  a1 AS npidle
FROM events WHERE name IN ('p_idle', 'p_busy');

CREATE VIEW ev_m_park_unpark AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, name,
  a1 AS nmidle, a2 AS by_m
FROM events WHERE name IN ('m_park', 'm_unpark');

CREATE VIEW ev_m_create AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS new_m
FROM events WHERE name = 'm_create';

CREATE VIEW ev_syscall AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g, name,
  a1 AS fast
FROM events WHERE name IN ('syscall_enter', 'syscall_exit');

CREATE VIEW ev_handoff AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS to_m
FROM events WHERE name = 'handoff';

CREATE VIEW ev_retake AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS held_ns
FROM events WHERE name = 'retake';

CREATE VIEW ev_preempt AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g,
  a1 AS ran_ns
FROM events WHERE name = 'preempt';

CREATE VIEW ev_timer_fire AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m, g
FROM events WHERE name = 'timer_fire';

CREATE VIEW ev_netpoll AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS n_ready, a2 AS blocking
FROM events WHERE name = 'netpoll';

CREATE VIEW ev_schedtrace AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  json_extract(extra, '$.gomaxprocs') AS gomaxprocs,
  json_extract(extra, '$.idleprocs') AS idleprocs,
  json_extract(extra, '$.threads') AS threads,
  json_extract(extra, '$.spinningthreads') AS spinningthreads,
  json_extract(extra, '$.needspinning') AS needspinning,
  json_extract(extra, '$.idlethreads') AS idlethreads,
  json_extract(extra, '$.runqueue') AS runqueue,
  json_extract(extra, '$.runq') AS runq,
  json_extract(extra, '$.schedticks') AS schedticks,
  json_extract(extra, '$.read_ts') AS read_ts
FROM events WHERE name = 'schedtrace';

CREATE VIEW ev_steal_lock_wait AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  a1 AS victim, a2 AS wait_ns, a3 AS blocked
FROM events WHERE name = 'steal_lock_wait';

CREATE VIEW ev_knobs AS
SELECT id, ts, ts - (SELECT start_ts FROM trace_info) AS t, cpu, tid, vpid, p, m,
  extra AS knobs
FROM events WHERE name = 'knobs';
-- END generated:ev_views

-- The instants of the reconstructed schedtrace: every
-- meta.schedtrace_interval_ns after the start (k = 1, 2, ...), up to the end.
CREATE VIEW schedtrace_ticks AS
WITH RECURSIVE ticks(k, ts) AS (
  SELECT 1, start_ts + interval_ns FROM trace_info
  WHERE interval_ns > 0 AND start_ts + interval_ns <= end_ts
  UNION ALL
  SELECT k + 1, ticks.ts + ti.interval_ns FROM ticks, trace_info ti
  WHERE ticks.ts + ti.interval_ns <= ti.end_ts
)
SELECT k, ts FROM ticks;

-- The view `schedtrace` (the reconstruction at schedtrace_ticks) is created
-- by db.c from sql/schedtrace.sql, whose SELECT metrics.c also runs at other
-- intervals: one definition for the view, the report and the viewer.

-- The runtime's schedtrace events beside the reconstruction, one row per
-- snapshot (rt_* from the event; the others from schedtrace_fields: each
-- field reconstructed when the runtime read it). explained = 1 when every
-- field agrees or its difference is explained by the racing events listed
-- in racing (ids of events); 0 when some field's is not; NULL when none is
-- unexplained but some field could not be checked.
CREATE VIEW schedtrace_check AS
SELECT
  e.ts, e.t,
  e.gomaxprocs AS rt_gomaxprocs, ti.gomaxprocs AS gomaxprocs,
  e.idleprocs AS rt_idleprocs,
  (SELECT recon FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.field = 'idleprocs') AS idleprocs,
  e.threads AS rt_threads,
  (SELECT recon FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.field = 'threads') AS threads,
  e.spinningthreads AS rt_spinningthreads,
  (SELECT recon FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.field = 'spinningthreads') AS spinningthreads,
  e.idlethreads AS rt_idlethreads,
  (SELECT recon FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.field = 'idlethreads') AS idlethreads,
  e.runqueue AS rt_runqueue,
  (SELECT recon FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.field = 'runqueue') AS runqueue,
  e.runq AS rt_runq,
  (SELECT json_group_array(recon) FROM (SELECT recon FROM schedtrace_fields f
    WHERE f.snap_id = e.id AND f.field = 'runq' ORDER BY f.p)) AS runq,
  e.schedticks AS rt_schedticks,
  (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE json_group_array(recon) END FROM (
    SELECT recon FROM schedtrace_fields f
    WHERE f.snap_id = e.id AND f.field = 'schedticks' ORDER BY f.p)) AS schedticks,
  (SELECT CASE WHEN min(explained) = 0 THEN 0 WHEN count(*) > count(explained) THEN NULL
     ELSE 1 END FROM schedtrace_fields f WHERE f.snap_id = e.id) AS explained,
  (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE json_group_array(json_object('field', field,
      'p', p, 'rt', rt, 'recon', recon, 'racing', json(racing))) END
    FROM schedtrace_fields f WHERE f.snap_id = e.id AND f.rt != f.recon) AS racing
FROM ev_schedtrace e, trace_info ti;

-- Who stole from whom: number of steals and Gs taken.
CREATE VIEW steal_graph AS
SELECT thief, victim, count(*) AS steals, sum(n) AS gs
FROM steals GROUP BY thief, victim;

-- Scheduling latency: from becoming runnable (created, readied, yielded,
-- preempted, back from a call) to running; intervals cut by the end of the
-- trace are left out. source: where the G was taken from.
CREATE VIEW sched_latency AS
SELECT g, start_ts AS ready_ts, end_ts AS run_ts, end_ts - start_ts AS latency_ns,
  p, reason, source
FROM g_state WHERE state = 'runnable' AND cut = 0;

-- Time per P and state (ns), and per M and state.
CREATE VIEW p_time AS
SELECT p, state, sum(end_ts - start_ts) AS ns, count(*) AS intervals
FROM p_state GROUP BY p, state;

CREATE VIEW m_time AS
SELECT m, state, sum(end_ts - start_ts) AS ns, count(*) AS intervals
FROM m_state GROUP BY m, state;

-- Time each P spent running Gs (from g_state, so scheduling overhead is not
-- counted), and the number of Gs it ran.
CREATE VIEW p_run_time AS
SELECT p, sum(end_ts - start_ts) AS ns, count(*) AS runs
FROM g_state WHERE state = 'running' GROUP BY p;
