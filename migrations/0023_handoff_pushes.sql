-- The commits Handoff pushes for the owner's runs: a run's (from the commit it started on
-- to its last) or one commit Handoff wrote on the host (the lessons file), recorded
-- before the push leaves, so that a push whose answer was lost is still known as
-- Handoff's. A PR's head is told apart by them: they carry the agent's name, which no
-- GitHub account is linked to, and anything else unlinked is someone else's.
CREATE TABLE handoff_pushes (
    id         INTEGER PRIMARY KEY,
    repo_id    INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    run_id     INTEGER REFERENCES runs (id) ON DELETE RESTRICT,
    start_sha  TEXT,
    end_sha    TEXT NOT NULL,
    pushed_at  TEXT NOT NULL
);
CREATE INDEX handoff_pushes_by_repo ON handoff_pushes (repo_id);
