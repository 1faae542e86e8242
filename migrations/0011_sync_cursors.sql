-- Where a repository's last sync got to, so that the next one asks GitHub only for what
-- changed since: the issues and pull requests, and the issue comments, updated at or
-- after these times (GitHub's clock). A complete pass (every list and thread) still
-- runs now and then, to notice what leaves no trace in those listings.
CREATE TABLE sync_cursors (
    repo_id            INTEGER PRIMARY KEY REFERENCES repos (id) ON DELETE CASCADE,
    issues_since       TEXT NOT NULL,
    comments_since     TEXT NOT NULL,
    -- When the last complete pass ended (this machine's clock).
    complete_pass_at   TEXT NOT NULL
);
