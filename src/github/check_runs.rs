//! The check runs of a commit (CI and other apps), read conditionally: their summary is
//! a PR's check status, and a failing one on a feedback PR becomes a follow-up
//! candidate.

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::{WireCheckRun, WireCheckRuns};
use crate::domain::RepoName;
use crate::store::Store;

/// The most check runs read for one commit (GitHub's largest page).
const CHECK_RUNS_PER_COMMIT: u32 = 100;

impl GithubClient {
    /// The check runs of commit `sha` (the newest of each name, as GitHub lists them).
    pub async fn check_runs(
        &self,
        store: &Store,
        repo: &RepoName,
        sha: &str,
    ) -> Result<(Vec<WireCheckRun>, bool), GithubError> {
        let path = format!(
            "/repos/{}/{}/commits/{sha}/check-runs?filter=latest&per_page={CHECK_RUNS_PER_COMMIT}",
            repo.owner, repo.name
        );
        let answer = self.get_conditional(store, &path).await?;
        let runs: WireCheckRuns = self.parse_json(
            &http::Method::GET,
            &path,
            &http::HeaderMap::new(),
            answer.body.as_bytes(),
        )?;
        if runs.total_count > u64::from(CHECK_RUNS_PER_COMMIT) {
            tracing::warn!(
                %repo, sha, total = runs.total_count,
                "a commit has more check runs than one page holds: only the first are read"
            );
        }
        Ok((runs.check_runs, answer.changed))
    }
}
