//! Where Handoff keeps its data: the OS's app-data folder, or `HANDOFF_DATA_DIR`. The
//! folder and what Handoff makes in it for runs (the repository cache, the workspaces)
//! are private to the owner's account: the mirror holds other people's text and the
//! cache holds private code.

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
/// OS's local app-data folder (`~/.local/share/handoff` on Linux,
/// `~/Library/Application Support/handoff` on macOS, `%LOCALAPPDATA%\handoff` on
/// Windows: the caches and working copies it holds must not roam with the profile).
pub fn data_dir() -> Result<PathBuf, NoDataDir> {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(value) if !value.is_empty() => Ok(PathBuf::from(value)),
        _ => dirs::data_local_dir()
            .map(|base| base.join(APP_FOLDER_NAME))
            .ok_or(NoDataDir),
    }
}

/// Makes `path` (and its parents) if missing, and makes it private to this account
/// (mode 0700 on Unix), whether it was just made or already there.
pub fn create_private_folder(path: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    make_private(path, 0o700)
}

/// Makes the file or folder at `path` private to this account (`mode` on Unix; other
/// systems keep a user's app data private by themselves).
#[cfg(unix)]
pub fn make_private(path: &std::path::Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Makes the file or folder at `path` private to this account (`mode` on Unix; other
/// systems keep a user's app data private by themselves).
#[cfg(not(unix))]
pub fn make_private(_path: &std::path::Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}
