-- indexes.sql - the wsr trace database: indexes, created after the bulk load.
--
-- Invariants:
--   - Each index serves a query of metrics.c, the viewer or docs/schema.md:
--     intervals by owner and time. events needs none for time ranges (its
--     key is (ts, id)); per-name counts are in event_counts. g_interval has
--     no index on its end: its rowid order is end order (schema.sql), so
--     the viewer finds the intervals ending after t by a binary search on
--     rowid, and the index that served it (10 bytes per event) is gone.
--   - Created once, at the end of `wsr ingest`, in the same transaction as
--     the rows (building them after the load is faster than maintaining them).
-- Concurrency: none.

CREATE INDEX g_interval_g ON g_interval (g, start_ts);
CREATE INDEX p_state_p ON p_state (p, start_ts);
CREATE INDEX m_state_m ON m_state (m, start_ts);
CREATE INDEX steals_ts ON steals (ts);
CREATE INDEX spills_ts ON spills (ts);
CREATE INDEX global_gets_ts ON global_gets (ts);
CREATE INDEX schedtrace_fields_snap ON schedtrace_fields (snap_id);
