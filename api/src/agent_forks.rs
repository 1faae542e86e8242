//! The fork a repository's agent branches go to, for the window and the command line:
//! where one may go, making (or finding) it in one step, and the installation's place
//! where each repository connected from then on gets its own. PRs from a fork run CI
//! without the repository's secrets (GitHub's rule for forks); branches in the
//! repository itself run it with them.

use serde::Serialize;

use super::{invalid_input, AppCore};
use handoff::domain::RepoName;
use handoff::error_code::CodedError;
use handoff::github::agent_forks::{ForkPlace, ForkWait};
use handoff::github::GithubClient;
use handoff::store::{RepoSettingsChange, SettingKey};

/// An organization the owner belongs to, as a place for forks.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ForkPlaceRecord {
    pub login: String,
    /// Whether the owner may make repositories (and so forks) there.
    pub can_create_repository: bool,
}

/// Where a fork for the agent's branches may go.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ForkPlacesView {
    /// The signed-in account: never a place for its own repositories' forks.
    pub owner: String,
    pub organizations: Vec<ForkPlaceRecord>,
    /// Where new repositories get their fork, once the owner made one.
    pub default_place: Option<String>,
}

/// The organizations the owner may fork to, and the installation's place.
pub async fn fork_places(core: &AppCore) -> Result<ForkPlacesView, CodedError> {
    let github = core.github().await?;
    let owner = github.viewer_login(&core.store).await?;
    let organizations = github
        .fork_places(&core.store)
        .await?
        .into_iter()
        .map(|place| ForkPlaceRecord {
            login: place.login,
            can_create_repository: place.can_create_repository,
        })
        .collect();
    Ok(ForkPlacesView {
        owner,
        organizations,
        default_place: core
            .store
            .settings()
            .setting(SettingKey::AgentForkPlace)
            .await?,
    })
}

/// Makes (or finds) `full_name`'s fork in `place` (an organization, or a second account
/// that made the fork itself), waits until GitHub has it ready, sends the repository's
/// agent branches there from now on, and makes `place` where new repositories get
/// theirs.
/// Returns the fork (`owner/name`).
pub async fn make_agent_fork(
    core: &AppCore,
    full_name: &str,
    place: &str,
) -> Result<String, CodedError> {
    let name = full_name
        .parse::<RepoName>()
        .map_err(|error| invalid_input(error.to_string()))?;
    let repo = core.store.repositories().repo_by_name(&name).await?;
    let github = core.github().await?;
    let fork = fork_in(core, &github, &repo.name, place).await?;
    core.store
        .repositories()
        .change_repo_settings(
            repo.id,
            &RepoSettingsChange {
                push_fork: Some(Some(fork.clone())),
                ..RepoSettingsChange::default()
            },
        )
        .await?;
    core.store
        .settings()
        .set_setting(
            SettingKey::AgentForkPlace,
            place.trim().trim_start_matches('@'),
        )
        .await?;
    tracing::info!(repo = %repo.name, fork = %fork, "the agent's branches go to a fork");
    Ok(fork.full_name())
}

/// The fork of `repo` in `place`, made or found, and ready.
async fn fork_in(
    core: &AppCore,
    github: &GithubClient,
    repo: &RepoName,
    place: &str,
) -> Result<RepoName, CodedError> {
    let owner = github.viewer_login(&core.store).await?;
    let places: Vec<ForkPlace> = github.fork_places(&core.store).await?;
    Ok(github
        .make_agent_fork(repo, place, &owner, &places, ForkWait::default())
        .await?)
}

/// For a repository just connected, when the owner has a place for forks: its fork
/// there, made or found, and its agent branches sent to it. `Ok(None)`: no place is set.
/// A fork that cannot be made is an error the caller shows; the repository stays
/// connected, its branches in the repository itself.
pub async fn fork_where_new_repositories_go(
    core: &AppCore,
    full_name: &str,
) -> Result<Option<String>, CodedError> {
    let Some(place) = core
        .store
        .settings()
        .setting(SettingKey::AgentForkPlace)
        .await?
    else {
        return Ok(None);
    };
    make_agent_fork(core, full_name, &place).await.map(Some)
}
