//! The window's list of pull requests: every open PR of the connected repositories as
//! the last sync mirrored it, with its author, branch, last update and checks, the
//! feedback item it was opened for, and a filter and a search.

use serde::{Deserialize, Serialize};

use super::records::*;
use super::{choice_or_all, invalid_input, AppCore};
use handoff::domain::{CheckStatus, PullRequest, RepoId, RepoName};
use handoff::error_code::CodedError;
use handoff::store::PullRequestFilter;

/// Whom a pull request was opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum PullRequestOrigin {
    /// Opened by a run for a feedback item.
    Feedback,
    /// Any other pull request of the repository.
    Other,
}

impl std::str::FromStr for PullRequestOrigin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "feedback" => Ok(PullRequestOrigin::Feedback),
            "other" => Ok(PullRequestOrigin::Other),
            other => Err(format!(
                "unknown PR origin {other:?}: expected feedback or other"
            )),
        }
    }
}

/// The list's filter as the UI sends it: an empty repository, checks or origin means
/// "all".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct PullRequestQuery {
    pub repo: String,
    pub search: String,
    #[serde(deserialize_with = "choice_or_all")]
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::CheckStatusWords>")
    )]
    pub checks: Option<CheckStatus>,
    #[serde(deserialize_with = "choice_or_all")]
    pub origin: Option<PullRequestOrigin>,
}

/// One row of the list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PullRequestRow {
    #[serde(flatten)]
    pub pull: PullRequestRecord,
    pub repo_full_name: String,
    /// From a fork: the fix stage cannot push to it.
    pub from_fork: bool,
    /// The signed-in token may not read its repository's checks: `checks` says nothing.
    pub checks_unreadable: bool,
}

/// The open PRs `query` lets through, the most recently updated first.
pub async fn pull_request_list(
    core: &AppCore,
    query: &PullRequestQuery,
) -> Result<Vec<PullRequestRow>, CodedError> {
    let repo_id = match query.repo.trim() {
        "" => None,
        text => {
            let name: RepoName =
                text.parse()
                    .map_err(|error: handoff::domain::RepoNameError| {
                        invalid_input(error.to_string())
                    })?;
            Some(core.store.repositories().repo_by_name(&name).await?.id)
        }
    };
    let checks = query.checks;
    let feedback = query
        .origin
        .map(|origin| origin == PullRequestOrigin::Feedback);
    let pulls = core
        .store
        .pull_requests()
        .open_pull_requests(&PullRequestFilter {
            repo_id,
            search: Some(query.search.trim().to_owned()).filter(|text| !text.is_empty()),
            checks,
            feedback,
        })
        .await?;
    let unreadable = core
        .store
        .repositories()
        .repos_with_unreadable_checks()
        .await?;
    Ok(pulls
        .into_iter()
        .map(|pull| PullRequestRow {
            repo_full_name: pull.repo.full_name(),
            from_fork: pull.from_fork(),
            checks_unreadable: unreadable.contains(&pull.repo_id),
            pull: pull.into(),
        })
        .collect())
}

/// The open PRs the last sync mirrored that `filter` picks (of repository `repo`, or
/// of all), the most recently updated first, and the repositories whose checks the
/// token may not read (their PRs' checks say nothing).
pub async fn open_pull_requests(
    core: &AppCore,
    repo: Option<&RepoName>,
    mut filter: PullRequestFilter,
) -> Result<(Vec<PullRequest>, Vec<RepoId>), CodedError> {
    if let Some(name) = repo {
        filter.repo_id = Some(core.store.repositories().repo_by_name(name).await?.id);
    }
    let pulls = core
        .store
        .pull_requests()
        .open_pull_requests(&filter)
        .await?;
    let unreadable = core
        .store
        .repositories()
        .repos_with_unreadable_checks()
        .await?;
    Ok((pulls, unreadable))
}
