-- Whose text steers the agent. A comment version last edited on GitHub by someone other
-- than the signed-in owner reaches no prompt until the owner approves it; a feedback
-- item opened on GitHub by someone other than the owner is untrusted text, and needs
-- the owner's approval before its first run.

ALTER TABLE comment_versions ADD COLUMN edited_by_other INTEGER NOT NULL DEFAULT 0
    CHECK (edited_by_other IN (0, 1));

-- The owner's consent to let a version edited by someone else into prompts. Kept apart
-- from the versions, which are history and never change.
CREATE TABLE comment_version_approvals (
    comment_version_id  INTEGER PRIMARY KEY REFERENCES comment_versions (id),
    approved_at         TEXT NOT NULL
);

ALTER TABLE feedback ADD COLUMN opened_by_visitor INTEGER NOT NULL DEFAULT 0
    CHECK (opened_by_visitor IN (0, 1));
ALTER TABLE feedback ADD COLUMN approved_at TEXT;
