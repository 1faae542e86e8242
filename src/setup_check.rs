//! Check setup: everything a run needs, checked in one go and said in one line each —
//! ok, a warning or a failure, with what was found and one sentence on how to fix it.
//! The window shows it as a panel, `handoff doctor` prints it, and a run that needs a
//! check that fails is refused with that same line before anything is spent.
//!
//! What is checked: the keyring answers; the GitHub token is accepted, and may push,
//! open PRs and file issues on each connected repository; the Docker engine answers and
//! each repository's image is there and built from this version's recipe; each agent's
//! key is in the keyring and the agent can do what the stages ask; the E2B key is
//! accepted; and the data folder has room for the repository cache.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::agent_image::{image_state, ImageState};
use crate::domain::{Repo, SandboxBackend};
use crate::github::sign_in::connect;
use crate::github::{GithubClient, GithubError, RequestPolicy};
use crate::pipeline::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET};
use crate::pipeline::settings::PipelineSettings;
use crate::sandbox::e2b::E2bSandbox;
use crate::secrets::{SecretName, SecretStore};
use crate::store::{Store, StoreError};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failure,
}

/// What fixes a check that is not ok: the front ends turn it into their own button or
/// command; [`std::fmt::Display`] says it in one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    SignIn,
    GetWriteAccess { repo: String },
    TurnOnIssues { repo: String },
    StartKeyring,
    StartDocker,
    BuildImage { preset: String, image: String },
    LoadImage { image: String },
    AddKey { provider: String },
    AddE2bKey,
    ReplaceE2bKey,
    UseHttpsForE2b,
    UseHttpsForProvider { provider: String },
    ChooseAnotherAgent { repo: String },
    FreeDisk { path: String },
    InstallEgressGate,
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::SignIn => write!(f, "Sign in to GitHub again."),
            Fix::GetWriteAccess { repo } => write!(
                f,
                "Ask for write access to {repo}, or sign in with an account that has it."
            ),
            Fix::TurnOnIssues { repo } => {
                write!(f, "Turn issues on in {repo}'s settings on GitHub.")
            }
            Fix::StartKeyring => write!(
                f,
                "Start a Secret Service (gnome-keyring or KWallet) in your desktop session."
            ),
            Fix::StartDocker => write!(
                f,
                "Start the Docker engine (or point DOCKER_HOST at one) and check again."
            ),
            Fix::BuildImage { preset, image } => {
                write!(f, "Build the {preset} agent image ({image}).")
            }
            Fix::LoadImage { image } => write!(
                f,
                "Load or build the image {image} on this engine, or leave the image setting \
                 empty to use Handoff's own."
            ),
            Fix::AddKey { provider } => write!(f, "Add an API key for {provider}."),
            Fix::AddE2bKey => write!(f, "Add the E2B API key."),
            Fix::ReplaceE2bKey => write!(f, "Replace the E2B API key with one E2B accepts."),
            Fix::UseHttpsForE2b => write!(
                f,
                "Set E2B's addresses (e2b.api_base, e2b.envd_url) to https ones, or remove them."
            ),
            Fix::UseHttpsForProvider { provider } => write!(
                f,
                "Set {provider}'s address (provider.{provider}.api_base) to an https one, or \
                 remove it."
            ),
            Fix::ChooseAnotherAgent { repo } => write!(
                f,
                "Choose claude, codex or opencode for {repo} to run the QA stages."
            ),
            Fix::FreeDisk { path } => write!(f, "Free some disk space where {path} is."),
            Fix::InstallEgressGate => write!(
                f,
                "Install Handoff's egress gate, handoff-egress, beside Handoff (its package \
                 does), or name a Linux build of it for the engine's machine in \
                 HANDOFF_EGRESS_PROGRAM."
            ),
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// Stable, for the front ends: `github`, `repo:owner/name`, `image:owner/name`, …
    pub id: String,
    /// What was checked, in a few words.
    pub subject: String,
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
    pub fix: Option<Fix>,
    /// The fix in one sentence (the front ends add their button or command).
    pub fix_sentence: Option<String>,
}

