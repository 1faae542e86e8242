-- What changed in the mirror, row by row, so that the window redraws only what changed:
-- a feedback item (and its thread), a run's state, a pull request, a stage comment, the
-- outbox, a repository. Written by triggers, whatever process commits; a run's heartbeat
-- and its log lines write nothing here, so they redraw nothing.
CREATE TABLE mirror_changes (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    subject      TEXT NOT NULL
                 CHECK (subject IN ('feedback', 'run', 'pull_request', 'comment', 'outbox', 'repo')),
    repo_id      INTEGER,
    feedback_id  INTEGER,
    run_id       INTEGER,
    pr_number    INTEGER
);

CREATE TRIGGER mirror_changes_feedback_insert AFTER INSERT ON feedback BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.id, NEW.pr_number);
END;
CREATE TRIGGER mirror_changes_feedback_update AFTER UPDATE ON feedback BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', NEW.repo_id, NEW.id, NEW.pr_number);
END;
CREATE TRIGGER mirror_changes_feedback_delete AFTER DELETE ON feedback BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, pr_number)
    VALUES ('feedback', OLD.repo_id, OLD.id, OLD.pr_number);
END;

CREATE TRIGGER mirror_changes_followup_insert AFTER INSERT ON followups BEGIN
    INSERT INTO mirror_changes (subject, feedback_id) VALUES ('feedback', NEW.feedback_id);
END;
CREATE TRIGGER mirror_changes_followup_update AFTER UPDATE ON followups BEGIN
    INSERT INTO mirror_changes (subject, feedback_id) VALUES ('feedback', NEW.feedback_id);
END;
CREATE TRIGGER mirror_changes_followup_included AFTER INSERT ON followup_inclusions BEGIN
    INSERT INTO mirror_changes (subject, feedback_id)
    SELECT 'feedback', feedback_id FROM followups WHERE id = NEW.followup_id;
END;

-- A run's state, not its heartbeat, its cancel request or its sandbox's whereabouts.
CREATE TRIGGER mirror_changes_run_insert AFTER INSERT ON runs BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, run_id, pr_number)
    VALUES ('run', NEW.repo_id, NEW.feedback_id, NEW.id, NEW.pr_number);
END;
CREATE TRIGGER mirror_changes_run_update
AFTER UPDATE OF status, started_at, finished_at, failure_code, failure_message, notes,
                 end_sha, output, llm_cost_usd, pr_number, feedback_id ON runs
BEGIN
    INSERT INTO mirror_changes (subject, repo_id, feedback_id, run_id, pr_number)
    VALUES ('run', NEW.repo_id, NEW.feedback_id, NEW.id, NEW.pr_number);
END;

CREATE TRIGGER mirror_changes_pull_insert AFTER INSERT ON pull_requests BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    VALUES ('pull_request', NEW.repo_id, NEW.number);
END;
CREATE TRIGGER mirror_changes_pull_update AFTER UPDATE ON pull_requests BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    VALUES ('pull_request', NEW.repo_id, NEW.number);
END;
CREATE TRIGGER mirror_changes_pull_delete AFTER DELETE ON pull_requests BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    VALUES ('pull_request', OLD.repo_id, OLD.number);
END;

CREATE TRIGGER mirror_changes_comment_version AFTER INSERT ON comment_versions BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    SELECT 'comment', repo_id, pr_number FROM managed_comments WHERE id = NEW.managed_comment_id;
END;
CREATE TRIGGER mirror_changes_comment_update AFTER UPDATE ON managed_comments BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    VALUES ('comment', NEW.repo_id, NEW.pr_number);
END;
CREATE TRIGGER mirror_changes_test_results AFTER INSERT ON test_results BEGIN
    INSERT INTO mirror_changes (subject, repo_id, pr_number)
    VALUES ('comment', NEW.repo_id, NEW.pr_number);
END;

CREATE TRIGGER mirror_changes_outbox_insert AFTER INSERT ON outbox BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('outbox', NEW.repo_id);
END;
CREATE TRIGGER mirror_changes_outbox_update AFTER UPDATE ON outbox BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('outbox', NEW.repo_id);
END;

CREATE TRIGGER mirror_changes_repo_insert AFTER INSERT ON repos BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('repo', NEW.id);
END;
CREATE TRIGGER mirror_changes_repo_update AFTER UPDATE ON repos BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('repo', NEW.id);
END;
