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

    /// Takes the commits of a bundle made in the sandbox into `cache` as `run_ref`;
    /// returns the commit it points at.
    ///
    /// What a sandbox hands back is untrusted. The bundle's prerequisites must be in the
    /// cache (`git bundle verify`), and its pack is indexed strictly: every object is
    /// checked as it comes in, and every object it links to must be in the pack or
    /// already in the cache. As the cache's own history is whole, that makes the new
    /// commits whole, which is what `git fetch` checks again by walking both trees in
    /// full (tens of milliseconds on a large tree, for nothing more).
    pub async fn import_bundle(
        &self,
        cache: &Path,
        bundle: &Path,
        run_ref: &str,
    ) -> Result<String, GitError> {
        let bundle_text = bundle.to_string_lossy().into_owned();
        self.git(cache, &["bundle", "verify", "--quiet", &bundle_text], false)
            .await?;
        let bytes = tokio::fs::read(bundle)
            .await
            .map_err(|error| GitError::Failed {
                command: format!("reading {bundle_text}"),
                detail: error.to_string(),
            })?;
        let contents = BundleContents::read(&bytes).map_err(|detail| GitError::Failed {
            command: format!("reading {bundle_text}"),
            detail,
        })?;
        let head = contents.head.ok_or_else(|| GitError::Failed {
            command: format!("reading {bundle_text}"),
            detail: "the bundle names no HEAD".to_owned(),
        })?;
        self.git_with_input(
            cache,
            &["index-pack", "--stdin", "--fix-thin", "--strict"],
            bytes[contents.pack_start..].to_vec(),
        )
        .await?;
        self.git(cache, &["update-ref", run_ref, &head], false)
            .await?;
        Ok(head)
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

/// What a bundle file holds: the commit its `HEAD` names, and where its pack starts.
#[derive(Debug, PartialEq, Eq)]
struct BundleContents {
    head: Option<String>,
    pack_start: usize,
}

impl BundleContents {
    /// Reads a bundle's header (version 2 or 3): its signature, capabilities (`@`),
    /// prerequisites (`-`) and references, up to the empty line before the pack.
    fn read(bytes: &[u8]) -> Result<BundleContents, String> {
        let mut offset = 0;
        let mut head = None;
        let mut first = true;
        loop {
            let Some(length) = bytes[offset..].iter().position(|byte| *byte == b'\n') else {
                return Err("the bundle's header does not end".to_owned());
            };
            let line = std::str::from_utf8(&bytes[offset..offset + length])
                .map_err(|_| "the bundle's header is not text".to_owned())?;
            offset += length + 1;
            if first {
                if line != "# v2 git bundle" && line != "# v3 git bundle" {
                    return Err(format!("not a git bundle: {line:?}"));
                }
                first = false;
                continue;
            }
            if line.is_empty() {
                return Ok(BundleContents {
                    head,
                    pack_start: offset,
                });
            }
            if line.starts_with('-') || line.starts_with('@') {
                continue;
            }
            if let Some((object, "HEAD")) = line.split_once(' ') {
                head = Some(object.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BundleContents;

    #[test]
    fn a_bundles_head_and_pack_are_found_past_its_prerequisites() {
        let bytes = b"# v2 git bundle\n-1111111111111111111111111111111111111111 base\n\
2222222222222222222222222222222222222222 refs/heads/main\n\
3333333333333333333333333333333333333333 HEAD\n\nPACK....";
        let contents = BundleContents::read(bytes).unwrap();
        assert_eq!(
            contents.head.as_deref(),
            Some("3333333333333333333333333333333333333333")
        );
        assert_eq!(&bytes[contents.pack_start..], b"PACK....");
    }

    #[test]
    fn a_file_that_is_not_a_bundle_is_refused() {
        assert!(BundleContents::read(b"PACK\0\0").is_err());
        assert!(BundleContents::read(b"# v2 git bundle\nno end").is_err());
    }
}
