-- The spend ledger: every model call a run's key forwarder lets through, reserved at its
-- worst case before it leaves and settled with what its answer metered. Every run and
-- every process of this installation reserves against the same rows, so that runs at
-- once, and calls at once within a run, share one month and one day.
--
-- A call not yet settled counts its reservation; a call whose answer could not be read
-- is settled at its reservation. A run's spend is its ledger when it has one, else what
-- it recorded when it ended (runs of agents that report their own usage, and runs from
-- before the ledger).
CREATE TABLE model_call_ledger (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    model           TEXT NOT NULL,
    reserved_usd    REAL NOT NULL,
    reserved_tokens INTEGER NOT NULL,
    charged_usd     REAL,
    charged_tokens  INTEGER,
    -- 1 when the model has no price: reserved and charged at the table's dearest price.
    unpriced        INTEGER NOT NULL DEFAULT 0,
    -- 1 when the answer's usage could not be read: charged its whole reservation.
    unread          INTEGER NOT NULL DEFAULT 0,
    -- 1 when no forwarder saw the call and it is recorded as its agent reported it.
    reported        INTEGER NOT NULL DEFAULT 0,
    reserved_at     TEXT NOT NULL,
    settled_at      TEXT
);
CREATE INDEX model_call_ledger_by_run ON model_call_ledger (run_id);

-- What each run counts against the budgets of its month and its day.
CREATE VIEW run_charges AS
SELECT r.id AS run_id,
       r.repo_id AS repo_id,
       r.created_at AS created_at,
       r.parent_run_id AS parent_run_id,
       CASE
           WHEN EXISTS (SELECT 1 FROM model_call_ledger l WHERE l.run_id = r.id)
           THEN (SELECT SUM(COALESCE(l.charged_usd, l.reserved_usd))
                 FROM model_call_ledger l WHERE l.run_id = r.id)
           ELSE COALESCE(r.llm_cost_usd, 0.0)
       END AS charged_usd
FROM runs r;

-- The month's and the day's runs are found by when they were made.
CREATE INDEX runs_by_created_at ON runs (created_at);

-- A step whose answer's usage could not be read, charged all it reserved.
ALTER TABLE agent_steps ADD COLUMN usage_unread INTEGER NOT NULL DEFAULT 0;
