-- The local mirror of Handoff: repositories, feedback items, their status history,
-- follow-ups, runs and their logs, managed PR comments and their versions, the outbox
-- of GitHub writes, and quota use.
--
-- Migrations are only ever added, never edited. Times are RFC 3339 text in UTC.

CREATE TABLE repos (
    id                  INTEGER PRIMARY KEY,
    owner               TEXT NOT NULL COLLATE NOCASE,
    name                TEXT NOT NULL COLLATE NOCASE,
    default_branch      TEXT NOT NULL DEFAULT 'main',
    feedback_label      TEXT NOT NULL DEFAULT 'feedback',
    custom_instructions TEXT NOT NULL DEFAULT '',
    -- Runs allowed per calendar month (UTC); NULL means no limit.
    monthly_run_quota   INTEGER CHECK (monthly_run_quota IS NULL OR monthly_run_quota >= 0),
    sandbox_backend     TEXT NOT NULL DEFAULT 'docker' CHECK (sandbox_backend IN ('docker', 'e2b', 'local')),
    agent_preset        TEXT NOT NULL DEFAULT 'opencode',
    agent_command       TEXT,
    docker_image        TEXT,
    created_at          TEXT NOT NULL,
    UNIQUE (owner, name)
);

-- A prompt template per QA stage and repository; absent rows use the built-in default.
CREATE TABLE repo_stage_prompts (
    repo_id     INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    stage       TEXT NOT NULL CHECK (stage IN ('code', 'review', 'plan', 'test', 'fix')),
    template    TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (repo_id, stage)
);

CREATE TABLE feedback (
    id                  INTEGER PRIMARY KEY,
    repo_id             INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    public_id           TEXT NOT NULL,
    title               TEXT NOT NULL,
    body                TEXT NOT NULL CHECK (length(trim(body)) > 0),
    source              TEXT NOT NULL CHECK (source IN ('app', 'cli', 'github_issue')),
    github_issue_number INTEGER,
    github_issue_author TEXT,
    status              TEXT NOT NULL DEFAULT 'NEW'
                        CHECK (status IN ('NEW', 'CODING', 'WAITING_FOR_REVIEW', 'FAILED', 'MERGED')),
    head_branch         TEXT NOT NULL,
    pr_number           INTEGER,
    pr_url              TEXT,
    pr_state            TEXT CHECK (pr_state IN ('open', 'closed', 'merged')),
    pr_head_sha         TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (repo_id, public_id),
    UNIQUE (repo_id, head_branch),
    UNIQUE (repo_id, github_issue_number)
);

CREATE INDEX feedback_by_status ON feedback (status, updated_at);

-- MERGED is final (F2), whatever code writes the row.
CREATE TRIGGER feedback_merged_is_final
BEFORE UPDATE OF status ON feedback
WHEN OLD.status = 'MERGED' AND NEW.status <> 'MERGED'
BEGIN
    SELECT RAISE(ABORT, 'feedback is MERGED: its status is final');
END;

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    repo_id          INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    -- The feedback item of a code run; NULL for QA stages on a PR that is not feedback.
    feedback_id      INTEGER REFERENCES feedback (id) ON DELETE RESTRICT,
    pr_number        INTEGER,
    -- A stage run that belongs to a full-auto chain names the chain's run.
    parent_run_id    INTEGER REFERENCES runs (id),
    stage            TEXT NOT NULL CHECK (stage IN ('code', 'review', 'plan', 'test', 'fix', 'full-auto')),
    code_run_kind    TEXT CHECK (code_run_kind IN ('first', 'iterate', 'retry')),
    backend          TEXT NOT NULL CHECK (backend IN ('docker', 'e2b', 'local')),
    agent_preset     TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- The follow-up text given with this run, if any (it is also a follow-up row).
    instructions     TEXT,
    prompt           TEXT,
    -- Where the run lives while it runs, so a restart can reattach or clean up (P7).
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
    -- Things the owner should know about this run, one per line (H6).
    notes            TEXT NOT NULL DEFAULT '',
    llm_cost_usd     REAL,
    tokens_in        INTEGER,
    tokens_out       INTEGER,
    CHECK (stage <> 'code' OR feedback_id IS NOT NULL),
    CHECK ((status IN ('queued', 'running')) = (finished_at IS NULL))
);

-- At most one active run per feedback item (I2), guaranteed by the database itself.
CREATE UNIQUE INDEX runs_one_active_per_feedback
    ON runs (feedback_id)
    WHERE status IN ('queued', 'running') AND feedback_id IS NOT NULL AND parent_run_id IS NULL;

-- At most one active top-level run per pull request: two runs never push to one branch.
CREATE UNIQUE INDEX runs_one_active_per_pull_request
    ON runs (repo_id, pr_number)
    WHERE status IN ('queued', 'running') AND pr_number IS NOT NULL AND parent_run_id IS NULL;

CREATE INDEX runs_by_feedback ON runs (feedback_id, id);

CREATE TABLE run_log_chunks (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    stream   TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr', 'handoff')),
    at       TEXT NOT NULL,
    text     TEXT NOT NULL,
    UNIQUE (run_id, seq)
);

CREATE TABLE status_changes (
    id           INTEGER PRIMARY KEY,
    feedback_id  INTEGER NOT NULL REFERENCES feedback (id) ON DELETE RESTRICT,
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    event        TEXT NOT NULL,
    run_id       INTEGER REFERENCES runs (id),
    at           TEXT NOT NULL
);

