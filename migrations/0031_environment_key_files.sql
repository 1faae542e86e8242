-- Files of a repository (paths from its root, one a line) its environment image is
-- keyed on besides the recipe's own files and the usual lockfiles: the owner names
-- them, so that a change to one on the base branch builds the image again.
ALTER TABLE repos ADD COLUMN environment_key_files TEXT NOT NULL DEFAULT '';
