//! The log: starting a process's log file, where the log files are, the level, the last
//! lines, following new ones as they are written, and changing the level (the shell
//! applies it to the running process).

use serde::Serialize;

use super::AppCore;
use handoff::error_code::CodedError;
use std::path::{Path, PathBuf};

use handoff::error_code::ErrorCode;
use handoff::log_file::{
    install, last_lines, level_from_environment, LogFileError, LogFollower, LogHandle, LogLevel,
};
use handoff::store::SettingKey;

/// How many of the last lines the window shows.
pub const SHOWN_LINES: usize = 200;

/// The log as the settings show it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogView {
    /// The folder that holds the log files.
    pub folder: String,
    /// The stored level (the default when none is stored).
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::LogLevelWords")
    )]
    pub level: LogLevel,
    /// The filter the environment sets instead, when it does (the setting then waits).
    pub environment_filter: Option<String>,
    /// The last lines, oldest first, as plain text (the page shows them as text only).
    pub lines: Vec<String>,
}

/// Starts this process's log in `data_dir` (lines tagged with `process`, such as `app`
/// or `cli`; also on standard error when `echo_to_stderr`). The stored level is applied
/// once the mirror is open ([`stored_log_level`]).
pub fn start_log(
    data_dir: &Path,
    process: &'static str,
    echo_to_stderr: bool,
) -> Result<LogHandle, CodedError> {
    install(data_dir, process, None, echo_to_stderr).map_err(log_error)
}

/// The folder that holds the log files of `data_dir`.
pub fn log_folder(data_dir: &Path) -> PathBuf {
    handoff::log_file::log_folder(data_dir)
}

/// The last `count` lines of the log, oldest first. Read without the mirror: the log is
/// most wanted when the database will not open.
pub fn last_log_lines(data_dir: &Path, count: usize) -> Result<Vec<String>, CodedError> {
    last_lines(data_dir, count).map_err(log_error)
}

/// The lines written to the log from now on, as they come.
#[derive(Debug)]
pub struct NewLogLines(LogFollower);

impl NewLogLines {
    /// Starts at the log's end: only lines written after this are given.
    pub fn from_now(data_dir: &Path) -> Self {
        NewLogLines(LogFollower::from_end(data_dir))
    }

    /// The lines written since the last call (across a file's rollover).
    pub fn take(&mut self) -> Result<Vec<String>, CodedError> {
        self.0.new_lines().map_err(log_error)
    }
}

fn log_error(error: LogFileError) -> CodedError {
    CodedError::new(ErrorCode::DataFolder, error.to_string())
}

pub async fn log_view(core: &AppCore) -> Result<LogView, CodedError> {
    let level = stored_log_level(core).await?;
    let lines = last_log_lines(&core.data_dir, SHOWN_LINES)?;
    Ok(LogView {
        folder: log_folder(&core.data_dir).display().to_string(),
        level: level.unwrap_or(LogLevel::DEFAULT),
        environment_filter: level_from_environment(),
        lines,
    })
}

/// The stored level, if one is stored and is a level.
pub async fn stored_log_level(core: &AppCore) -> Result<Option<LogLevel>, CodedError> {
    Ok(core
        .store
        .settings()
        .setting(SettingKey::LogLevel)
        .await?
        .as_deref()
        .and_then(LogLevel::parse))
}

/// Stores the level; the caller applies it to the running process.
pub async fn set_log_level(core: &AppCore, level: LogLevel) -> Result<(), CodedError> {
    core.store
        .settings()
        .set_setting(SettingKey::LogLevel, level.as_str())
        .await?;
    tracing::info!(level = level.as_str(), "the log level was changed");
    Ok(())
}
