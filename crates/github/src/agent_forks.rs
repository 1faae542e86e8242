//! A fork for the agent's branches. GitHub runs a fork's PR checks without the
//! repository's secrets (and with a read-only token), so branches Handoff pushes to a
//! fork cannot make CI run the agent's code with them; branches in the repository itself
//! can, drafts included.
//!
//! GitHub does not let an account fork its own repository into itself (asked, it answers
//! with the repository and makes nothing), so the fork goes to an organization the owner
//! may make repositories in (Handoff makes it, `POST /repos/{owner}/{repo}/forks`, or finds
//! the one there), or to a second account the owner controls, such as a machine account
//! (an ordinary GitHub account kept for automation), which makes the fork itself and lets
//! the owner push to it; Handoff then only finds it. GitHub makes forks asynchronously:
//! Handoff waits until the fork's default branch answers before it says the fork is
//! ready.

use std::time::Duration;

use serde::Deserialize;

use super::client::GithubClient;
use super::error::GithubError;
use super::user_repositories::RepositoryPermissions;
use handoff_domain::error_code::{CodedError, ErrorCode};
use handoff_domain::RepoName;

/// Where a fork may go: an organization the signed-in account belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkPlace {
    pub login: String,
    /// Whether the account may make repositories (and so forks) there.
    pub can_create_repository: bool,
}

/// Why no fork for the agent's branches could be made or found.
#[derive(Debug, thiserror::Error)]
pub enum AgentForkError {
    #[error(
        "GitHub does not let an account fork its own repository into itself: {repo} needs \
         its fork in an organization you belong to, or in a second account of yours"
    )]
    OwnAccount { repo: String },
    #[error("{place} is not a GitHub organization or account Handoff can see")]
    NoSuchPlace { place: String },
    #[error("you may not make repositories in the organization {place}")]
    MayNotCreateIn { place: String },
    #[error(
        "{place} has no fork of {repo}: a second account makes its fork itself, as that \
         account on GitHub, and gives you write access to it"
    )]
    NoForkThere { place: String, repo: String },
    #[error("{fork} is not a fork of {repo}")]
    NotAFork { fork: String, repo: String },
    #[error("you cannot push to {fork}: its owner must give you write access")]
    CannotPush { fork: String },
    #[error("GitHub has not finished making the fork {fork} after {waited_seconds} s")]
    NotReady { fork: String, waited_seconds: u64 },
    #[error("{0:?} is not a GitHub login")]
    BadPlace(String),
    #[error(transparent)]
    Github(#[from] GithubError),
}