impl CheckLine {
    fn ok(id: impl Into<String>, subject: impl Into<String>, detail: impl Into<String>) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status: CheckStatus::Ok,
            detail: detail.into(),
            fix: None,
            fix_sentence: None,
        }
    }

    fn not_ok(
        status: CheckStatus,
        id: impl Into<String>,
        subject: impl Into<String>,
        detail: impl Into<String>,
        fix: Fix,
    ) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status,
            detail: detail.into(),
            fix_sentence: Some(fix.to_string()),
            fix: Some(fix),
        }
    }

    /// The line as one sentence or two: what was found, and the fix.
    pub fn sentence(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}: {}. {fix}", self.subject, self.detail),
            None => format!("{}: {}", self.subject, self.detail),
        }
    }
}

impl std::fmt::Display for CheckLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Every line of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupReport {
    pub lines: Vec<CheckLine>,
}

impl SetupReport {
    /// The worst status of any line.
    pub fn status(&self) -> CheckStatus {
        if self.lines.iter().any(|l| l.status == CheckStatus::Failure) {
            CheckStatus::Failure
        } else if self.lines.iter().any(|l| l.status == CheckStatus::Warning) {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        }
    }
}

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
        let repos = self.store.repos().await?;
        let mut lines = vec![self.keyring().await];
        let github = connect(self.store, self.secrets, RequestPolicy::default()).await;
        let (line, accepted) = self.github(github.as_ref()).await;
        lines.push(line);
        if let (Ok(client), true) = (&github, accepted) {
            lines.push(token_scopes_line(client).await);
            for repo in &repos {
                lines.push(repo_access(client, repo).await);
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
pub fn docker_image_of(settings: &PipelineSettings, repo: &Repo) -> (String, Option<String>) {
    if let Some(image) = repo
        .docker_image
        .as_ref()
        .filter(|image| !image.trim().is_empty())
    {
        return (image.clone(), None);
    }
    let preset = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref())
        .map(|agent| agent.image_preset())
        .unwrap_or(CUSTOM_IMAGE_PRESET);
    (settings.docker_image_for(preset), Some(preset.to_owned()))
}

/// The E2B line when an E2B address would carry the key in the clear.
pub fn e2b_address_refused(refusal: &str) -> CheckLine {
    CheckLine::not_ok(
        CheckStatus::Failure,
        "e2b",
        "E2B",
        refusal.to_owned(),
        Fix::UseHttpsForE2b,
    )
}

/// The agent key's line when the address its provider is reached at is refused.
pub fn provider_address_refused(repo: &Repo, provider: &str, refusal: &str) -> CheckLine {
    let name = repo.name.full_name();
    CheckLine::not_ok(
        CheckStatus::Failure,
        format!("agent-key:{name}"),
        format!("{name}'s agent ({})", repo.agent_preset),
        refusal.to_owned(),
        Fix::UseHttpsForProvider {
            provider: provider.to_owned(),
        },
    )
}

/// The E2B line when no key is stored for the E2B API host `host`.
pub fn e2b_key_missing(host: &str) -> CheckLine {
    CheckLine::not_ok(
        CheckStatus::Failure,
        "e2b",
        "E2B",
        format!("no API key is stored for {host}"),
        Fix::AddE2bKey,
    )
}

/// Whether the signed-in account may push, open PRs and file issues on `repo`.
pub async fn repo_access(client: &GithubClient, repo: &Repo) -> CheckLine {
    let name = repo.name.full_name();
    let id = format!("repo:{name}");
    let repository = match client.repository(&repo.name).await {
        Ok(repository) => repository,
        Err(GithubError::NotFound { .. }) => {
            return CheckLine::not_ok(
                CheckStatus::Failure,
                id,
                name.clone(),
                "the signed-in account cannot see it (or it does not exist)",
                Fix::GetWriteAccess { repo: name },
            )
        }
        Err(error) => {
            return CheckLine::not_ok(
                CheckStatus::Failure,
                id,
                name.clone(),
                error.to_string(),
                Fix::SignIn,
            )
        }
    };
    let can_push = repository.can_push();
    let has_issues = repository.has_issues;
    if !can_push {
        return CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            name.clone(),
            "the signed-in account may not push to it, so Handoff cannot push branches or \
             open their PRs",
            Fix::GetWriteAccess { repo: name },
        );
    }
    if !has_issues {
        return CheckLine::not_ok(
            CheckStatus::Warning,
            id,
            name.clone(),
            "issues are off: feedback issues are not mirrored and failing tests cannot be filed",
            Fix::TurnOnIssues { repo: name },
        );
    }
    CheckLine::ok(id, name, "may push, open PRs and file issues")
}

