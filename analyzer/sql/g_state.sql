-- g_state.sql - the wsr trace database: the views over the compact G tables
-- (public interface, docs/schema.md): g_state, the G intervals of
-- g_interval with their names, and g, the Gs of g_info with their times.
--
-- Invariants:
--   - The same columns, rows and values as the g_state and g tables of
--     schema version 4: g_state names the codes of state, reason and
--     source and has end_ts (g_interval's, = start_ts + dur); g adds created_ts to the
--     offsets.
--   - The names come from the tables g_state_name, g_reason and
--     enum_g_source: when the database is created, db.c replaces each
--     /*NAMES:table*/ below by the CASE branches `WHEN id THEN 'name'` of
--     that table, so the view decodes a row with no lookup (a join to the
--     three tables doubles the time of a scan) and names each code once.
--   - A view has no rowid of its own, so the table's is its last column,
--     named rowid: the same values as version 4's g_state rowid (the rows
--     are written in the same order, the order in which they end), so
--     `ORDER BY ..., rowid` keeps working; `SELECT *` shows it.
-- Concurrency: none (read by any number of readers).
CREATE VIEW g_state AS
SELECT
  s.g AS g,
  CASE s.state /*NAMES:g_state_name*/ END AS state,
  s.start_ts AS start_ts,
  s.end_ts AS end_ts,
  s.p AS p,
  s.m AS m,
  CASE s.reason /*NAMES:g_reason*/ END AS reason,
  CASE s.source /*NAMES:enum_g_source*/ END AS source,
  s.cut AS cut,
  s.rowid AS rowid
FROM g_interval s;

-- The same columns and values as the g table of schema version 4: times
-- from created_ts and the offsets, end_reason 'exit' for a G that exited
-- (NULL when alive at the end). One row per G: since version 7 a G id seen
-- again after its G ended has a row for each G (g_info, schema.sql); a
-- lookup by g reads the g_info blocks whose set filter may hold it.
CREATE VIEW g AS
SELECT
  s.g AS g,
  s.parent AS parent,
  s.created_ts AS created_ts,
  s.created_ts + s.first_run AS first_run_ts,
  s.created_ts + s.ended AS end_ts,
  s.create_p AS create_p,
  s.runs AS runs,
  s.stolen AS stolen,
  s.run_ns AS run_ns,
  s.runnable_ns AS runnable_ns,
  s.waiting_ns AS waiting_ns,
  s.syscall_ns AS syscall_ns,
  CASE WHEN s.ended IS NOT NULL THEN 'exit' END AS end_reason
FROM g_info s;
