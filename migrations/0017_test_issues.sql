-- Whether the test stage files an issue for each failing scenario (on, as before, for
-- repositories connected before too). Off, the failures stay in the results comment and
-- the stored results, and no issue is filed or closed.
ALTER TABLE repos ADD COLUMN file_test_issues INTEGER NOT NULL DEFAULT 1
    CHECK (file_test_issues IN (0, 1));
