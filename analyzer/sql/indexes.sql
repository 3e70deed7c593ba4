-- indexes.sql - the wsr trace database: indexes, created after the bulk load.
--
-- Invariants:
--   - Each index serves a query of metrics.c, the viewer or docs/schema.md:
--     intervals by owner and time. events needs none for time ranges (its
--     key is (ts, id)); per-name counts are in event_counts. g_interval rows
--     are written in end order, so g_interval_end is cheap to build and
--     serves "what overlaps [t0, t1)" through the g_state view (end_ts > t0
--     AND start_ts < t1: its end_ts is the indexed start_ts + dur).
--   - Created once, at the end of `wsr ingest`, in the same transaction as
--     the rows (building them after the load is faster than maintaining them).
-- Concurrency: none.

CREATE INDEX g_interval_g ON g_interval (g, start_ts);
CREATE INDEX g_interval_end ON g_interval (start_ts + dur);
CREATE INDEX p_state_p ON p_state (p, start_ts);
CREATE INDEX m_state_m ON m_state (m, start_ts);
CREATE INDEX steals_ts ON steals (ts);
CREATE INDEX spills_ts ON spills (ts);
CREATE INDEX global_gets_ts ON global_gets (ts);
CREATE INDEX schedtrace_fields_snap ON schedtrace_fields (snap_id);
