-- indexes.sql - the wsr trace database: indexes, created after the bulk load.
--
-- Invariants:
--   - Each index serves a query of metrics.c, the viewer or docs/schema.md:
--     intervals by owner and time. The column-block tables (events,
--     p_counters, g_interval) have none: their module seeks their keys and
--     skips blocks by zone maps (g_interval by G through its set filters;
--     by end through its rowid order, which is end order: schema.sql).
--   - Created once, at the end of `wsr ingest`, in the same transaction as
--     the rows (building them after the load is faster than maintaining them).
-- Concurrency: none.

CREATE INDEX p_state_p ON p_state (p, start_ts);
CREATE INDEX m_state_m ON m_state (m, start_ts);
CREATE INDEX steals_ts ON steals (ts);
CREATE INDEX spills_ts ON spills (ts);
CREATE INDEX global_gets_ts ON global_gets (ts);
CREATE INDEX schedtrace_fields_snap ON schedtrace_fields (snap_id);
