//! The check runs of a commit (CI and other apps), read conditionally: their summary is
//! a PR's check status, and a failing one on a feedback PR becomes a follow-up
//! candidate.

use std::collections::BTreeMap;

use super::client::GithubClient;
use super::error::GithubError;
use super::sync_steps::in_flight;
use super::wire::{WireCheckRun, WireCheckRuns};
use crate::domain::RepoName;
use crate::store::{Store, StoreError};

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

/// The check runs of each commit in `heads` (each commit asked once, a few requests in
/// flight at a time), for a sync pass. A commit whose checks cannot be read is left out
/// and the pass's `errors` get one line saying so; only a failing store stops it.
pub(super) async fn check_runs_of_commits<'a>(
    client: &GithubClient,
    store: &Store,
    repo: &RepoName,
    heads: impl IntoIterator<Item = &'a str>,
    errors: &mut Vec<String>,
) -> Result<BTreeMap<&'a str, Vec<WireCheckRun>>, StoreError> {
    let mut heads: Vec<&str> = heads.into_iter().collect();
    heads.sort_unstable();
    heads.dedup();
    let answers = in_flight(
        heads
            .iter()
            .map(|sha| client.check_runs(store, repo, sha))
            .collect(),
    )
    .await;
    let mut runs_at = BTreeMap::new();
    let mut unreadable = None;
    for (sha, answer) in heads.iter().zip(answers) {
        match answer {
            Ok((runs, _)) => {
                runs_at.insert(*sha, runs);
            }
            Err(GithubError::Store(error)) => return Err(error),
            Err(error) => unreadable = Some(error),
        }
    }
    if let Some(error) = unreadable {
        tracing::warn!(%repo, %error, "check runs could not be read");
        errors.push(format!("{repo}: check runs could not be read: {error}"));
    }
    Ok(runs_at)
}
