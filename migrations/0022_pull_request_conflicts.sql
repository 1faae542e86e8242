-- Whether an open PR conflicts with its base branch, as GitHub last said (`mergeable`
-- false): 1 conflicts, 0 merges cleanly, NULL not known yet (GitHub works it out after
-- a push, so it is asked again). Read for feedback PRs, whose iterate never rebases.
ALTER TABLE pull_requests ADD COLUMN conflicts_with_base INTEGER
    CHECK (conflicts_with_base IN (0, 1));
