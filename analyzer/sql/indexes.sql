-- indexes.sql - the wsr trace database: indexes, created after the bulk load.
--
-- Invariants:
--   - Each index serves a query of metrics.c, the viewer or docs/schema.md:
--     events by name and time, by G; intervals by owner and time.
--   - Created once, at the end of `wsr ingest`, in the same transaction as
--     the rows (building them after the load is faster than maintaining them).
-- Concurrency: none.

CREATE INDEX events_ts ON events (ts);
CREATE INDEX events_name_ts ON events (name, ts);
CREATE INDEX events_g ON events (g, ts) WHERE g IS NOT NULL;
CREATE INDEX g_state_g ON g_state (g, start_ts);
CREATE INDEX g_state_p ON g_state (p, start_ts);
CREATE INDEX g_state_state ON g_state (state, start_ts);
CREATE INDEX p_state_p ON p_state (p, start_ts);
CREATE INDEX m_state_m ON m_state (m, start_ts);
CREATE INDEX steals_ts ON steals (ts);
CREATE INDEX spills_ts ON spills (ts);
CREATE INDEX global_gets_ts ON global_gets (ts);
