//! Folders the tests keep between runs, under `~/.cache/handoff/`: what a clean
//! container would otherwise fetch or build again each time (Debian's package files, a
//! checkout and its build). The container itself stays new; only these are kept, the way
//! a person's machine keeps its package cache and its clone.

use std::path::PathBuf;

/// `~/.cache/handoff/{name}`, made when missing.
pub fn kept_folder(name: &str) -> PathBuf {
    let home = std::env::var_os("HOME").expect("HOME is set");
    let folder = PathBuf::from(home).join(".cache/handoff").join(name);
    std::fs::create_dir_all(&folder)
        .unwrap_or_else(|error| panic!("cannot make {}: {error}", folder.display()));
    folder
}

/// A mount of `~/.cache/handoff/{name}` on a container's `/var/cache/apt/archives`, for
/// `docker run -v`: the Debian packages a clean container downloads are kept for the
/// next run, which still unpacks and installs every one of them.
pub fn debian_package_files_mount(name: &str) -> String {
    format!("{}:/var/cache/apt/archives:rw", kept_folder(name).display())
}
