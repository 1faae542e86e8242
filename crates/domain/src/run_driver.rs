//! The process that drives a run, as the run's record keeps it: its process id, the
//! machine it runs on, when it began driving, and the name of the lock it holds for as
//! long as it lives. Whether that process still lives is for the store to find out
//! (`Store::driver_liveness`); this is what the owner is told about it.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Who drives a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunDriver {
    pub pid: u32,
    pub machine: String,
    pub started_at: DateTime<Utc>,
    /// The file name of the driver's lock in the data folder's `run-drivers` folder.
    pub lock: String,
}

impl RunDriver {
    /// "process 1234 on laptop".
    pub fn describe(&self) -> String {
        format!("process {} on {}", self.pid, self.machine)
    }
}

/// Whether the process that drives a run still lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverLiveness {
    /// It holds its lock: it lives.
    Alive,
    /// Its lock is free: it ended (a crash, a kill, a closed terminal).
    Gone,
    /// It runs elsewhere, or its lock cannot be looked at: only its silence can tell.
    CannotTell,
}
