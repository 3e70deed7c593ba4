-- schedtrace.sql - the reconstructed Go schedtrace: the one definition of its
-- figures (docs/schema.md, docs/report.md).
--
-- This file is the body of a SELECT, not a statement of its own: db.c creates
-- the view `schedtrace` as this SELECT, and metrics.c (`wsr report`, the
-- viewer, the HTML report) runs the same text behind a common table
-- expression named schedtrace_ticks, which shadows the view of that name, to
-- sample at any interval or at one instant. So the `schedtrace` view, the
-- report's SCHED lines and the viewer's table cannot disagree.
--
-- Invariants:
--   - One row per row of schedtrace_ticks(k, ts), in ts order: the counters
--     step function (the `counters` row at or before ts: the events row with
--     the counters, found by id, since SQLite does not flatten a view over
--     the virtual table events on the right of a LEFT JOIN and would copy
--     all of it) and each P's p_counters row at or before ts. Only reads
--     tables and views.
--   - t_ms is the "SCHED Nms" label: whole milliseconds after meta.start_ts;
--     t is nanoseconds after it.
--   - runq and schedticks are JSON arrays, one entry per row of `p` in P
--     order. needspinning is always 0: no event of the catalog carries Go's
--     needspinning flag (docs/schema.md).
-- Concurrency: none (read by any number of readers).
SELECT
  (ticks.ts - ti.start_ts) / 1000000 AS t_ms,
  ticks.ts AS ts,
  ti.gomaxprocs AS gomaxprocs,
  c.idle_ps AS idleprocs,
  c.threads AS threads,
  c.spinning_ms AS spinningthreads,
  0 AS needspinning,
  c.idle_ms AS idlethreads,
  c.global_len AS runqueue,
  (SELECT json_group_array(q) FROM (
    SELECT coalesce((SELECT pc.runq FROM p_counters pc
      WHERE pc.p = p.p AND pc.ts <= ticks.ts ORDER BY pc.ts DESC LIMIT 1), 0) AS q
    FROM p ORDER BY p.p)) AS runq,
  (SELECT json_group_array(q) FROM (
    SELECT coalesce((SELECT pc.schedticks FROM p_counters pc
      WHERE pc.p = p.p AND pc.ts <= ticks.ts ORDER BY pc.ts DESC LIMIT 1), 0) AS q
    FROM p ORDER BY p.p)) AS schedticks,
  ticks.ts - ti.start_ts AS t,
  c.runnable_gs AS runnable_gs,
  c.running_gs AS running_gs
FROM (SELECT t.k, t.ts, (SELECT c2.id FROM events c2 WHERE c2.running_gs IS NOT NULL
                          AND c2.ts <= t.ts ORDER BY c2.ts DESC, c2.id DESC LIMIT 1) AS cid
      FROM schedtrace_ticks t) ticks, trace_info ti
LEFT JOIN events c ON c.id = ticks.cid
ORDER BY ticks.ts
