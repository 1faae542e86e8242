//! Check setup: everything a run needs, checked in one go and said in one line each —
//! ok, a warning or a failure, with what was found and one sentence on how to fix it.
//! The window shows it as a panel, `handoff doctor` prints it, and a run that needs a
//! check that fails is refused with that same line before anything is spent.
//!
//! What is checked: the keyring answers; the GitHub token is accepted, and may push,
//! open PRs and file issues on each connected repository, whose agent branches go to a
//! fork (or else CI runs the agent's code with the repository's secrets); the Docker engine answers and
//! each repository's image is there and built from this version's recipe; each agent's
//! key is in the keyring and the agent can do what the stages ask; the E2B key is
//! accepted; and the data folder has room for the repository cache.
//!
//! - this file: [`SetupCheck`], every check in one go;
//! - [`check_line`]: a check's line (status, what was found, the fix) and the report;
//! - [`single_checks`]: each check on its own, which a run also makes before it starts;
//! - [`package_registry`]: whether an agent image's package registry can be reached.

mod agent_branches;
mod check_line;
mod package_registry;
mod single_checks;

pub use agent_branches::agent_branches;
pub use check_line::{CheckLine, CheckStatus, Fix, SetupReport};
pub use single_checks::*;

use std::path::Path;

use crate::domain::agent_presets::AgentChoice;
use crate::domain::{Repo, SandboxBackend};
use crate::github::sign_in::connect;
use crate::github::{GithubClient, GithubError, RequestPolicy};
use crate::pipeline_settings::PipelineSettings;
use crate::sandbox::e2b::E2bSandbox;
use crate::secrets::{SecretName, SecretStore};
use crate::store::{Store, StoreError};

/// What the checks look at.
#[derive(Debug, Clone)]
pub struct SetupCheck<'a> {
    pub store: &'a Store,
    pub secrets: &'a SecretStore,
    pub data_dir: &'a Path,
    pub settings: &'a PipelineSettings,
}

/// Less free space than this is a failure; less than [`DISK_WARNING_BYTES`] a warning.
pub const DISK_FAILURE_BYTES: u64 = 1024 * 1024 * 1024;
pub const DISK_WARNING_BYTES: u64 = 5 * 1024 * 1024 * 1024;

