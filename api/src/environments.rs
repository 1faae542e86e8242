//! A repository's environment as both front ends show it: what its base branch says the
//! agent's environment is made of (a dev container, Handoff's setup script, or the agent
//! image alone), in words, with the files its image is keyed on, the key, and where
//! its image stands (its last build: ready, building, failed, or built for files that
//! changed since). Building it (`handoff env build`, the window's Rebuild) and its last
//! build's log. A recipe that cannot be built is refused with what is wrong and where.

use serde::Serialize;

use handoff::domain::dev_container::{CommandForm, DevContainerBase};
use handoff::domain::dev_container_feature::FeatureRequest;
use handoff::domain::environment_recipe::{EnvironmentRecipe, SETUP_SCRIPT};
use handoff::domain::test_services::{ServiceSource, TestServices, SERVICES_FILE};
use handoff::domain::RepoName;
use handoff::domain::SandboxBackend;
use handoff::error_code::{CodedError, ErrorCode};
use handoff::pipeline::environment_build::build_log_path;
use handoff::pipeline::environments::FoundEnvironment;
use handoff::sandbox::agent_image::local_engine;
use handoff::sandbox::environment_image::{environment_image_name, ready_environment};
use handoff::setup_check::{CheckLine, CheckStatus, Fix};
use handoff::store::{EnvironmentBuildRecord, EnvironmentBuildState};

use crate::test_settings::{test_settings_of, TestSettingView};
use crate::AppCore;

/// A repository's environment, as the owner reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentRecord {
    pub repo: String,
    pub base_branch: String,
    /// The commit of the base branch it was read at.
    pub commit: String,
    /// `dev_container`, `setup_script`, `services` (test services on the agent image) or
    /// `agent_image`.
    pub source: String,
    /// The file it was found in; none for the agent image alone.
    pub file: Option<String>,
    /// What the image starts from, in words.
    pub base: String,
    /// The setup commands run once at build time, in order, as `field: command`.
    pub setup_commands: Vec<String>,
    /// The names of the variables it sets in the container.
    pub environment_variables: Vec<String>,
    /// The dev container's features, each with its options (`ref (name=value, …)`).
    pub features: Vec<String>,
    /// What Handoff does not do with it.
    pub notes: Vec<String>,
    /// The services its tests reach by name, as `name: what it runs`.
    pub services: Vec<String>,
    /// The files its image is keyed on.
    pub keyed_on: Vec<String>,
    pub key: Option<String>,
    /// The image runs use for this key; none for the agent image alone.
    pub image: Option<String>,
    /// `not_built`, `building`, `ready`, `failed`, or `stale` (the last image was built
    /// for files that changed since); none for the agent image alone.
    pub state: Option<String>,
    pub last_build: Option<EnvironmentBuildView>,
    /// The variables the owner gives its tests in the sandbox, marked test-only.
    pub test_settings: Vec<TestSettingView>,
}

/// One build of an environment, as the owner reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentBuildView {
    pub id: i64,
    /// `building`, `ready` or `failed`.
    pub state: String,
    pub image: String,
    pub key: String,
    pub recipe_file: String,
    pub commit: String,
    pub image_bytes: Option<u64>,
    pub failed_step: Option<String>,
    pub failure: Option<String>,
    pub run_id: Option<i64>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Where its whole log is kept.
    pub log_file: String,
}

/// An environment image ready for runs, as `env build` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentBuilt {
    pub image: String,
    pub image_bytes: u64,
    /// Whether this build made it (`false`: it was ready with its key).
    pub built_now: bool,
}

/// `repo`'s environment at the tip of its base branch.
pub async fn environment_of(core: &AppCore, repo: &str) -> Result<EnvironmentRecord, CodedError> {
    let repo = &repo_name(repo)?;
    let found = core
        .pipeline()
        .await?
        .environments()
        .environment_of(repo)
        .await?;
    // Test services alone on the agent image: its own image is none, and services that
    // are all images by name need nothing built.
    let own_image = found.recipe != EnvironmentRecipe::AgentImageOnly;
    let nothing_to_build = !own_image && found.built_services().next().is_none();
    let mut record = record_of(repo, found);
    let repo_id = core.store.repositories().repo_by_name(repo).await?.id;
    let last = core
        .store
        .environment_builds()
        .latest_environment_build(repo_id)
        .await?;
    if let Some(key) = &record.key {
        let image = own_image.then(|| environment_image_name(&repo.full_name(), key));
        let state = match &last {
            _ if nothing_to_build => "ready",
            None => "not_built",
            Some(build) if build.state == EnvironmentBuildState::Building => "building",
            Some(build) if build.key != *key => "stale",
            Some(build) if build.state == EnvironmentBuildState::Ready => match &image {
                Some(image) if image_is_gone(image, key).await => "not_built",
                _ => "ready",
            },
            Some(_) => "failed",
        };
        record.image = image;
        record.state = Some(state.to_owned());
    }
    record.last_build = last.map(|build| build_view(core, build));
    record.test_settings = test_settings_of(core, &repo.full_name()).await?;
    Ok(record)
}

