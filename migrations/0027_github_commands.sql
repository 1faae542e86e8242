-- The owner's `@handoff` commands on feedback issues and feedback PRs, each seen once
-- per repository (the database decides between a window, a daemon and a CLI sharing
-- this data folder), with this installation's claim on GitHub (which decides between
-- installations), the run it began, and whether its answer was written.
CREATE TABLE github_commands (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    feedback_id INTEGER NOT NULL REFERENCES feedback (id) ON DELETE CASCADE,
    -- The comment that gave the command, and the issue or PR it is on.
    comment_id INTEGER NOT NULL,
    thread_number INTEGER NOT NULL,
    on_pull_request INTEGER NOT NULL CHECK (on_pull_request IN (0, 1)),
    ask TEXT NOT NULL
        CHECK (ask IN ('instructions', 'review', 'plan', 'test', 'fix', 'auto', 'stop')),
    instructions TEXT,
    written_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'seen'
        CHECK (state IN ('seen', 'claiming', 'taken', 'taken_elsewhere', 'refused', 'answered')),
    claim_comment_id INTEGER,
    run_id INTEGER REFERENCES runs (id),
    -- Why it was refused or taken elsewhere, in words.
    outcome TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (repo_id, comment_id)
);
CREATE INDEX github_commands_open ON github_commands (id)
    WHERE state IN ('seen', 'claiming', 'taken', 'refused');

CREATE TRIGGER mirror_changes_github_command_insert AFTER INSERT ON github_commands BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.feedback_id, NULL);
END;
CREATE TRIGGER mirror_changes_github_command_update AFTER UPDATE ON github_commands BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.feedback_id, NULL);
END;
