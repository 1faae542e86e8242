-- Failing checks and "changes requested" reviews of a feedback PR coming back as work:
-- a repository setting, off by default, with a cap on the automatic attempts a PR gets
-- in a day.
ALTER TABLE repos ADD COLUMN automatic_updates INTEGER NOT NULL DEFAULT 0
    CHECK (automatic_updates IN (0, 1));
ALTER TABLE repos ADD COLUMN automatic_attempts_per_day INTEGER NOT NULL DEFAULT 2
    CHECK (automatic_attempts_per_day >= 1);

-- When the mirror saw an open PR go from ready for review to draft (someone marked it a
-- draft after it was opened); NULL while it is not a draft or was opened as one.
ALTER TABLE pull_requests ADD COLUMN marked_draft_at TEXT;

-- Why a run started by itself ("the check \"test\" failed on abc123"); NULL when the
-- owner started it.
ALTER TABLE runs ADD COLUMN started_because TEXT;

-- Each reason an automatic update was considered for, once, and what was decided: a
-- run started, skipped (a guardrail held) or stopped (the same check failed the same
-- way again). 'pending' waits for its item's running run to end.
CREATE TABLE automatic_updates (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos (id),
    feedback_id INTEGER NOT NULL REFERENCES feedback (id),
    pr_number INTEGER NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('check_failed', 'changes_requested')),
    -- What it was taken from: `check_run:ID` or `review:ID`.
    github_source TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    -- The check's name, or the reviewer's login.
    subject TEXT NOT NULL,
    -- The check run's id when GitHub Actions ran it (its job's log can be read).
    actions_job_id INTEGER,
    -- The follow-up candidates the run lets into its prompt, as a JSON list of ids.
    follow_up_ids TEXT NOT NULL DEFAULT '[]',
    decision TEXT NOT NULL DEFAULT 'pending'
        CHECK (decision IN ('pending', 'started', 'skipped', 'stopped')),
    -- In words: why the run started, or why none did.
    reason TEXT,
    -- What the check's failure looked like, to notice the same failure twice in a row.
    error_signature TEXT,
    run_id INTEGER REFERENCES runs (id),
    created_at TEXT NOT NULL,
    decided_at TEXT,
    UNIQUE (feedback_id, github_source)
);
CREATE INDEX automatic_updates_pending ON automatic_updates (id) WHERE decision = 'pending';
CREATE INDEX automatic_updates_by_pull ON automatic_updates (repo_id, pr_number, id);

-- A follow-up Handoff wrote for an automatic update, on the owner's standing order.
ALTER TABLE followups ADD COLUMN automatic_update_id INTEGER REFERENCES automatic_updates (id);

CREATE TRIGGER mirror_changes_automatic_update_insert AFTER INSERT ON automatic_updates BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.feedback_id, NEW.pr_number);
END;
CREATE TRIGGER mirror_changes_automatic_update_update AFTER UPDATE ON automatic_updates BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.feedback_id, NEW.pr_number);
END;