impl SetupCheck<'_> {
    /// Runs every check.
    pub async fn run(&self) -> Result<SetupReport, StoreError> {
        let repos = self.store.repositories().repos().await?;
        let mut lines = vec![self.keyring().await];
        let github = connect(self.store, self.secrets, RequestPolicy::default()).await;
        let (line, accepted) = self.github(github.as_ref()).await;
        lines.push(line);
        if let (Ok(client), true) = (&github, accepted) {
            lines.push(token_scopes_line(client).await);
            let place = if repos.iter().any(|repo| repo.push_fork.is_none()) {
                self.fork_place(client).await
            } else {
                None
            };
            for repo in &repos {
                lines.push(repo_access(client, repo).await);
                lines.push(agent_branches(client, repo, place.as_deref()).await);
                if let Some(since) = repo.checks_unreadable_since {
                    lines.push(checks_unreadable(repo, since));
                }
            }
        }
        let docker_repos: Vec<&Repo> = repos
            .iter()
            .filter(|repo| repo.sandbox_backend == SandboxBackend::Docker)
            .collect();
        if !docker_repos.is_empty() {
            let (line, docker) = docker_engine().await;
            lines.push(line);
            if let Some(docker) = docker {
                let mut checked = Vec::new();
                for repo in docker_repos {
                    let (image, preset) = self.image_of(repo);
                    if checked.contains(&image) {
                        continue;
                    }
                    checked.push(image.clone());
                    lines.push(docker_image(&docker, &image, preset.as_deref()).await);
                }
                if repos.iter().any(|repo| {
                    repo.sandbox_backend == SandboxBackend::Docker
                        && repo.network_mode != crate::domain::NetworkMode::None
                }) {
                    lines.push(egress_gate(&docker).await);
                }
            }
        }
        for repo in &repos {
            lines.extend(self.agent(repo).await);
        }
        if repos
            .iter()
            .any(|repo| repo.sandbox_backend == SandboxBackend::E2b)
        {
            lines.push(self.e2b().await);
        }
        lines.push(disk(self.data_dir));
        Ok(SetupReport { lines })
    }

    /// Where a new fork for agent branches would go: the place the owner's last fork
    /// went, else the one organization they may make repositories in, if there is one.
    async fn fork_place(&self, client: &GithubClient) -> Option<String> {
        match self
            .store
            .settings()
            .setting(crate::store::SettingKey::AgentForkPlace)
            .await
        {
            Ok(Some(place)) => return Some(place),
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "the place for forks could not be read"),
        }
        match client.fork_places(self.store).await {
            Ok(places) => {
                let mut usable = places
                    .into_iter()
                    .filter(|place| place.can_create_repository);
                match (usable.next(), usable.next()) {
                    (Some(only), None) => Some(only.login),
                    _ => None,
                }
            }
            Err(error) => {
                tracing::info!(%error, "the organizations to fork to could not be listed");
                None
            }
        }
    }

    async fn keyring(&self) -> CheckLine {
        match self
            .secrets
            .get(&SecretName::AgentApiKey {
                provider: "handoff-keyring-check".to_owned(),
                api_host: "localhost".to_owned(),
            })
            .await
        {
            Ok(_) => CheckLine::ok("keyring", "OS keyring", "answers"),
            Err(error) => CheckLine::not_ok(
                CheckStatus::Failure,
                "keyring",
                "OS keyring",
                error.to_string(),
                Fix::StartKeyring,
            ),
        }
    }

    /// The GitHub line, and whether the token was accepted.
    async fn github(&self, client: Result<&GithubClient, &GithubError>) -> (CheckLine, bool) {
        let client = match client {
            Ok(client) => client,
            Err(error) => {
                let (detail, fix) = match error {
                    GithubError::NotSignedIn { .. } => ("not signed in".to_owned(), Fix::SignIn),
                    GithubError::Secrets(_) => (error.to_string(), Fix::StartKeyring),
                    other => (other.to_string(), Fix::SignIn),
                };
                return (
                    CheckLine::not_ok(CheckStatus::Failure, "github", "GitHub", detail, fix),
                    false,
                );
            }
        };
        match client.viewer_login(self.store).await {
            Ok(login) => (
                CheckLine::ok(
                    "github",
                    "GitHub",
                    format!("signed in as @{login} at {}", client.endpoints().api_base),
                ),
                true,
            ),
            Err(GithubError::Unauthorized { .. }) => (
                CheckLine::not_ok(
                    CheckStatus::Failure,
                    "github",
                    "GitHub",
                    "GitHub refuses the stored token",
                    Fix::SignIn,
                ),
                false,
            ),
            Err(error) => (
                CheckLine::not_ok(
                    CheckStatus::Failure,
                    "github",
                    "GitHub",
                    error.to_string(),
                    Fix::SignIn,
                ),
                false,
            ),
        }
    }

    fn image_of(&self, repo: &Repo) -> (String, Option<String>) {
        docker_image_of(self.settings, repo)
    }

    /// The agent's key and what it can do, for `repo`.
    async fn agent(&self, repo: &Repo) -> Vec<CheckLine> {
        let mut lines = Vec::new();
        let name = repo.name.full_name();
        let id = format!("agent:{name}");
        let agent = match AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref()) {
            Ok(agent) => agent,
            Err(error) => {
                lines.push(CheckLine::not_ok(
                    CheckStatus::Failure,
                    id,
                    format!("{name}'s agent"),
                    error.to_string(),
                    Fix::ChooseAnotherAgent { repo: name },
                ));
                return lines;
            }
        };
        lines.push(agent_key(self.secrets, self.settings, repo, &agent).await);
        if let AgentChoice::Preset(preset) = &agent {
            if let Some(limitation) = preset.limitation {
                lines.push(CheckLine::not_ok(
                    CheckStatus::Warning,
                    format!("agent-stages:{name}"),
                    format!("{name}'s agent"),
                    limitation,
                    Fix::ChooseAnotherAgent { repo: name },
                ));
            }
        }
        lines
    }

    async fn e2b(&self) -> CheckLine {
        if let Err(refusal) = self.settings.e2b.check_addresses() {
            return e2b_address_refused(&refusal);
        }
        let host = self.settings.e2b.api_host();
        let key = match self
            .secrets
            .get(&SecretName::E2bApiKey {
                api_host: host.clone(),
            })
            .await
        {
            Ok(key) => key,
            Err(error) => {
                return CheckLine::not_ok(
                    CheckStatus::Failure,
                    "e2b",
                    "E2B",
                    error.to_string(),
                    Fix::StartKeyring,
                )
            }
        };
        if key.is_none() {
            return e2b_key_missing(&host);
        }
        let sandbox = E2bSandbox::new(self.settings.e2b.clone(), key);
        match sandbox.check_key().await {
            Ok(()) => CheckLine::ok("e2b", "E2B", format!("{host} accepts the key")),
            Err(error) => CheckLine::not_ok(
                CheckStatus::Failure,
                "e2b",
                "E2B",
                error.to_string(),
                Fix::ReplaceE2bKey,
            ),
        }
    }
}

/// The image `repo`'s Docker runs use, and the recipe Handoff builds it from (`None`
/// when the repository names its own image).
/// A repository whose checks the token may not read: a warning, since the rest syncs.
fn checks_unreadable(repo: &Repo, since: chrono::DateTime<chrono::Utc>) -> CheckLine {
    let name = repo.name.full_name();
    CheckLine::not_ok(
        CheckStatus::Warning,
        format!("checks:{name}"),
        format!("{name}'s checks"),
        format!(
            "the token may not read them (since {}): its pull requests show no checks, and \
             failing checks are not offered for the next Update PR",
            since.format("%Y-%m-%d %H:%M UTC")
        ),
        Fix::GrantTokenPermission {
            permission: "Checks: read".to_owned(),
            repo: name,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_as_bad_as_its_worst_line() {
        let ok = CheckLine::ok("a", "A", "fine");
        let warning = CheckLine::not_ok(CheckStatus::Warning, "b", "B", "meh", Fix::StartDocker);
        let failure = CheckLine::not_ok(
            CheckStatus::Failure,
            "c",
            "C",
            "no anthropic API key is stored",
            Fix::AddKey {
                provider: "anthropic".to_owned(),
            },
        );
        assert_eq!(
            SetupReport {
                lines: vec![ok.clone()]
            }
            .status(),
            CheckStatus::Ok
        );
        assert_eq!(
            SetupReport {
                lines: vec![ok.clone(), warning.clone()]
            }
            .status(),
            CheckStatus::Warning
        );
        assert_eq!(
            SetupReport {
                lines: vec![warning, failure.clone(), ok]
            }
            .status(),
            CheckStatus::Failure
        );
        assert_eq!(
            failure.sentence(),
            "C: no anthropic API key is stored. Add an API key for anthropic."
        );
    }

    #[test]
    fn the_disk_line_measures_the_data_folder() {
        let dir = tempfile::tempdir().unwrap();
        let line = disk(dir.path());
        assert_eq!(line.id, "disk");
        assert!(line.detail.contains("GB free"), "{line:?}");
    }
}
