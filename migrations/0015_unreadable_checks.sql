-- Since when the signed-in token cannot read a repository's checks (a fine-grained
-- token without the "Checks: read" permission); NULL while they can be read. A sync
-- then goes on without them, and Check setup names the permission.
ALTER TABLE repos ADD COLUMN checks_unreadable_since TEXT;
