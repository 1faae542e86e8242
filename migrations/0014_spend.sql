-- Spend: what each run's model calls cost, measured outside the agent by its key
-- forwarder where one stands, else as the agent reported it; and the budgets that stop
-- spending.

-- Where a run's tokens and cost come from: 'metered' (the key forwarder read every
-- answer of the provider) or 'reported' (the agent's own account); NULL: unknown.
ALTER TABLE runs ADD COLUMN spend_source TEXT
    CHECK (spend_source IN ('metered', 'reported'));
-- Tokens of model calls whose model has no price (so the cost leaves them out).
ALTER TABLE runs ADD COLUMN unpriced_tokens INTEGER;
-- What a full-auto chain holds back from its repository's month and the day while it
-- runs (its stages' run budgets together), the way it reserves quota.
ALTER TABLE runs ADD COLUMN reserved_usd REAL;

-- Each model call of a run, as the key forwarder saw it: the agent's steps.
CREATE TABLE agent_steps (
    run_id              INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position            INTEGER NOT NULL,
    model               TEXT NOT NULL,
    began_at            TEXT NOT NULL,
    duration_ms         INTEGER NOT NULL,
    status              INTEGER NOT NULL,
    input_tokens        INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    cache_read_tokens   INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    reasoning_tokens    INTEGER NOT NULL,
    -- NULL: the model has no price.
    cost_usd            REAL,
    -- JSON: [{"name": …, "input": …}], inputs cut to 2 KB each.
    tool_calls          TEXT NOT NULL,
    text                TEXT NOT NULL,
    details_left_out    INTEGER NOT NULL DEFAULT 0 CHECK (details_left_out IN (0, 1)),
    PRIMARY KEY (run_id, position)
);

-- A repository's budget in dollars per calendar month; NULL: none.
ALTER TABLE repos ADD COLUMN monthly_budget_usd REAL
    CHECK (monthly_budget_usd IS NULL OR monthly_budget_usd >= 0);

-- The "80% of a budget spent" notices already given, one per budget and period
-- (scope: 'day' or 'repo:<id>'; period: '2026-12-01' or '2026-12').
CREATE TABLE spend_notices (
    scope       TEXT NOT NULL,
    period      TEXT NOT NULL,
    noticed_at  TEXT NOT NULL,
    PRIMARY KEY (scope, period)
);
