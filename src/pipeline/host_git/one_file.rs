//! Files of a branch, read and changed from the host: every path of a commit of the
//! cache (where an environment's recipe is looked for), a folder of it as a tar archive
//! (an environment's build context), one file's text at a commit,
//! and a commit in a working copy that changes only it (the lessons file, which Handoff
//! keeps in step itself, with no agent).

use std::path::Path;

use super::{GitError, HostGit};

/// The most of a file read back (a lessons file is a few kilobytes).
const LARGEST_FILE_BYTES: usize = 1024 * 1024;

/// The most of a tree's listing read (a repository of a million files lists in less).
const LARGEST_LISTING_BYTES: usize = 64 * 1024 * 1024;

impl HostGit {
    /// Every file at `reference` in `cache`: its path from the repository's root, and
    /// git's id of its content (which changes exactly when the content does).
    pub async fn files_at(
        &self,
        cache: &Path,
        reference: &str,
    ) -> Result<Vec<(String, String)>, GitError> {
        let (listing, cut) = self
            .git_capped(
                cache,
                &["ls-tree", "-r", "-z", "--full-tree", reference],
                LARGEST_LISTING_BYTES,
            )
            .await?;
        if cut {
            return Err(GitError::Failed {
                command: format!("git ls-tree -r {reference}"),
                detail: format!("the listing is larger than {LARGEST_LISTING_BYTES} bytes"),
            });
        }
        // Each entry: `<mode> <type> <id>\t<path>`.
        Ok(listing
            .split('\0')
            .filter_map(|entry| {
                let (about, path) = entry.split_once('\t')?;
                let id = about.split(' ').nth(2)?;
                Some((path.to_owned(), id.to_owned()))
            })
            .collect())
    }

    /// The text of `path` at `reference` in `cache`, exactly as committed; `None` when
    /// the commit has no such file.
    pub async fn file_at(
        &self,
        cache: &Path,
        reference: &str,
        path: &str,
    ) -> Result<Option<String>, GitError> {
        let object = format!("{reference}:{path}");
        if self
            .git(cache, &["cat-file", "-e", &object], false)
            .await
            .is_err()
        {
            return Ok(None);
        }
        let (text, cut) = self
            .git_capped(cache, &["cat-file", "blob", &object], LARGEST_FILE_BYTES)
            .await?;
        if cut {
            return Err(GitError::Failed {
                command: format!("git cat-file blob {object}"),
                detail: format!("{path} is larger than {LARGEST_FILE_BYTES} bytes"),
            });
        }
        Ok(Some(text))
    }

    /// The files of `folder` (`.` for all) at `reference` in `cache`, as a tar archive
    /// with paths from that folder: what an environment's build is given.
    pub async fn archive_at(
        &self,
        cache: &Path,
        reference: &str,
        folder: &str,
    ) -> Result<Vec<u8>, GitError> {
        let folder = folder.trim_matches('/');
        let tree = if folder.is_empty() || folder == "." {
            reference.to_owned()
        } else {
            format!("{reference}:{folder}")
        };
        let arguments = ["archive", "--format=tar", tree.as_str()];
        let output = self
            .command(cache, &arguments, false)
            .output()
            .await
            .map_err(|error| GitError::Failed {
                command: format!("git archive {tree}"),
                detail: error.to_string(),
            })?;
        if !output.status.success() {
            return Err(GitError::Failed {
                command: format!("git archive {tree}"),
                detail: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// Writes `text` to `path` in the working copy `copy` and commits it alone as
    /// `name <email>` with `message`; returns the new commit.
    pub async fn commit_one_file(
        &self,
        copy: &Path,
        path: &str,
        text: &str,
        message: &str,
        (name, email): (&str, &str),
    ) -> Result<String, GitError> {
        let file = copy.join(path);
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&file, text));
        written.map_err(|error| GitError::Failed {
            command: format!("write {}", file.display()),
            detail: error.to_string(),
        })?;
        self.git(copy, &["add", "--", path], false).await?;
        let name = format!("user.name={name}");
        let email = format!("user.email={email}");
        self.git(
            copy,
            &[
                "-c", &name, "-c", &email, "commit", "--quiet", "-m", message,
            ],
            false,
        )
        .await?;
        self.git(copy, &["rev-parse", "HEAD"], false).await
    }
}
