-- The PR workspace: every open pull request of a connected repository, mirrored with
-- its author, branch, last update and check status; follow-up candidates taken from a
-- feedback PR itself (review bodies, inline review comments, failing check runs), which
-- reach a prompt only once the owner includes them; and a quota reservation: a full-auto
-- chain takes the units its stages need before its first sandbox starts, and gives back
-- what it did not use.

CREATE TABLE pull_requests (
    repo_id        INTEGER NOT NULL REFERENCES repos (id) ON DELETE RESTRICT,
    number         INTEGER NOT NULL,
    title          TEXT NOT NULL,
    author_login   TEXT,
    head_ref       TEXT NOT NULL,
    -- `owner/name` of the repository the head branch lives in (a fork's, or none).
    head_repo      TEXT,
    head_sha       TEXT NOT NULL,
    base_ref       TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('open', 'closed', 'merged')),
    draft          INTEGER NOT NULL DEFAULT 0 CHECK (draft IN (0, 1)),
    -- `success`, `failure`, `pending` or `none`, for the head commit.
    checks         TEXT NOT NULL DEFAULT 'none'
                   CHECK (checks IN ('success', 'failure', 'pending', 'none')),
    github_updated_at  TEXT NOT NULL,
    synced_at      TEXT NOT NULL,
    -- When the PR's reviews and inline comments were last read for follow-up candidates
    -- (a new review moves the PR's last update past it).
    reviews_read_at    TEXT,
    PRIMARY KEY (repo_id, number)
);

CREATE INDEX pull_requests_by_update ON pull_requests (repo_id, state, github_updated_at);

-- Where a follow-up came from besides the app and visitors' issue comments, and whether
-- it is a candidate (taken from the PR; in no prompt until the owner includes it).
ALTER TABLE followups ADD COLUMN origin TEXT NOT NULL DEFAULT 'thread'
    CHECK (origin IN ('thread', 'review', 'review_comment', 'check_run'));
ALTER TABLE followups ADD COLUMN candidate INTEGER NOT NULL DEFAULT 0 CHECK (candidate IN (0, 1));
-- What it was taken from on GitHub (`review:123`, `review_comment:456`,
-- `check_run:789`), so that a sync never takes it twice.
ALTER TABLE followups ADD COLUMN github_source TEXT;
CREATE UNIQUE INDEX followups_by_github_source ON followups (github_source)
    WHERE github_source IS NOT NULL;

ALTER TABLE quota_uses ADD COLUMN units INTEGER NOT NULL DEFAULT 1 CHECK (units >= 0);

-- An outbox entry the owner discarded: never sent, gone from the outbox, its text kept in
-- the comment's history. (A failed entry without it was refused by GitHub, and waits for
-- the owner to send it again or discard it.)
ALTER TABLE outbox ADD COLUMN discarded_at TEXT;
