//! One writer at a time in a repository's cache: runs of the same repository, in this
//! process or another (the app and a command line), take the cache's lock file before
//! they fetch into it, copy from it or push from it, and give it back when done. The
//! agents themselves run without it.

use std::io;
use std::path::{Path, PathBuf};

use crate::domain::RepoName;
use crate::file_lock::FileLock;

/// The lock on one repository's cache; released when dropped (or when its process ends).
#[derive(Debug)]
pub struct CacheLock {
    _held: FileLock,
}

/// Whether the lock was free or had to be waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    No,
    Yes,
}

/// The lock file of `repo`'s cache under `cache_root`.
pub fn lock_path(cache_root: &Path, repo: &RepoName) -> PathBuf {
    cache_root.join(format!("{}.{}.lock", repo.owner, repo.name))
}

impl CacheLock {
    /// Takes the lock of `repo`'s cache, first without waiting; `on_wait` is called when
    /// another run holds it, before this one waits for it.
    pub async fn acquire(
        cache_root: &Path,
        repo: &RepoName,
        on_wait: impl std::future::Future<Output = ()>,
    ) -> io::Result<(CacheLock, Waited)> {
        let path = lock_path(cache_root, repo);
        if let Some(held) = FileLock::try_take(&path)? {
            return Ok((CacheLock { _held: held }, Waited::No));
        }
        on_wait.await;
        let held = FileLock::take(&path).await?;
        Ok((CacheLock { _held: held }, Waited::Yes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_run_waits_until_the_first_gives_the_cache_back() {
        let root = tempfile::tempdir().unwrap();
        let repo: RepoName = "octocat/hello-world".parse().unwrap();
        let (first, waited) = CacheLock::acquire(root.path(), &repo, async {})
            .await
            .unwrap();
        assert_eq!(waited, Waited::No);

        let (told, mut heard) = tokio::sync::mpsc::unbounded_channel();
        let second = tokio::spawn({
            let root = root.path().to_owned();
            let repo = repo.clone();
            async move {
                let (lock, waited) = CacheLock::acquire(&root, &repo, async move {
                    told.send("waiting").unwrap();
                })
                .await
                .unwrap();
                (lock, waited)
            }
        });
        assert_eq!(heard.recv().await, Some("waiting"));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(
            !second.is_finished(),
            "the second run waits while the first holds it"
        );

        drop(first);
        let (_second_lock, waited) = second.await.unwrap();
        assert_eq!(waited, Waited::Yes);

        // Another repository's cache is not held up by this one.
        let other: RepoName = "octocat/other".parse().unwrap();
        let (_other_lock, waited) = CacheLock::acquire(root.path(), &other, async {})
            .await
            .unwrap();
        assert_eq!(waited, Waited::No);
    }
}
