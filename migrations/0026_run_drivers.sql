-- Who drives each active run: the process id, the machine and when the driver began,
-- and the name of the lock the driving process holds for as long as it lives (a file in
-- the data folder's `run-drivers` folder). A lock that can be taken means its process
-- is gone, so another process ends or takes over the run at once instead of waiting
-- out the heartbeat's silence. NULL for runs from before, which the silence decides.
ALTER TABLE runs ADD COLUMN driver_pid INTEGER;
ALTER TABLE runs ADD COLUMN driver_machine TEXT;
ALTER TABLE runs ADD COLUMN driver_started_at TEXT;
ALTER TABLE runs ADD COLUMN driver_lock TEXT;