CREATE INDEX status_changes_by_feedback ON status_changes (feedback_id, id);

CREATE TRIGGER status_changes_are_history_no_update
BEFORE UPDATE ON status_changes
BEGIN
    SELECT RAISE(ABORT, 'status changes are history: they are never edited');
END;

CREATE TABLE followups (
    id                 INTEGER PRIMARY KEY,
    feedback_id        INTEGER NOT NULL REFERENCES feedback (id) ON DELETE RESTRICT,
    body               TEXT NOT NULL CHECK (length(trim(body)) > 0),
    source             TEXT NOT NULL CHECK (source IN ('owner', 'visitor')),
    author_login       TEXT,
    -- The issue comment a visitor follow-up was mirrored from.
    github_comment_id  INTEGER UNIQUE,
    created_at         TEXT NOT NULL
);

CREATE INDEX followups_by_feedback ON followups (feedback_id, id);

-- Follow-ups are append-only (F4): never edited, never removed, never reordered.
CREATE TRIGGER followups_are_append_only_no_update
BEFORE UPDATE ON followups
BEGIN
    SELECT RAISE(ABORT, 'follow-ups are append-only: they are never edited');
END;

CREATE TRIGGER followups_are_append_only_no_delete
BEFORE DELETE ON followups
BEGIN
    SELECT RAISE(ABORT, 'follow-ups are append-only: they are never removed');
END;

-- The owner's choice to let a visitor follow-up into prompts (F4).
CREATE TABLE followup_inclusions (
    followup_id  INTEGER PRIMARY KEY REFERENCES followups (id),
    included_at  TEXT NOT NULL
);

-- One row per run that used a unit of its repository's quota (I7).
CREATE TABLE quota_uses (
    id        INTEGER PRIMARY KEY,
    repo_id   INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    run_id    INTEGER NOT NULL UNIQUE REFERENCES runs (id),
    used_at   TEXT NOT NULL
);

CREATE INDEX quota_uses_by_repo ON quota_uses (repo_id, used_at);

-- A PR comment that Handoff owns, found by the marker on its first line (H2).
CREATE TABLE managed_comments (
    id                  INTEGER PRIMARY KEY,
    repo_id             INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    pr_number           INTEGER NOT NULL,
    kind                TEXT NOT NULL CHECK (kind IN ('review', 'plan', 'results', 'followups')),
    github_comment_id   INTEGER,
    -- `updated_at` of the comment on GitHub when Handoff last saw it.
    remote_updated_at   TEXT,
    -- Set when the comment was found gone from GitHub (H6).
    missing_since       TEXT,
    UNIQUE (repo_id, pr_number, kind)
);

-- Every body a managed comment has had (H9): the agent's originals and every edit.
CREATE TABLE comment_versions (
    id                   INTEGER PRIMARY KEY,
    managed_comment_id   INTEGER NOT NULL REFERENCES managed_comments (id) ON DELETE RESTRICT,
    -- The body as it is (or was) on GitHub: marker, header, time line, content.
    body                 TEXT NOT NULL,
    -- The content alone, as the next stage reads it (H4).
    content              TEXT NOT NULL,
    -- The untruncated content when the body was cut at GitHub's limit (H7).
    full_content         TEXT,
    origin               TEXT NOT NULL CHECK (origin IN ('agent', 'owner_in_handoff', 'edit_on_github')),
    author_login         TEXT,
    run_id               INTEGER REFERENCES runs (id),
    based_on_version_id  INTEGER REFERENCES comment_versions (id),
    created_at           TEXT NOT NULL
);

CREATE INDEX comment_versions_by_comment ON comment_versions (managed_comment_id, id);

CREATE TRIGGER comment_versions_are_history_no_update
BEFORE UPDATE ON comment_versions
BEGIN
    SELECT RAISE(ABORT, 'comment versions are history: they are never edited');
END;

CREATE TRIGGER comment_versions_are_history_no_delete
BEFORE DELETE ON comment_versions
BEGIN
    SELECT RAISE(ABORT, 'comment versions are history: they are never removed');
END;

-- GitHub writes waiting to be sent (D4): saved locally first, sent in order later.
CREATE TABLE outbox (
    id                   INTEGER PRIMARY KEY,
    repo_id              INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    operation            TEXT NOT NULL,
    managed_comment_id   INTEGER REFERENCES managed_comments (id),
    comment_version_id   INTEGER REFERENCES comment_versions (id),
    payload              TEXT NOT NULL DEFAULT '{}',
    state                TEXT NOT NULL DEFAULT 'pending'
                         CHECK (state IN ('pending', 'sent', 'conflict', 'failed')),
    attempts             INTEGER NOT NULL DEFAULT 0,
    next_attempt_at      TEXT NOT NULL,
    last_error           TEXT,
    created_at           TEXT NOT NULL,
    sent_at              TEXT
);

CREATE INDEX outbox_pending ON outbox (state, next_attempt_at, id);

-- Validators of GitHub answers, for conditional requests (D8).
CREATE TABLE http_validators (
    url            TEXT PRIMARY KEY,
    etag           TEXT,
    last_modified  TEXT,
    body           TEXT NOT NULL,
    fetched_at     TEXT NOT NULL
);

-- Settings of this installation that are not secrets (secrets live in the OS keyring).
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
