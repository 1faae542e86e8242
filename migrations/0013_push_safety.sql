-- How Handoff pushes for a repository: its pull requests open as drafts (on by default,
-- also for repositories connected before), so that neither people nor CI take an
-- agent's work as ready; the owner may turn it off.
ALTER TABLE repos ADD COLUMN draft_pull_requests INTEGER NOT NULL DEFAULT 1
    CHECK (draft_pull_requests IN (0, 1));

-- A fork the owner controls (`owner/name`) that agent branches are pushed to instead of
-- the repository itself, so that CI treats their PRs as a fork's; NULL: the repository.
ALTER TABLE repos ADD COLUMN push_fork TEXT;

-- A code run whose commits change CI entry points for an item a visitor opened is held:
-- nothing is pushed until the owner approves exactly those commits. The approval, and
-- the push it led to, are kept here; the held run itself stays as it ended.
CREATE TABLE held_push_approvals (
    run_id       INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE RESTRICT,
    end_sha      TEXT NOT NULL,
    approved_at  TEXT NOT NULL,
    pushed_at    TEXT,
    pr_number    INTEGER
);
