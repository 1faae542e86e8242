-- Each build of a repository's agent environment (its dev container or setup script
-- with Handoff's agent layer): the key it was built for (a hash of the files it is made
-- of), the image, where its recipe was found, and how it ended. Its log is a file of
-- the data folder (environment-builds/<id>.log). A build still marked `building` when
-- the next one begins was stopped with its process.
CREATE TABLE environment_builds (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    image TEXT NOT NULL,
    recipe_file TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('building', 'ready', 'failed')),
    failed_step TEXT,
    failure TEXT,
    image_bytes INTEGER,
    -- The run that asked for it, when a run did (none for `handoff env build`).
    run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX environment_builds_by_repo ON environment_builds (repo_id, id);
