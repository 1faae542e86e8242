//! Each check of Check setup on its own: the repository's access, the Docker engine, the
//! egress gate, an image, an agent's key, the token's scopes, free disk, and the lines
//! that say an address or a key was refused. A run makes the ones it needs before it
//! starts, and is refused with the same line when one fails.

use std::path::Path;

use crate::agent_image::{image_state, ImageState};
use crate::domain::agent_presets::{preset_named, AgentChoice, CUSTOM_IMAGE_PRESET};
use crate::domain::Repo;
use crate::github::{GithubClient, GithubError};
use crate::pipeline_settings::PipelineSettings;
use crate::secrets::SecretStore;

use super::package_registry::package_registry_reach;
use super::{CheckLine, CheckStatus, Fix, DISK_FAILURE_BYTES, DISK_WARNING_BYTES};

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
    let engine = crate::sandbox::docker_engine::this_machines_engine();
    // How to choose another engine, as the `docker` command is told.
    let choose = "set DOCKER_HOST, or choose a context with `docker context use`";
    let docker = match bollard::Docker::connect_with_host(&engine.address) {
        Ok(docker) => docker,
        Err(error) => {
            return failure(format!(
                "cannot connect to {}: {error}; {choose}",
                engine.describe()
            ))
        }
    };
    match docker.version().await {
        Ok(version) => (
            CheckLine::ok(
                "docker",
                "Docker engine",
                format!(
                    "Docker {} answers at {}",
                    version
                        .version
                        .unwrap_or_else(|| "(unknown version)".to_owned()),
                    engine.describe()
                ),
            ),
            Some(docker),
        ),
        Err(error) => failure(format!(
            "{} does not answer: {error}; {choose}",
            engine.describe()
        )),
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
    match docker.info().await {
        Ok(info) => {
            let engine_os = info.os_type.unwrap_or_default();
            let engine_arch = info.architecture.unwrap_or_default();
            if engine_os != "linux" {
                return failure(format!(
                    "the engine runs {engine_os} containers, and the egress gate is a Linux \
                     program: switch the engine to Linux containers"
                ));
            }
            let program = match crate::sandbox::docker_gate::gate_program_for(&engine_arch) {
                Ok(program) => program,
                Err(missing) => return failure(missing),
            };
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
    let state = image_state(docker, image).await;
    // An image Handoff would build: can its package be fetched here at all?
    if let (Ok(ImageState::Missing | ImageState::OutOfDate), Some(agent)) =
        (&state, preset.and_then(preset_named))
    {
        if let Err(reason) = package_registry_reach(agent.package_registry).await {
            let status = if matches!(state, Ok(ImageState::Missing)) {
                CheckStatus::Failure
            } else {
                CheckStatus::Warning
            };
            return CheckLine::not_ok(
                status,
                id,
                subject,
                format!(
                    "{} and cannot be built here: {} comes from {}, which this machine \
                     cannot reach ({reason})",
                    if status == CheckStatus::Failure {
                        "not on this Docker engine,"
                    } else {
                        "built from an older recipe,"
                    },
                    agent.package,
                    agent.package_registry
                ),
                Fix::LoadImage {
                    image: image.to_owned(),
                },
            );
        }
    }
    match state {
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
    if agent.plan_key().is_some() {
        match settings.claude_plan_token(secrets).await {
            Ok(Some(_)) => {
                return CheckLine::ok(id, subject, "pays with the Claude plan's token");
            }
            Ok(None) => {}
            Err(error) => {
                return CheckLine::not_ok(
                    CheckStatus::Failure,
                    id,
                    subject,
                    error.to_string(),
                    Fix::StartKeyring,
                )
            }
        }
    }
    match settings.agent_key(secrets, key.provider).await {
        Ok(Some(_)) => CheckLine::ok(id, subject, format!("the {} key is set", key.provider)),
        Ok(None) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            match settings.claude_plan_token(secrets).await {
                Ok(Some(_)) if key.provider == crate::domain::claude_plan::PLAN_KEY.provider => {
                    format!(
                        "no {} API key is stored (the Claude plan's token is kept, but the \
                         plan's terms let only the claude agent use it)",
                        key.provider
                    )
                }
                _ => format!("no {} API key is stored", key.provider),
            },
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

/// The bytes this account may still write where `path` is (`statvfs` on Unix,
/// `GetDiskFreeSpaceExW` on Windows).
fn free_bytes(path: &Path) -> std::io::Result<u64> {
    fs4::available_space(path)
}
