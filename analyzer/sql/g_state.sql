-- g_state.sql - the wsr trace database: the g_state view (public interface,
-- docs/schema.md), the G intervals of g_interval with their names.
--
-- Invariants:
--   - The same columns, rows and values as the g_state table of schema
--     version 4: names for the codes of state, reason and source, and
--     end_ts = start_ts + dur.
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
  s.start_ts + s.dur AS end_ts,
  s.p AS p,
  s.m AS m,
  CASE s.reason /*NAMES:g_reason*/ END AS reason,
  CASE s.source /*NAMES:enum_g_source*/ END AS source,
  s.cut AS cut,
  s.rowid AS rowid
FROM g_interval s;
