//! An exclusive lock on a file, held across processes (the app, a command line) and
//! across tasks of one process alike: each taker opens the file anew, and the operating
//! system's lock (`flock` on Unix, `LockFileEx` on Windows) lets one open file hold it at
//! a time. Released when dropped, or when
//! its process ends. The repository caches and the egress gates take theirs here.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// A held lock; given back when dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Takes the lock of `path` (made if missing) when it is free; `None` when another
    /// holder has it.
    pub fn try_take(path: &Path) -> io::Result<Option<FileLock>> {
        let file = open(path)?;
        Ok(try_lock(&file)?.then_some(FileLock { _file: file }))
    }

    /// Takes the lock of `path` (made if missing), waiting for its holder to give it
    /// back.
    pub async fn take(path: &Path) -> io::Result<FileLock> {
        let file = open(path)?;
        let file = tokio::task::spawn_blocking(move || lock(&file).map(|()| file))
            .await
            .map_err(io::Error::other)??;
        Ok(FileLock { _file: file })
    }
}

/// Whether some open file holds the lock of `path` at this moment (another process, or
/// another taker in this one); `None` when there is no such file. Never makes the file.
pub fn is_held(path: &Path) -> io::Result<Option<bool>> {
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    // Taken here, the lock goes back as `file` closes.
    Ok(Some(!try_lock(&file)?))
}

fn open(path: &Path) -> io::Result<File> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Takes the lock when free: `std::fs::File::try_lock`, which is `flock` on Unix and
/// `LockFileEx` on Windows, so a lock holds across processes on every desktop.
fn try_lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(error)) => Err(error),
    }
}

fn lock(file: &File) -> io::Result<()> {
    file.lock()
}
