-- Runs another installation of the owner's made on a repository, as its answers to
-- `@handoff` commands on GitHub say them (its installation id, its run's id there, what
-- the run cost, and when it ended): they count against this installation's monthly run
-- quota and budgets too, so that two installations together keep to one month.
CREATE TABLE runs_seen_elsewhere (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    installation TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    cost_usd REAL NOT NULL CHECK (cost_usd >= 0),
    ended_at TEXT NOT NULL,
    -- The answer it was read from.
    comment_id INTEGER NOT NULL,
    UNIQUE (repo_id, installation, run_id)
);
CREATE INDEX runs_seen_elsewhere_by_time ON runs_seen_elsewhere (repo_id, ended_at);
