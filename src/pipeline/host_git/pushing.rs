//! The push: never forced, never to a protected branch, and GitHub's refusal read into
//! a [`super::PushFailure`].

use std::path::Path;

use super::{push_failure, GitError, HostGit, PushFailure};
use crate::domain::RepoName;

impl HostGit {
    /// Pushes `from_ref` of `cache` to `branch` on GitHub: never forced, never to one of
    /// the `protected` branches (the base, the default).
    pub async fn push(
        &self,
        cache: &Path,
        repo: &RepoName,
        from_ref: &str,
        branch: &str,
        protected: &[&str],
    ) -> Result<(), GitError> {
        if protected.contains(&branch) || branch.is_empty() {
            return Err(GitError::ProtectedBranch(branch.to_owned()));
        }
        let url = self.remote_url(repo);
        let refspec = format!("{from_ref}:refs/heads/{branch}");
        match self
            .git(
                cache,
                &["push", "--quiet", "--no-verify", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(GitError::Failed { command, detail }) => match push_failure(&detail) {
                PushFailure::MovedOn => Err(GitError::Rejected {
                    branch: branch.to_owned(),
                    detail,
                }),
                PushFailure::Refused { reason, remote } => Err(GitError::RefusedByGithub {
                    branch: branch.to_owned(),
                    reason,
                    remote,
                }),
                PushFailure::Other => Err(GitError::Failed { command, detail }),
            },
            Err(error) => Err(error),
        }
    }
}
