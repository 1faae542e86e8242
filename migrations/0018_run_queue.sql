-- The run queue. Every run waits in `runs` with status 'queued' until a slot is free;
-- the slots of the installation and of each backend are settings. A repository may have
-- slots of its own, and may let its Docker runs go to E2B when Docker's slots are full.
ALTER TABLE repos ADD COLUMN run_slots INTEGER CHECK (run_slots IS NULL OR run_slots >= 1);
ALTER TABLE repos ADD COLUMN overflow_to_e2b INTEGER NOT NULL DEFAULT 0
    CHECK (overflow_to_e2b IN (0, 1));
-- The queued runs, in the order they came.
CREATE INDEX runs_queued ON runs (id) WHERE status = 'queued';
