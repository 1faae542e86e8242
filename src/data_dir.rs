//! Where Handoff keeps its data: the OS's app-data folder, or `HANDOFF_DATA_DIR`.

use std::path::PathBuf;

/// The environment variable that overrides the data folder (tests, scripts, a second
/// profile).
pub const DATA_DIR_ENV: &str = "HANDOFF_DATA_DIR";

/// The folder name inside the OS's app-data folder.
pub const APP_FOLDER_NAME: &str = "handoff";

/// No data folder could be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot tell where to keep Handoff's data on this system: set {DATA_DIR_ENV} to a folder")]
pub struct NoDataDir;

/// The data folder: `$HANDOFF_DATA_DIR` when set and not empty, else `handoff` in the
/// OS's app-data folder (`~/.local/share/handoff` on Linux,
/// `~/Library/Application Support/handoff` on macOS, `%APPDATA%\handoff` on Windows).
pub fn data_dir() -> Result<PathBuf, NoDataDir> {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(value) if !value.is_empty() => Ok(PathBuf::from(value)),
        _ => dirs::data_dir()
            .map(|base| base.join(APP_FOLDER_NAME))
            .ok_or(NoDataDir),
    }
}
