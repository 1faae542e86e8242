-- Setting up from the window: a repository can be disconnected, which keeps its history
-- (feedback, runs, comments) and stops syncs and runs; connecting it again resumes.

ALTER TABLE repos ADD COLUMN disconnected_at TEXT;