/// Whether the engine no longer holds `image` with `key` (someone removed it): an
/// engine that does not answer says nothing either way.
async fn image_is_gone(image: &str, key: &str) -> bool {
    let Ok(docker) = local_engine() else {
        return false;
    };
    matches!(ready_environment(&docker, image, key).await, Ok(None))
}

/// Check setup's line for each Docker repository whose base branch names an
/// environment: ready, not built yet, out of date, failed, or a recipe that is refused.
/// A repository whose base branch cannot be read now gets no line (its GitHub line says
/// why).
pub async fn environment_check_lines(core: &AppCore) -> Vec<CheckLine> {
    let repos = match core.store.repositories().repos().await {
        Ok(repos) => repos,
        Err(error) => {
            tracing::warn!(%error, "the repositories could not be read for their environments' check");
            return Vec::new();
        }
    };
    let mut lines = Vec::new();
    for repo in repos.iter().filter(|repo| {
        repo.sandbox_backend == SandboxBackend::Docker && repo.disconnected_at.is_none()
    }) {
        let name = repo.name.full_name();
        match environment_of(core, &name).await {
            Ok(record) => lines.extend(environment_line(&record)),
            Err(error) if error.code == ErrorCode::InvalidInput => lines.push(CheckLine::not_ok(
                CheckStatus::Failure,
                format!("environment:{name}"),
                format!("{name}'s environment"),
                error.message,
                Fix::BuildEnvironment { repo: name },
            )),
            Err(error) => {
                tracing::info!(repo = %name, error = %error.message, "the environment's check was skipped: its base branch cannot be read");
            }
        }
    }
    lines
}

fn environment_line(record: &EnvironmentRecord) -> Option<CheckLine> {
    let state = record.state.as_ref()?;
    let id = format!("environment:{}", record.repo);
    let subject = format!("{}'s environment", record.repo);
    let file = record.file.clone().unwrap_or_default();
    let image = record
        .image
        .clone()
        .unwrap_or_else(|| "the images of its test services".to_owned());
    let fix = Fix::BuildEnvironment {
        repo: record.repo.clone(),
    };
    Some(match state.as_str() {
        "ready" => CheckLine::ok(id, subject, format!("{image}, from {file}, is ready")),
        "building" => CheckLine::ok(id, subject, format!("{image} is being built from {file}")),
        "stale" => CheckLine::not_ok(
            CheckStatus::Warning,
            id,
            subject,
            format!("a file {image} is keyed on changed on the base branch since it was built: the next run builds it again first"),
            fix,
        ),
        "failed" => {
            let last = record.last_build.as_ref();
            CheckLine::not_ok(
                CheckStatus::Failure,
                id,
                subject,
                format!(
                    "its last build failed at {}: {}; runs fail before their agent starts",
                    last.and_then(|build| build.failed_step.clone()).unwrap_or_default(),
                    last.and_then(|build| build.failure.clone()).unwrap_or_default()
                ),
                fix,
            )
        }
        _ => CheckLine::not_ok(
            CheckStatus::Warning,
            id,
            subject,
            format!("{file} names it, and {image} is not built yet: the next run builds it first"),
            fix,
        ),
    })
}

fn repo_name(text: &str) -> Result<RepoName, CodedError> {
    text.parse::<RepoName>()
        .map_err(|error| CodedError::new(ErrorCode::InvalidInput, error.to_string()))
}

fn build_view(core: &AppCore, build: EnvironmentBuildRecord) -> EnvironmentBuildView {
    let state = match build.state {
        EnvironmentBuildState::Building => "building",
        EnvironmentBuildState::Ready => "ready",
        EnvironmentBuildState::Failed => "failed",
    };
    EnvironmentBuildView {
        id: build.id,
        state: state.to_owned(),
        image: build.image,
        key: build.key,
        recipe_file: build.recipe_file,
        commit: build.commit_sha,
        image_bytes: build.image_bytes,
        failed_step: build.failed_step,
        failure: build.failure,
        run_id: build.run_id.map(|run| run.0),
        started_at: build.started_at.to_rfc3339(),
        finished_at: build.finished_at.map(|time| time.to_rfc3339()),
        log_file: build_log_path(&core.data_dir, build.id)
            .display()
            .to_string(),
    }
}

