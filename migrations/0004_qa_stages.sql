-- The QA stages on a PR (H1): the structured results of each test run, and the GitHub
-- issue filed for each failing scenario (found again on a re-run, never duplicated).

CREATE TABLE test_results (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs (id),
    repo_id       INTEGER NOT NULL REFERENCES repos (id),
    pr_number     INTEGER NOT NULL,
    position      INTEGER NOT NULL,
    scenario_key  TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
    evidence      TEXT NOT NULL DEFAULT '',
    issue_number  INTEGER,
    UNIQUE (run_id, position)
);

CREATE INDEX test_results_by_pull ON test_results (repo_id, pr_number, run_id);

CREATE TABLE qa_issues (
    repo_id       INTEGER NOT NULL REFERENCES repos (id),
    pr_number     INTEGER NOT NULL,
    scenario_key  TEXT NOT NULL,
    issue_number  INTEGER NOT NULL,
    PRIMARY KEY (repo_id, pr_number, scenario_key)
);
