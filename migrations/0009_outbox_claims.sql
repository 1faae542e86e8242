-- An outbox entry is claimed by the process that sends it, until the time written here:
-- the app's timer and a command line sending at the same moment never both send one
-- edit (a comment deleted on GitHub would be made twice). A process that dies while
-- sending leaves its claim to run out.
ALTER TABLE outbox ADD COLUMN claimed_until TEXT;