/// Builds `repo`'s environment unless an image with its key is ready (`force`: builds
/// it all the same), passing each line of the build to `progress`; `None` when the
/// repository has no recipe and runs use the agent image.
pub async fn build_environment(
    core: &AppCore,
    repo: &str,
    force: bool,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Option<EnvironmentBuilt>, CodedError> {
    let repo = &repo_name(repo)?;
    let ready = core
        .pipeline()
        .await?
        .environments()
        .build_environment(repo, force, progress)
        .await?;
    Ok(ready.map(|ready| EnvironmentBuilt {
        image: ready.image,
        image_bytes: ready.bytes,
        built_now: ready.built_now,
    }))
}

/// The whole log of `repo`'s last environment build.
pub async fn last_build_log(core: &AppCore, repo: &str) -> Result<String, CodedError> {
    let repo = &repo_name(repo)?;
    let repo_id = core.store.repositories().repo_by_name(repo).await?.id;
    let Some(build) = core
        .store
        .environment_builds()
        .latest_environment_build(repo_id)
        .await?
    else {
        return Err(CodedError::new(
            ErrorCode::NotFound,
            format!("{} has had no environment build yet", repo.full_name()),
        ));
    };
    let path = build_log_path(&core.data_dir, build.id);
    std::fs::read_to_string(&path).map_err(|error| {
        CodedError::new(
            ErrorCode::NotFound,
            format!(
                "the log of environment build {} ({}) cannot be read: {error}",
                build.id,
                path.display()
            ),
        )
    })
}

/// Each test service as `name: what it runs`.
fn service_words(services: &TestServices) -> Vec<String> {
    services
        .services
        .iter()
        .map(|service| match &service.source {
            ServiceSource::Image(image) => format!("{}: {image}", service.name),
            ServiceSource::Build { dockerfile, .. } => {
                format!("{}: built from {dockerfile}", service.name)
            }
        })
        .collect()
}

/// What an image starts from, in words.
fn base_words(base: &DevContainerBase) -> String {
    match base {
        DevContainerBase::Image(image) => format!("the image {image}"),
        DevContainerBase::Dockerfile {
            dockerfile,
            context,
            target,
            ..
        } => format!(
            "{dockerfile}, built in {context}{}",
            target
                .as_ref()
                .map(|target| format!(" to its stage {target}"))
                .unwrap_or_default()
        ),
        DevContainerBase::Compose { files, service, .. } => {
            format!("the service {service} of {}", files.join(", "))
        }
    }
}

/// A feature as the owner reads it: its reference, then its options
/// (`ghcr.io/devcontainers/features/node:1 (version=20)`).
fn feature_words(feature: &FeatureRequest) -> String {
    let options: Vec<String> = feature
        .options
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if options.is_empty() {
        feature.reference.clone()
    } else {
        format!("{} ({})", feature.reference, options.join(", "))
    }
}

fn record_of(repo: &RepoName, found: FoundEnvironment) -> EnvironmentRecord {
    let mut record = EnvironmentRecord {
        repo: repo.full_name(),
        base_branch: found.base_branch,
        commit: found.commit,
        source: "agent_image".to_owned(),
        file: None,
        base: "Handoff's agent image".to_owned(),
        setup_commands: Vec::new(),
        environment_variables: Vec::new(),
        features: Vec::new(),
        notes: found.services.notes.clone(),
        services: service_words(&found.services),
        keyed_on: found.inputs,
        key: found.key,
        image: None,
        state: None,
        last_build: None,
        test_settings: Vec::new(),
    };
    match found.recipe {
        EnvironmentRecipe::AgentImageOnly if !record.services.is_empty() => {
            record.source = "services".to_owned();
            record.file = Some(SERVICES_FILE.to_owned());
        }
        EnvironmentRecipe::AgentImageOnly => {}
        EnvironmentRecipe::SetupScript => {
            record.source = "setup_script".to_owned();
            record.file = Some(SETUP_SCRIPT.to_owned());
            record.base = format!("Handoff's agent image, then {SETUP_SCRIPT}");
        }
        EnvironmentRecipe::DevContainer(dev_container) => {
            record.source = "dev_container".to_owned();
            record.file = Some(dev_container.file);
            record.base = match (&dev_container.base, &found.compose_agent) {
                (DevContainerBase::Compose { files, service, .. }, Some(agent)) => format!(
                    "the service {service} of {}: {}",
                    files.join(", "),
                    base_words(&agent.base)
                ),
                (base, _) => base_words(base),
            };
            record.setup_commands = dev_container
                .setup_commands
                .iter()
                .map(|command| {
                    let line = match &command.command {
                        CommandForm::Shell(line) => line.clone(),
                        CommandForm::Program(words) => words.join(" "),
                    };
                    match &command.name {
                        Some(name) => format!("{} ({name}): {line}", command.field),
                        None => format!("{}: {line}", command.field),
                    }
                })
                .collect();
            record.environment_variables = found
                .compose_agent
                .iter()
                .flat_map(|agent| agent.environment.keys())
                .chain(dev_container.container_env.keys())
                .chain(dev_container.remote_env.keys())
                .cloned()
                .collect();
            record.environment_variables.sort();
            record.environment_variables.dedup();
            record.features = dev_container.features.iter().map(feature_words).collect();
            record.notes.splice(0..0, dev_container.notes);
        }
    }
    record
}