impl From<AgentForkError> for CodedError {
    fn from(error: AgentForkError) -> Self {
        match error {
            AgentForkError::Github(error) => error.into(),
            AgentForkError::BadPlace(_) => CodedError {
                code: ErrorCode::InvalidInput,
                message: error.to_string(),
                fix: None,
            },
            AgentForkError::NotReady { .. } => CodedError {
                code: ErrorCode::GithubUnreachable,
                message: error.to_string(),
                fix: None,
            },
            other => CodedError {
                code: ErrorCode::AgentForkRefused,
                message: other.to_string(),
                fix: None,
            },
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireOrganization {
    login: String,
}

#[derive(Debug, Deserialize, Default)]
struct WireMembershipPermissions {
    #[serde(default)]
    can_create_repository: bool,
}

#[derive(Debug, Deserialize)]
struct WireMembership {
    state: String,
    organization: WireOrganization,
    #[serde(default)]
    permissions: Option<WireMembershipPermissions>,
}

#[derive(Debug, Deserialize)]
struct WireParent {
    full_name: String,
}

#[derive(Debug, Deserialize)]
struct WireFork {
    full_name: String,
    default_branch: String,
    #[serde(default)]
    fork: bool,
    #[serde(default)]
    parent: Option<WireParent>,
    #[serde(default)]
    permissions: Option<RepositoryPermissions>,
}

/// How long Handoff waits for GitHub to finish a new fork, and how often it asks.
#[derive(Debug, Clone, Copy)]
pub struct ForkWait {
    pub first_pause: Duration,
    pub longest: Duration,
}

impl Default for ForkWait {
    fn default() -> Self {
        ForkWait {
            first_pause: Duration::from_secs(1),
            longest: Duration::from_secs(120),
        }
    }
}

fn is_login(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 39
        && !text.starts_with('-')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

impl GithubClient {
    /// The organizations the signed-in account is an active member of, and whether it
    /// may make repositories in each.
    pub async fn fork_places(
        &self,
        store: &handoff_store::Store,
    ) -> Result<Vec<ForkPlace>, GithubError> {
        let (memberships, _) = self
            .get_all_pages::<WireMembership>(
                store,
                "/user/memberships/orgs?state=active&per_page=100",
            )
            .await?;
        Ok(memberships
            .into_iter()
            .filter(|membership| membership.state == "active")
            .map(|membership| ForkPlace {
                login: membership.organization.login,
                can_create_repository: membership
                    .permissions
                    .is_some_and(|permissions| permissions.can_create_repository),
            })
            .collect())
    }

    /// Makes (or finds) the fork of `repo` in `place` for the agent's branches, and waits
    /// until GitHub has it ready; returns the fork's name. `owner` is the signed-in
    /// account; `organizations` where it may fork to (from [`Self::fork_places`]).
    pub async fn make_agent_fork(
        &self,
        repo: &RepoName,
        place: &str,
        owner: &str,
        organizations: &[ForkPlace],
        wait: ForkWait,
    ) -> Result<RepoName, AgentForkError> {
        let place = place.trim().trim_start_matches('@');
        if !is_login(place) {
            return Err(AgentForkError::BadPlace(place.to_owned()));
        }
        let organization = organizations
            .iter()
            .find(|known| known.login.eq_ignore_ascii_case(place));
        let fork = match organization {
            Some(known) if !known.can_create_repository => {
                return Err(AgentForkError::MayNotCreateIn {
                    place: known.login.clone(),
                })
            }
            Some(known) => self.ask_for_fork(repo, Some(&known.login)).await?,
            None if place.eq_ignore_ascii_case(owner) => {
                if repo.owner.eq_ignore_ascii_case(owner) {
                    return Err(AgentForkError::OwnAccount {
                        repo: repo.full_name(),
                    });
                }
                self.ask_for_fork(repo, None).await?
            }
            None => self.find_fork(repo, place).await?,
        };
        self.wait_until_ready(&fork, wait).await?;
        fork.full_name.parse::<RepoName>().map_err(|error| {
            AgentForkError::Github(GithubError::MalformedAnswer {
                request: format!("POST /repos/{}/forks", repo.full_name()),
                detail: error.to_string(),
            })
        })
    }

    /// Asks GitHub for a fork of `repo` (in `organization`, or the signed-in account).
    async fn ask_for_fork(
        &self,
        repo: &RepoName,
        organization: Option<&str>,
    ) -> Result<WireFork, AgentForkError> {
        let mut body = serde_json::json!({ "default_branch_only": false });
        if let Some(organization) = organization {
            body["organization"] = serde_json::json!(organization);
        }
        let path = format!("/repos/{}/{}/forks", repo.owner, repo.name);
        let fork: WireFork = match self.post_json(&path, &body).await {
            Ok(fork) => fork,
            Err(GithubError::Unprocessable { .. }) => {
                return Err(AgentForkError::NoSuchPlace {
                    place: organization.unwrap_or_default().to_owned(),
                })
            }
            Err(GithubError::Forbidden { .. }) if organization.is_some() => {
                return Err(AgentForkError::MayNotCreateIn {
                    place: organization.unwrap_or_default().to_owned(),
                })
            }
            Err(error) => return Err(error.into()),
        };
        // Asked for a fork of its own repository in its own account, GitHub answers with
        // the repository itself.
        if !fork.fork || fork.full_name.eq_ignore_ascii_case(&repo.full_name()) {
            return Err(AgentForkError::OwnAccount {
                repo: repo.full_name(),
            });
        }
        Ok(fork)
    }

    /// The fork of `repo` that account `place` made, which the signed-in account may
    /// push to.
    async fn find_fork(&self, repo: &RepoName, place: &str) -> Result<WireFork, AgentForkError> {
        let fork = RepoName {
            owner: place.to_owned(),
            name: repo.name.clone(),
        };
        self.agent_fork_as_it_stands(repo, &fork).await
    }

    /// Whether `fork` is still a fork of `repo` that the signed-in account may push to.
    pub async fn check_agent_fork(
        &self,
        repo: &RepoName,
        fork: &RepoName,
    ) -> Result<(), AgentForkError> {
        self.agent_fork_as_it_stands(repo, fork).await.map(|_| ())
    }

    async fn agent_fork_as_it_stands(
        &self,
        repo: &RepoName,
        fork_name: &RepoName,
    ) -> Result<WireFork, AgentForkError> {
        let path = format!("/repos/{}/{}", fork_name.owner, fork_name.name);
        let fork: WireFork = match self.get_json(&path).await {
            Ok(fork) => fork,
            Err(GithubError::NotFound { .. }) => {
                return Err(AgentForkError::NoForkThere {
                    place: fork_name.owner.clone(),
                    repo: repo.full_name(),
                })
            }
            Err(error) => return Err(error.into()),
        };
        let of_this = fork.fork
            && fork
                .parent
                .as_ref()
                .is_some_and(|parent| parent.full_name.eq_ignore_ascii_case(&repo.full_name()));
        if !of_this {
            return Err(AgentForkError::NotAFork {
                fork: fork.full_name,
                repo: repo.full_name(),
            });
        }
        if !fork
            .permissions
            .as_ref()
            .is_some_and(|permissions| permissions.push || permissions.admin)
        {
            return Err(AgentForkError::CannotPush {
                fork: fork.full_name,
            });
        }
        Ok(fork)
    }

    /// Asks for the fork's default branch, with a growing pause, until it answers.
    async fn wait_until_ready(
        &self,
        fork: &WireFork,
        wait: ForkWait,
    ) -> Result<(), AgentForkError> {
        let started = std::time::Instant::now();
        let mut pause = wait.first_pause;
        let path = format!("/repos/{}/branches/{}", fork.full_name, fork.default_branch);
        loop {
            match self.get_json::<serde_json::Value>(&path).await {
                Ok(_) => {
                    tracing::info!(fork = %fork.full_name, waited_ms = started.elapsed().as_millis() as u64, "the fork for the agent's branches is ready");
                    return Ok(());
                }
                Err(GithubError::NotFound { .. }) if started.elapsed() + pause <= wait.longest => {
                    tracing::debug!(fork = %fork.full_name, "GitHub is still making the fork");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(15));
                }
                Err(GithubError::NotFound { .. }) => {
                    return Err(AgentForkError::NotReady {
                        fork: fork.full_name.clone(),
                        waited_seconds: started.elapsed().as_secs(),
                    })
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
}
