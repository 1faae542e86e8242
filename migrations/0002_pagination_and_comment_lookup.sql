-- Conditional requests over paginated lists need the next page of a cached answer, and
-- syncs look managed comments up by their GitHub id.

ALTER TABLE http_validators ADD COLUMN next_page TEXT;

CREATE INDEX managed_comments_by_github_id ON managed_comments (github_comment_id);
