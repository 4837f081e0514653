-- Indexes for the report's interval joins, created after the bulk insert (faster than
-- maintaining them row by row). Only what the report and trace/sql/ need: each index costs
-- import time, so add others yourself (e.g. CREATE INDEX ON sched(utid, ts)). thread_state
-- needs none: its primary key is (utid, ts, id) (see schema.sql).
CREATE INDEX slice_track_ts ON slice(track_id, ts);
CREATE INDEX thread_track_utid ON thread_track(utid);
