//! One fetch of a repository's cache per run. A Docker or E2B run reads its environment
//! from the base branch first, which fetches the cache; its working copy, made moments
//! later from the same cache, does not fetch it again. Remembered in this process: the
//! last run whose environment reading fetched each cache, taken by that run's working
//! copy once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use crate::domain::RunId;

/// By cache: the run whose environment reading fetched it last.
static FETCHED_FOR_RUN: LazyLock<Mutex<HashMap<PathBuf, RunId>>> = LazyLock::new(Mutex::default);

fn fetched() -> std::sync::MutexGuard<'static, HashMap<PathBuf, RunId>> {
    FETCHED_FOR_RUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Notes that `cache` was just fetched (all its branches) for `run`.
pub(crate) fn note_fetched_for_run(cache: &Path, run: RunId) {
    fetched().insert(cache.to_owned(), run);
}

/// Whether `cache` was fetched for `run` and no other run's reading fetched it since;
/// the note is taken, so the run's next copy fetches again.
pub(crate) fn take_fetched_for_run(cache: &Path, run: RunId) -> bool {
    let mut fetched = fetched();
    if fetched.get(cache) == Some(&run) {
        fetched.remove(cache);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetch_counts_once_and_only_for_its_run() {
        let cache = Path::new("/caches/octo/one.git");
        note_fetched_for_run(cache, RunId(1));
        assert!(!take_fetched_for_run(cache, RunId(2)));
        note_fetched_for_run(cache, RunId(2));
        assert!(
            !take_fetched_for_run(cache, RunId(1)),
            "another run fetched since"
        );
        assert!(take_fetched_for_run(cache, RunId(2)));
        assert!(!take_fetched_for_run(cache, RunId(2)), "taken once");
    }
}
