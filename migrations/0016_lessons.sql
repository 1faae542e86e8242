-- no-transaction
-- Lessons: short rules drawn from the owner's own corrections (their edits of the
-- agent's comments, their follow-up instructions on an item whose PR is open), proposed
-- by a "lessons" run of the repository's agent, and carried by every later run of the
-- repository once the owner accepts them.
--
-- A lessons run is a run like any other (its log, its spend, its quota), with no PR and
-- no item, so the stage lists of `runs` and `repo_stage_prompts` gain 'lessons'. SQLite
-- changes a CHECK only by making the table again, which needs foreign keys off, so this
-- migration runs outside sqlx's transaction and opens its own.
PRAGMA foreign_keys = OFF;

BEGIN IMMEDIATE;

CREATE TABLE runs_with_lessons (
    id               INTEGER PRIMARY KEY,
    repo_id          INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    -- The feedback item of a code run; NULL for QA stages on a PR that is not feedback.
    feedback_id      INTEGER REFERENCES feedback (id) ON DELETE RESTRICT,
    pr_number        INTEGER,
    -- A stage run that belongs to a full-auto chain names the chain's run.
    parent_run_id    INTEGER REFERENCES runs (id),
    stage            TEXT NOT NULL
                     CHECK (stage IN ('code', 'review', 'plan', 'test', 'fix', 'full-auto', 'lessons')),
    code_run_kind    TEXT CHECK (code_run_kind IN ('first', 'iterate', 'retry')),
    backend          TEXT NOT NULL CHECK (backend IN ('docker', 'e2b', 'local')),
    agent_preset     TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- The follow-up text given with this run, if any (it is also a follow-up row).
    instructions     TEXT,
    prompt           TEXT,
    -- Where the run lives while it runs, so a restart can reattach or clean up.
    sandbox_id       TEXT,
    host_pid         INTEGER,
    base_sha         TEXT,
    start_sha        TEXT,
    end_sha          TEXT,
    created_at       TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    exit_code        INTEGER,
    failure_code     TEXT,
    failure_message  TEXT,
    -- The stage's full output (review or plan markdown, test results JSON, ...).
    output           TEXT,
    -- Things the owner should know about this run, one per line.
    notes            TEXT NOT NULL DEFAULT '',
    llm_cost_usd     REAL,
    tokens_in        INTEGER,
    tokens_out       INTEGER,
    heartbeat_at     TEXT,
    cancel_requested_at TEXT,
    head_branch      TEXT,
    spend_source     TEXT CHECK (spend_source IN ('metered', 'reported')),
    unpriced_tokens  INTEGER,
    reserved_usd     REAL,
    CHECK (stage <> 'code' OR feedback_id IS NOT NULL),
    CHECK (stage <> 'lessons' OR (feedback_id IS NULL AND pr_number IS NULL)),
    CHECK ((status IN ('queued', 'running')) = (finished_at IS NULL))
);

INSERT INTO runs_with_lessons (
    id, repo_id, feedback_id, pr_number, parent_run_id, stage, code_run_kind, backend,
    agent_preset, status, instructions, prompt, sandbox_id, host_pid, base_sha, start_sha,
    end_sha, created_at, started_at, finished_at, exit_code, failure_code, failure_message,
    output, notes, llm_cost_usd, tokens_in, tokens_out, heartbeat_at, cancel_requested_at,
    head_branch, spend_source, unpriced_tokens, reserved_usd)
SELECT
    id, repo_id, feedback_id, pr_number, parent_run_id, stage, code_run_kind, backend,
    agent_preset, status, instructions, prompt, sandbox_id, host_pid, base_sha, start_sha,
    end_sha, created_at, started_at, finished_at, exit_code, failure_code, failure_message,
    output, notes, llm_cost_usd, tokens_in, tokens_out, heartbeat_at, cancel_requested_at,
    head_branch, spend_source, unpriced_tokens, reserved_usd
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_with_lessons RENAME TO runs;

CREATE UNIQUE INDEX runs_one_active_per_feedback
    ON runs (feedback_id)
    WHERE status IN ('queued', 'running') AND feedback_id IS NOT NULL AND parent_run_id IS NULL;
CREATE UNIQUE INDEX runs_one_active_per_pull_request
    ON runs (repo_id, pr_number)
    WHERE status IN ('queued', 'running') AND pr_number IS NOT NULL AND parent_run_id IS NULL;
-- One lessons run at a time per repository.
CREATE UNIQUE INDEX runs_one_active_lessons_per_repo
    ON runs (repo_id)
    WHERE status IN ('queued', 'running') AND stage = 'lessons';
