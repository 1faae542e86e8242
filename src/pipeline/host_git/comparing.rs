//! Comparing commits in the cache: a pull request's diff (capped), the diff between two
//! commits, a sandbox's bundle imported and checked, ancestry, the commits and paths
//! between two commits, the paths a commit lacks, and a bundle of a range.

use std::path::Path;

use super::{GitError, HostGit};

impl HostGit {
    /// shows), from `cache`, cut at `cap` bytes with a line that says so (a fork's PR may
    /// be of any size).
    pub async fn pull_request_diff(
        &self,
        cache: &Path,
        base: &str,
        head: &str,
        cap: usize,
    ) -> Result<String, GitError> {
        let (mut diff, cut) = self
            .git_capped(
                cache,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    &format!("refs/heads/{base}...{head}"),
                ],
                cap,
            )
            .await?;
        if cut {
            diff.push_str(&format!(
                "\n[Handoff cut this diff at {cap} bytes: the rest is not shown]\n"
            ));
        }
        Ok(diff)
    }

    /// The diff of the commits from `from` to `to`, cut at `cap` bytes (with a line that
    /// says so).
    pub async fn diff_between(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
        cap: usize,
    ) -> Result<String, GitError> {
        let (mut diff, cut) = self
            .git_capped(
                cache,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    from,
                    to,
                    "--",
                ],
                cap,
            )
            .await?;
        if cut {
            diff.push_str(&format!(
                "\n[Handoff cut this diff at {cap} bytes: the rest is not shown]\n"
            ));
        }
        Ok(diff)
    }

    /// Fetches the commits of a bundle made in the sandbox into `cache` as `run_ref`;
    /// returns the commit it points at.
    pub async fn import_bundle(
        &self,
        cache: &Path,
        bundle: &Path,
        run_ref: &str,
    ) -> Result<String, GitError> {
        let bundle_text = bundle.to_string_lossy().into_owned();
        self.git(cache, &["bundle", "verify", "--quiet", &bundle_text], false)
            .await?;
        // What a sandbox hands back is untrusted: every object is checked as it comes in.
        self.git(
            cache,
            &[
                "-c",
                "fetch.fsckObjects=true",
                "fetch",
                "--quiet",
                "--no-tags",
                &bundle_text,
                &format!("+HEAD:{run_ref}"),
            ],
            false,
        )
        .await?;
        self.git(cache, &["rev-parse", run_ref], false).await
    }

    /// Those of `paths` (files or folders) that `reference` does not hold; an error
    /// when `reference` itself is not in the cache.
    pub async fn paths_missing(
        &self,
        cache: &Path,
        reference: &str,
        paths: &[String],
    ) -> Result<Vec<String>, GitError> {
        self.resolve(cache, reference).await?;
        let mut missing = Vec::new();
        for path in paths {
            let object = format!("{reference}:{path}");
            if self
                .git(cache, &["cat-file", "-e", &object], false)
                .await
                .is_err()
            {
                missing.push(path.clone());
            }
        }
        Ok(missing)
    }

    /// Whether `ancestor` is an ancestor of (or equal to) `descendant`.
    pub async fn is_ancestor(&self, cache: &Path, ancestor: &str, descendant: &str) -> bool {
        self.git(
            cache,
            &["merge-base", "--is-ancestor", ancestor, descendant],
            false,
        )
        .await
        .is_ok()
    }

    /// How many commits `to` has that `from` has not.
    pub async fn commits_between(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
    ) -> Result<u32, GitError> {
        self.count_commits(cache, &[&format!("{from}..{to}")]).await
    }

    /// The paths the commits from `from` to `to` change (added, changed, removed).
    pub async fn changed_paths(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>, GitError> {
        let listed = self
            .git(
                cache,
                &["diff", "--name-only", "-z", "--no-renames", from, to, "--"],
                false,
            )
            .await?;
        Ok(listed
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// How many commits the revision range `ranges` (as `git rev-list` takes it) holds.
    pub(crate) async fn count_commits(
        &self,
        cache: &Path,
        ranges: &[&str],
    ) -> Result<u32, GitError> {
        let mut arguments = vec!["rev-list", "--count"];
        arguments.extend_from_slice(ranges);
        arguments.push("--");
        let count = self.git(cache, &arguments, false).await?;
        count.parse().map_err(|_| GitError::Failed {
            command: format!("git {}", arguments.join(" ")),
            detail: format!("it answered {count:?}, not a count"),
        })
    }

    /// A bundle at `destination` of the revision range `ranges` (as `git bundle create`
    /// takes it).
    pub(crate) async fn bundle_range(
        &self,
        cache: &Path,
        ranges: &[&str],
        destination: &Path,
    ) -> Result<(), GitError> {
        let destination_text = destination.to_string_lossy().into_owned();
        let mut arguments = vec!["bundle", "create", "--quiet", destination_text.as_str()];
        arguments.extend_from_slice(ranges);
        self.git(cache, &arguments, false).await.map(|_| ())
    }
}
