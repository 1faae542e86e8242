//! The log in the window: where the log files are, the level, the last lines, and
//! changing the level (the shell applies it to the running process).

use serde::Serialize;

use super::AppCore;
use handoff::error_code::CodedError;
use handoff::log_file::{last_lines, level_from_environment, log_folder, LogLevel};
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

pub async fn log_view(core: &AppCore) -> Result<LogView, CodedError> {
    let level = stored_log_level(core).await?;
    let lines = last_lines(&core.data_dir, SHOWN_LINES).map_err(|error| CodedError {
        code: handoff::error_code::ErrorCode::DataFolder,
        message: error.to_string(),
    })?;
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
        .setting(SettingKey::LogLevel)
        .await?
        .as_deref()
        .and_then(LogLevel::parse))
}

/// Stores the level; the caller applies it to the running process.
pub async fn set_log_level(core: &AppCore, level: LogLevel) -> Result<(), CodedError> {
    core.store
        .set_setting(SettingKey::LogLevel, level.as_str())
        .await?;
    tracing::info!(level = level.as_str(), "the log level was changed");
    Ok(())
}
