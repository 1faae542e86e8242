-- What paid for a run's model calls: the provider's API key ('api-key'), or the owner's
-- Claude plan ('claude-plan'), whose monthly credit for headless runs the spend view and
-- the plan's budget count. NULL for runs with no key from Handoff, and runs from before.
ALTER TABLE runs ADD COLUMN paid_with TEXT;
