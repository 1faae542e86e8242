//! The check runs of a commit (CI and other apps), read conditionally: their summary is
//! a PR's check status, and a failing one on a feedback PR becomes a follow-up
//! candidate.

use std::collections::BTreeMap;

use super::client::GithubClient;
use super::error::GithubError;
use super::sync_steps::in_flight;
use super::wire::{WireCheckRun, WireCheckRuns};
use crate::domain::{Repo, RepoName};
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
///
/// A token that lacks the permission to read checks (a fine-grained token without
/// "Checks: read") is no error: the checks are left out, the repository is marked (Check
/// setup names the permission), and the log says so once, when it begins and when it
/// ends, not at every sync.
pub(super) async fn check_runs_of_commits<'a>(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    heads: impl IntoIterator<Item = &'a str>,
    errors: &mut Vec<String>,
) -> Result<BTreeMap<&'a str, Vec<WireCheckRun>>, StoreError> {
    let name = &repo.name;
    let mut heads: Vec<&str> = heads.into_iter().collect();
    heads.sort_unstable();
    heads.dedup();
    let answers = in_flight(
        heads
            .iter()
            .map(|sha| client.check_runs(store, name, sha))
            .collect(),
    )
    .await;
    let mut runs_at = BTreeMap::new();
    let mut unreadable = None;
    let mut not_permitted = false;
    for (sha, answer) in heads.iter().zip(answers) {
        match answer {
            Ok((runs, _)) => {
                runs_at.insert(*sha, runs);
            }
            Err(GithubError::Store(error)) => return Err(error),
            Err(error) if error.is_permission_missing() => not_permitted = true,
            Err(error) => unreadable = Some(error),
        }
    }
    if let Some(error) = unreadable {
        tracing::warn!(repo = %name, %error, "check runs could not be read");
        errors.push(format!("{name}: check runs could not be read: {error}"));
    }
    // Asked about at least one commit: whether the token may read checks is known.
    if !heads.is_empty() && store.set_checks_unreadable(repo.id, not_permitted).await? {
        if not_permitted {
            tracing::warn!(repo = %name, "the token may not read this repository's checks (a fine-grained token needs the Checks: read permission): its pull requests show no checks until it may, and the rest syncs");
        } else {
            tracing::info!(repo = %name, "the token may read this repository's checks again");
        }
    }
    Ok(runs_at)
}
