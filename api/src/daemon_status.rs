//! Whether a daemon (`handoff serve`) serves a data folder, and what it is doing: it
//! holds `serve.lock` there while it lives and writes `serve.json` beside it. Read by
//! the window (which leaves the timed sync to a daemon that serves), by `handoff status`,
//! and written by the daemon itself.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use handoff::file_lock;

/// The lock the daemon holds while it lives, in the data folder.
pub(crate) const SERVE_LOCK: &str = "serve.lock";
/// What the daemon is doing, in the data folder.
pub(crate) const SERVE_STATE: &str = "serve.json";

/// What the daemon is doing, as `serve.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DaemonState {
    pub pid: u32,
    #[cfg_attr(feature = "page-contract", ts(type = "string"))]
    pub started_at: DateTime<Utc>,
    /// When it last synced, and how that went.
    #[cfg_attr(feature = "page-contract", ts(type = "string | null"))]
    pub last_sync_at: Option<DateTime<Utc>>,
    pub last_sync: Option<String>,
    /// Runs it drives now.
    pub driving: Vec<i64>,
    /// It was told to stop and waits for its runs under way.
    pub stopping: bool,
}

/// The daemon that serves `data_dir` now, if one does (its lock is held).
pub fn daemon_serving(data_dir: &Path) -> Option<DaemonState> {
    match file_lock::is_held(&data_dir.join(SERVE_LOCK)) {
        Ok(Some(true)) => read_state(data_dir),
        Ok(_) => None,
        Err(error) => {
            tracing::debug!(%error, "whether a daemon serves the data folder cannot be told");
            None
        }
    }
}

pub(crate) fn read_state(data_dir: &Path) -> Option<DaemonState> {
    let text = std::fs::read(data_dir.join(SERVE_STATE)).ok()?;
    serde_json::from_slice(&text).ok()
}
