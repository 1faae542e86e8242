-- Items off the board: closed (their issue was closed on GitHub), dismissed (the owner
-- will not act on them) or archived (the owner is done with them). Nothing of them is
-- deleted: their thread, runs and comments stay, and a filter shows them. Each change
-- is kept, with who made it.
ALTER TABLE feedback ADD COLUMN archived_as TEXT
    CHECK (archived_as IN ('closed', 'dismissed', 'archived'));
ALTER TABLE feedback ADD COLUMN archived_at TEXT;

CREATE TABLE archive_changes (
    id INTEGER PRIMARY KEY,
    feedback_id INTEGER NOT NULL REFERENCES feedback (id),
    -- NULL: back on the board.
    archived_as TEXT CHECK (archived_as IN ('closed', 'dismissed', 'archived')),
    -- 'owner' (the window or the command line) or 'github' (the issue's state).
    changed_by TEXT NOT NULL CHECK (changed_by IN ('owner', 'github')),
    changed_at TEXT NOT NULL
);
CREATE INDEX archive_changes_by_item ON archive_changes (feedback_id, id);

CREATE TRIGGER archive_changes_are_history_no_update
BEFORE UPDATE ON archive_changes
BEGIN
    SELECT RAISE(ABORT, 'archive changes are history: they are never edited');
END;
CREATE TRIGGER archive_changes_are_history_no_delete
BEFORE DELETE ON archive_changes
BEGIN
    SELECT RAISE(ABORT, 'archive changes are history: they are never deleted');
END;

CREATE INDEX feedback_on_the_board ON feedback (archived_as, status, updated_at);
