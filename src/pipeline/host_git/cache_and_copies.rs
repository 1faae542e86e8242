//! The repository's cache (a bare mirror, fetched incrementally, with the heads of pull
//! requests), a fresh working copy per run, bundles for a sandbox and shallow clones.

use std::path::{Path, PathBuf};

use super::{cache_path, pull_head_ref, GitError, HostGit};
use crate::domain::RepoName;

impl HostGit {
    /// The cache of `repo` in `cache_root`, made if missing and brought up to date with
    /// one incremental fetch of every branch (and of the heads of `pull_requests`, as
    /// [`pull_head_ref`] names them).
    pub async fn update_cache(
        &self,
        cache_root: &Path,
        repo: &RepoName,
        pull_requests: &[u64],
    ) -> Result<PathBuf, GitError> {
        let cache = cache_path(cache_root, repo);
        if !cache.join("HEAD").exists() {
            std::fs::create_dir_all(&cache).map_err(|error| GitError::Failed {
                command: format!("mkdir {}", cache.display()),
                detail: error.to_string(),
            })?;
            self.git(&cache, &["init", "--quiet", "--bare"], false)
                .await?;
        }
        let url = self.remote_url(repo);
        let pull_refspecs: Vec<String> = pull_requests
            .iter()
            .map(|number| format!("+refs/pull/{number}/head:{}", pull_head_ref(*number)))
            .collect();
        let mut arguments = vec![
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            &url,
            "+refs/heads/*:refs/heads/*",
        ];
        arguments.extend(pull_refspecs.iter().map(String::as_str));
        self.git(&cache, &arguments, true).await?;
        Ok(cache)
    }

    /// Fetches `branch` of `repo` (a fork the owner chose) into the cache as
    /// `refs/handoff/fork/{branch}`; the reference, or `None` when the fork has no such
    /// branch.
    pub async fn fetch_branch_of(
        &self,
        cache: &Path,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<String>, GitError> {
        let url = self.remote_url(repo);
        let reference = format!("refs/handoff/fork/{branch}");
        let refspec = format!("+refs/heads/{branch}:{reference}");
        match self
            .git(
                cache,
                &["fetch", "--quiet", "--no-tags", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => Ok(Some(reference)),
            Err(GitError::Failed { detail, .. }) if detail.contains("couldn't find remote ref") => {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// Fetches the head GitHub keeps for pull request `number` (`refs/pull/N/head`: its
    /// last head, even after its branch was deleted, and a fork's head too) into the
    /// cache; `None` when GitHub has none.
    pub async fn fetch_pull_head(
        &self,
        cache: &Path,
        repo: &RepoName,
        number: u64,
    ) -> Result<Option<String>, GitError> {
        let url = self.remote_url(repo);
        let refspec = format!("+refs/pull/{number}/head:{}", pull_head_ref(number));
        match self
            .git(
                cache,
                &["fetch", "--quiet", "--no-tags", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => self.resolve(cache, &pull_head_ref(number)).await.map(Some),
            Err(GitError::Failed { detail, .. }) if detail.contains("couldn't find remote ref") => {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// The commit `reference` points at in `cache`.
    pub async fn resolve(&self, cache: &Path, reference: &str) -> Result<String, GitError> {
        self.git(
            cache,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{reference}^{{commit}}"),
            ],
            false,
        )
        .await
    }

    /// Whether `branch` exists in `cache`.
    pub async fn branch_exists(&self, cache: &Path, branch: &str) -> bool {
        self.git(
            cache,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
            false,
        )
        .await
        .is_ok()
    }

    /// A working copy at `destination` whose branch `branch` starts where `start` (a ref
    /// of the cache) points. It has no remote: it knows nothing of GitHub. Returns the
    /// commit it starts from.
    pub async fn make_working_copy(
        &self,
        cache: &Path,
        destination: &Path,
        start: &str,
        branch: &str,
    ) -> Result<String, GitError> {
        let start_sha = self.resolve(cache, start).await?;
        let cache_text = cache.to_string_lossy().into_owned();
        let destination_text = destination.to_string_lossy().into_owned();
        let parent = destination.parent().unwrap_or(destination);
        // A local clone links every object of the cache, so any commit of it (a pull
        // request's head included) can be checked out.
        self.git(
            parent,
            &[
                "clone",
                "--quiet",
                "--no-tags",
                "--no-checkout",
                &cache_text,
                &destination_text,
            ],
            false,
        )
        .await?;
        self.git(
            destination,
            &["checkout", "--quiet", "-B", branch, &start_sha],
            false,
        )
        .await?;
        self.git(destination, &["remote", "remove", "origin"], false)
            .await?;
        self.git(destination, &["rev-parse", "HEAD"], false).await
    }

    /// A bundle of `reference` (its whole history) at `destination`, from which a
    /// sandbox makes its own working copy; returns the commit `reference` points at.
    /// Sending one packed file is much cheaper than a checked-out tree of many files.
    pub async fn bundle_ref(
        &self,
        cache: &Path,
        reference: &str,
        destination: &Path,
    ) -> Result<String, GitError> {
        self.bundle_range(cache, &[reference], destination).await?;
        self.resolve(cache, reference).await
    }

    /// A shallow clone straight from GitHub, the way the original workflow started each
    /// run (kept to compare against the cache in the benchmark).
    pub async fn shallow_clone(
        &self,
        repo: &RepoName,
        branch: &str,
        destination: &Path,
    ) -> Result<String, GitError> {
        let url = self.remote_url(repo);
        let destination_text = destination.to_string_lossy().into_owned();
        let parent = destination.parent().unwrap_or(destination);
        self.git(
            parent,
            &[
                "clone",
                "--quiet",
                "--depth",
                "1",
                "--no-tags",
                "--branch",
                branch,
                &url,
                &destination_text,
            ],
            true,
        )
        .await?;
        self.git(destination, &["rev-parse", "HEAD"], false).await
    }
}