/// The Docker engine line, and the engine when it answers.
pub async fn docker_engine() -> (CheckLine, Option<bollard::Docker>) {
    let failure = |detail: String| {
        (
            CheckLine::not_ok(
                CheckStatus::Failure,
                "docker",
                "Docker engine",
                detail,
                Fix::StartDocker,
            ),
            None,
        )
    };
    let docker = match bollard::Docker::connect_with_defaults() {
        Ok(docker) => docker,
        Err(error) => return failure(format!("cannot connect: {error}")),
    };
    match docker.version().await {
        Ok(version) => (
            CheckLine::ok(
                "docker",
                "Docker engine",
                format!(
                    "Docker {} answers",
                    version
                        .version
                        .unwrap_or_else(|| "(unknown version)".to_owned())
                ),
            ),
            Some(docker),
        ),
        Err(error) => failure(format!("does not answer: {error}")),
    }
}

/// What the token may do: a warning when it may change workflows (or when GitHub does
/// not say, for a fine-grained token).
pub async fn token_scopes_line(client: &GithubClient) -> CheckLine {
    let subject = "GitHub token";
    match crate::github::token_scopes::token_scopes(client).await {
        Ok(scopes) => match scopes.warning() {
            None => CheckLine::ok(
                "github-token",
                subject,
                format!(
                    "scopes {}: pushes that change workflow files are refused by GitHub",
                    scopes.stored()
                ),
            ),
            Some(warning) => CheckLine::not_ok(
                CheckStatus::Warning,
                "github-token",
                subject,
                warning,
                Fix::SignIn,
            ),
        },
        Err(error) => CheckLine::not_ok(
            CheckStatus::Warning,
            "github-token",
            subject,
            format!("its scopes could not be read: {error}"),
            Fix::SignIn,
        ),
    }
}

/// Whether the egress gate can run beside the engine's sandboxes: its program is
/// installed, and it is a program for the machine the engine runs its containers on.
pub async fn egress_gate(docker: &bollard::Docker) -> CheckLine {
    let failure = |detail: String| {
        CheckLine::not_ok(
            CheckStatus::Failure,
            "egress-gate",
            "Egress gate",
            detail,
            Fix::InstallEgressGate,
        )
    };
    let program = match crate::sandbox::docker_gate::gate_program() {
        Ok(program) => program,
        Err(missing) => return failure(missing),
    };
    let here = (std::env::consts::OS, std::env::consts::ARCH);
    match docker.info().await {
        Ok(info) => {
            let engine_os = info.os_type.unwrap_or_default();
            let engine_arch = info.architecture.unwrap_or_default();
            let same_arch = engine_arch == here.1
                || (engine_arch == "arm64" && here.1 == "aarch64")
                || (engine_arch == "amd64" && here.1 == "x86_64");
            if engine_os != "linux" || here.0 != "linux" || !same_arch {
                return failure(format!(
                    "the engine runs {engine_os}/{engine_arch} containers, and {} is a \
                     program for {}/{}: it cannot run beside the sandboxes, so no run can \
                     reach the network or its provider",
                    program.path.display(),
                    here.0,
                    here.1
                ));
            }
            CheckLine::ok(
                "egress-gate",
                "Egress gate",
                format!(
                    "{} runs beside each repository's sandboxes and adds the agent's key \
                     there",
                    program.path.display()
                ),
            )
        }
        Err(error) => failure(format!("the engine does not say what it runs: {error}")),
    }
}