CREATE INDEX runs_by_feedback ON runs (feedback_id, id);

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

CREATE TABLE repo_stage_prompts_with_lessons (
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    stage       TEXT NOT NULL CHECK (stage IN ('code', 'review', 'plan', 'test', 'fix', 'lessons')),
    template    TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (repo_id, stage)
);
INSERT INTO repo_stage_prompts_with_lessons (repo_id, stage, template, updated_at)
SELECT repo_id, stage, template, updated_at FROM repo_stage_prompts;
DROP TABLE repo_stage_prompts;
ALTER TABLE repo_stage_prompts_with_lessons RENAME TO repo_stage_prompts;

-- A lesson: a rule in the owner's words (or the agent's, until the owner edits it), why,
-- the corrections it comes from, and the paths it concerns. Proposed by a lessons run;
-- only an accepted, enabled lesson reaches a prompt. Rejected ones stay, so the history
-- of what was proposed is kept.
CREATE TABLE lessons (
    id                  INTEGER PRIMARY KEY,
    repo_id             INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    rule                TEXT NOT NULL CHECK (length(trim(rule)) > 0),
    why                 TEXT NOT NULL DEFAULT '',
    -- JSON array of the repository paths the rule concerns (may be empty).
    paths               TEXT NOT NULL DEFAULT '[]',
    -- JSON array of the corrections it comes from: "edit-<comment version id>" or
    -- "follow-up-<follow-up id>".
    sources             TEXT NOT NULL DEFAULT '[]',
    state               TEXT NOT NULL CHECK (state IN ('proposed', 'accepted', 'rejected')),
    enabled             INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- The lessons run that proposed it; NULL when the owner wrote it.
    proposed_by_run_id  INTEGER REFERENCES runs (id),
    -- The owner changed the proposal's words before or after accepting it.
    edited_by_owner     INTEGER NOT NULL DEFAULT 0 CHECK (edited_by_owner IN (0, 1)),
    created_at          TEXT NOT NULL,
    decided_at          TEXT,
    -- When a run last carried it in its prompt.
    last_carried_at     TEXT,
    -- JSON array of its paths found missing on the base branch before a run; NULL
    -- while they all exist or since the owner looked. A flagged lesson is left out.
    missing_paths       TEXT,
    -- When the owner last said to keep it (after it went unused for long).
    kept_at             TEXT
);
CREATE INDEX lessons_by_repo ON lessons (repo_id, state, id);

-- Which lessons each run carried in its prompt.
CREATE TABLE run_lessons (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    lesson_id  INTEGER NOT NULL REFERENCES lessons (id) ON DELETE RESTRICT,
    PRIMARY KEY (run_id, lesson_id)
);

-- The window redraws a repository's lessons when they change.
CREATE TRIGGER mirror_changes_lesson_insert AFTER INSERT ON lessons BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('repo', NEW.repo_id);
END;
CREATE TRIGGER mirror_changes_lesson_update AFTER UPDATE ON lessons BEGIN
    INSERT INTO mirror_changes (subject, repo_id) VALUES ('repo', NEW.repo_id);
END;

-- The lessons file's marked section as Handoff wrote it, or as it was found edited on
-- GitHub, oldest first: a section that reads otherwise on GitHub than Handoff's last
-- write was edited there, and is not overwritten unless the owner says so.
CREATE TABLE lessons_file_writes (
    id          INTEGER PRIMARY KEY,
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    path        TEXT NOT NULL,
    section     TEXT NOT NULL,
    origin      TEXT NOT NULL CHECK (origin IN ('handoff', 'edit_on_github')),
    pr_number   INTEGER,
    branch      TEXT,
    commit_sha  TEXT,
    written_at  TEXT NOT NULL
);
CREATE INDEX lessons_file_writes_by_repo ON lessons_file_writes (repo_id, id);

CREATE TRIGGER lessons_file_writes_are_history_no_update
BEFORE UPDATE ON lessons_file_writes
BEGIN
    SELECT RAISE(ABORT, 'lessons file writes are history: they are never edited');
END;

-- After how many new corrections a lessons run starts by itself; NULL: only on demand.
ALTER TABLE repos ADD COLUMN lessons_after_corrections INTEGER
    CHECK (lessons_after_corrections IS NULL OR lessons_after_corrections > 0);
-- The file whose marked section holds the accepted lessons ("Write to AGENTS.md").
ALTER TABLE repos ADD COLUMN lessons_file TEXT NOT NULL DEFAULT 'AGENTS.md'
    CHECK (length(trim(lessons_file)) > 0);

PRAGMA foreign_key_check;

COMMIT;

PRAGMA foreign_keys = ON;
