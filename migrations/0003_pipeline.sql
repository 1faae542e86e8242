-- The sandbox pipeline: a heartbeat and a cancel request on runs (P5, P7), the run's
-- head branch, per-repository run limits and sandbox settings, and the events that
-- become notifications (I8), with "PR opened" at most once per feedback item.

ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested_at TEXT;
ALTER TABLE runs ADD COLUMN head_branch TEXT;

ALTER TABLE repos ADD COLUMN run_timeout_seconds INTEGER NOT NULL DEFAULT 1800
    CHECK (run_timeout_seconds > 0);
ALTER TABLE repos ADD COLUMN e2b_template TEXT;

CREATE TABLE run_events (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id),
    feedback_id  INTEGER REFERENCES feedback (id),
    kind         TEXT NOT NULL CHECK (kind IN ('pr_opened', 'pr_updated', 'run_failed', 'run_succeeded')),
    message      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    seen_at      TEXT
);

-- "PR opened" is announced once per feedback item, ever (I8).
CREATE UNIQUE INDEX run_events_pr_opened_once
    ON run_events (feedback_id) WHERE kind = 'pr_opened';

CREATE INDEX run_events_unseen ON run_events (seen_at, id);
