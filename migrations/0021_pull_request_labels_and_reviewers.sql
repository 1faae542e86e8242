-- Per repository: the labels to put on the PRs Handoff opens, and the people (or teams,
-- `org/team`) to request reviews from; one entry a line, empty for none.
ALTER TABLE repos ADD COLUMN pull_request_labels TEXT NOT NULL DEFAULT '';
ALTER TABLE repos ADD COLUMN pull_request_reviewers TEXT NOT NULL DEFAULT '';
