-- The test-only settings the owner gives each repository's tests (say DATABASE_URL):
-- variables set in the agent's sandbox, shown marked as test-only. They are not
-- secrets: the GitHub token, providers' keys and plan tokens are refused as values
-- before they reach this table, and live in the OS keyring only.
CREATE TABLE test_settings (
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    set_at TEXT NOT NULL,
    PRIMARY KEY (repo_id, name)
);