/// Whether `image` is on the engine, and current when Handoff builds it from the
/// `preset` recipe.
pub async fn docker_image(
    docker: &bollard::Docker,
    image: &str,
    preset: Option<&str>,
) -> CheckLine {
    let id = format!("image:{image}");
    let subject = format!("Image {image}");
    let fix = || match preset {
        Some(preset) => Fix::BuildImage {
            preset: preset.to_owned(),
            image: image.to_owned(),
        },
        None => Fix::LoadImage {
            image: image.to_owned(),
        },
    };
    match image_state(docker, image).await {
        Ok(ImageState::Current) => CheckLine::ok(id, subject, "built from this version's recipe"),
        Ok(ImageState::NotHandoffs) => CheckLine::ok(
            id,
            subject,
            "present (not built by Handoff: its agent is yours to keep current)",
        ),
        Ok(ImageState::OutOfDate) => CheckLine::not_ok(
            CheckStatus::Warning,
            id,
            subject,
            "built from an older recipe: its agent is not the version this Handoff expects",
            fix(),
        ),
        Ok(ImageState::Missing) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            "not on this Docker engine",
            fix(),
        ),
        Err(error) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            error.to_string(),
            Fix::StartDocker,
        ),
    }
}

/// Whether the key `repo`'s agent needs is in the keyring.
pub async fn agent_key(
    secrets: &SecretStore,
    settings: &PipelineSettings,
    repo: &Repo,
    agent: &AgentChoice,
) -> CheckLine {
    let name = repo.name.full_name();
    let id = format!("agent-key:{name}");
    let subject = format!("{name}'s agent ({})", repo.agent_preset);
    let Some(key) = agent.api_key() else {
        return CheckLine::ok(id, subject, "needs no key from Handoff");
    };
    match settings.agent_key(secrets, key.provider).await {
        Ok(Some(_)) => CheckLine::ok(id, subject, format!("the {} key is set", key.provider)),
        Ok(None) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            format!("no {} API key is stored", key.provider),
            Fix::AddKey {
                provider: key.provider.to_owned(),
            },
        ),
        Err(error) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            error.to_string(),
            Fix::StartKeyring,
        ),
    }
}

/// Free space where the data folder (and so the repository cache) is.
pub fn disk(data_dir: &Path) -> CheckLine {
    let path = data_dir.display().to_string();
    match free_bytes(data_dir) {
        Ok(free) => {
            let shown = format!("{:.1} GB free", free as f64 / 1e9);
            if free < DISK_FAILURE_BYTES {
                CheckLine::not_ok(
                    CheckStatus::Failure,
                    "disk",
                    "Disk",
                    shown,
                    Fix::FreeDisk { path },
                )
            } else if free < DISK_WARNING_BYTES {
                CheckLine::not_ok(
                    CheckStatus::Warning,
                    "disk",
                    "Disk",
                    shown,
                    Fix::FreeDisk { path },
                )
            } else {
                CheckLine::ok("disk", "Disk", format!("{shown} for the repository cache"))
            }
        }
        Err(error) => CheckLine::not_ok(
            CheckStatus::Warning,
            "disk",
            "Disk",
            format!("cannot tell the free space of {path}: {error}"),
            Fix::FreeDisk { path },
        ),
    }
}

#[cfg(unix)]
fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let stats = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(stats.f_bavail.saturating_mul(stats.f_frsize))
}

#[cfg(not(unix))]
fn free_bytes(_path: &Path) -> std::io::Result<u64> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "not measured on this system",
    ))
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
