//! What a repository's environment is built from, read from its base branch at the
//! commit its key was made at: the environment image's build (its base, the files it is
//! given as `git archive` makes them, the agent layer's preset, the variables and setup
//! commands), the builds of the test services made from a Dockerfile, and the services'
//! containers as a run starts them.

use std::path::{Path, PathBuf};

use super::cache_lock::CacheLock;
use super::environments::FoundEnvironment;
use super::handles::Environments;
use super::host_git::HostGit;
use super::PipelineError;
use crate::domain::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET};
use crate::domain::dev_container::{
    CommandForm, DevContainerBase, DevContainerRecipe, SetupCommand,
};
use crate::domain::dev_container_feature::{feature_source, FeatureSource};
use crate::domain::environment_recipe::{EnvironmentRecipe, SETUP_SCRIPT};
use crate::domain::test_services::ServiceSource;
use crate::domain::Repo;
use crate::sandbox::dev_container_features::FeaturesToFetch;
use crate::sandbox::docker::ServiceContainer;
use crate::sandbox::environment_image::{
    service_image_name, EnvironmentBase, EnvironmentBuild, ServiceBuild, SetupStep,
};
use crate::store::SettingKey;

/// The base branch's files, read from the repository's cache under its lock.
pub(super) struct BaseBranchCache {
    _lock: CacheLock,
    pub git: HostGit,
    pub cache: PathBuf,
}

impl Environments<'_> {
    /// The repository's cache, brought up to date and held while its files are read.
    pub(super) async fn base_branch_cache(
        &self,
        repo: &Repo,
    ) -> Result<BaseBranchCache, PipelineError> {
        let unread = |detail: String| PipelineError::BaseBranchUnread {
            repo: repo.name.full_name(),
            detail,
        };
        let git = self.pipeline.host_git();
        let cache_root = self.pipeline.cache_root();
        let (lock, _) = CacheLock::acquire(&cache_root, &repo.name, async {})
            .await
            .map_err(|error| unread(format!("the repository's cache is locked: {error}")))?;
        let cache = git
            .update_cache(&cache_root, &repo.name, &[])
            .await
            .map_err(|error| unread(error.to_string()))?;
        Ok(BaseBranchCache {
            _lock: lock,
            git,
            cache,
        })
    }

    /// What to build for `found`'s own image: its base, the files it is given, the
    /// agent layer's preset and the setup commands; `None` when runs use the agent
    /// image.
    pub(super) async fn build_of(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        key: &str,
        base_branch: &BaseBranchCache,
    ) -> Result<Option<EnvironmentBuild>, PipelineError> {
        let pipeline = self.pipeline;
        let (git, cache) = (&base_branch.git, base_branch.cache.as_path());
        let agent_image = pipeline.docker_image_of(repo).0;
        let image_preset = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref())
            .map(|agent| agent.image_preset())
            .unwrap_or(CUSTOM_IMAGE_PRESET);
        let mut features = FeaturesToFetch::default();
        let (base, preset, variables, setup_steps) = match &found.recipe {
            EnvironmentRecipe::AgentImageOnly => return Ok(None),
            // The agent image already carries the agent: the layer only checks it.
            EnvironmentRecipe::SetupScript => (
                EnvironmentBase::Image(agent_image),
                CUSTOM_IMAGE_PRESET.to_owned(),
                Default::default(),
                vec![SetupStep {
                    name: SETUP_SCRIPT.to_owned(),
                    shell_line: format!("sh {SETUP_SCRIPT}"),
                }],
            ),
            EnvironmentRecipe::DevContainer(dev_container) => {
                // A dev container in a Compose service starts from that service's image.
                let (agent_base, mut variables) = match &found.compose_agent {
                    Some(agent) => (&agent.base, agent.environment.clone()),
                    None => (&dev_container.base, Default::default()),
                };
                let base = dev_container_base(repo, agent_base, git, cache, &found.commit).await?;
                features = features_of(repo, dev_container, git, cache, &found.commit).await?;
                variables.extend(dev_container.container_env.clone());
                variables.extend(dev_container.remote_env.clone());
                let steps = dev_container
                    .setup_commands
                    .iter()
                    .map(setup_step)
                    .collect();
                (base, image_preset.to_owned(), variables, steps)
            }
        };
        let working_copy = git
            .archive_at(cache, &found.commit, ".")
            .await
            .map_err(|error| unread(repo, error.to_string()))?;
        Ok(Some(EnvironmentBuild {
            repository: repo.name.full_name(),
            installation: pipeline.store.settings().installation_id().await?,
            key: key.to_owned(),
            base,
            stand_in: self.stand_in(&preset).await?,
            preset,
            variables,
            setup_steps,
            features,
            working_copy,
        }))
    }

    /// The builds of the test services made from a Dockerfile.
    pub(super) async fn service_builds_of(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        key: &str,
        base_branch: &BaseBranchCache,
    ) -> Result<Vec<ServiceBuild>, PipelineError> {
        let installation = self.pipeline.store.settings().installation_id().await?;
        let (git, cache) = (&base_branch.git, base_branch.cache.as_path());
        let mut builds = Vec::new();
        for service in &found.services.services {
            let ServiceSource::Build {
                context,
                dockerfile,
            } = &service.source
            else {
                continue;
            };
            builds.push(ServiceBuild {
                repository: repo.name.full_name(),
                installation: installation.clone(),
                key: key.to_owned(),
                service: service.name.clone(),
                context: git
                    .archive_at(cache, &found.commit, context)
                    .await
                    .map_err(|error| unread(repo, error.to_string()))?,
                path: dockerfile.clone(),
                text: git
                    .file_at(cache, &found.commit, dockerfile)
                    .await
                    .map_err(|error| unread(repo, error.to_string()))?
                    .unwrap_or_default(),
            });
        }
        Ok(builds)
    }

    /// The program installed as the agent's command instead of its package, when this
    /// installation is set to use one (as its agent images are).
    async fn stand_in(&self, preset: &str) -> Result<Option<Vec<u8>>, PipelineError> {
        if preset == CUSTOM_IMAGE_PRESET {
            return Ok(None);
        }
        let Some(path) = self
            .pipeline
            .store
            .settings()
            .setting(SettingKey::AgentImageStandIn)
            .await?
        else {
            return Ok(None);
        };
        std::fs::read(&path).map(Some).map_err(|error| {
            PipelineError::Workspace(format!("cannot read the agent stand-in {path}: {error}"))
        })
    }
}

/// The containers of `found`'s test services, as a run of `repository` starts them.
pub(super) fn service_containers(
    repository: &str,
    found: &FoundEnvironment,
    key: &str,
) -> Vec<ServiceContainer> {
    found
        .services
        .services
        .iter()
        .map(|service| ServiceContainer {
            name: service.name.clone(),
            image: match &service.source {
                ServiceSource::Image(image) => image.clone(),
                ServiceSource::Build { .. } => service_image_name(repository, &service.name, key),
            },
            environment: service.environment.clone(),
            command: service.command.as_ref().map(|command| match command {
                CommandForm::Shell(line) => {
                    vec!["/bin/sh".to_owned(), "-c".to_owned(), line.clone()]
                }
                CommandForm::Program(words) => words.clone(),
            }),
        })
        .collect()
}

fn unread(repo: &Repo, detail: String) -> PipelineError {
    PipelineError::BaseBranchUnread {
        repo: repo.name.full_name(),
        detail,
    }
}

/// The features `dev_container` asks for, as the build fetches them: a local feature's
/// folder read at `commit`, and the owner's install order by the features' identities.
async fn features_of(
    repo: &Repo,
    dev_container: &DevContainerRecipe,
    git: &HostGit,
    cache: &Path,
    commit: &str,
) -> Result<FeaturesToFetch, PipelineError> {
    let mut features = FeaturesToFetch {
        requests: dev_container.features.clone(),
        ..FeaturesToFetch::default()
    };
    for request in &dev_container.features {
        if let FeatureSource::Local(path) = &request.source {
            let files = git
                .archive_at(cache, commit, path)
                .await
                .map_err(|error| unread(repo, error.to_string()))?;
            features.local_files.insert(path.clone(), files);
        }
    }
    features.first = dev_container
        .feature_install_order
        .iter()
        .map(
            |reference| match feature_source(reference, &dev_container.file) {
                Ok(source) => source.identity(),
                Err(_) => reference.clone(),
            },
        )
        .collect();
    Ok(features)
}

/// What a dev container's image starts from: `base` (its image, or its Dockerfile with
/// the context's files at `commit`; for one in a Compose service, that service's).
async fn dev_container_base(
    repo: &Repo,
    base: &DevContainerBase,
    git: &HostGit,
    cache: &Path,
    commit: &str,
) -> Result<EnvironmentBase, PipelineError> {
    Ok(match base {
        DevContainerBase::Image(name) => EnvironmentBase::Image(name.clone()),
        DevContainerBase::Dockerfile {
            dockerfile,
            context,
            args,
            target,
        } => EnvironmentBase::Dockerfile {
            context: git
                .archive_at(cache, commit, context)
                .await
                .map_err(|error| unread(repo, error.to_string()))?,
            path: dockerfile.clone(),
            text: git
                .file_at(cache, commit, dockerfile)
                .await
                .map_err(|error| unread(repo, error.to_string()))?
                .unwrap_or_default(),
            args: args.clone(),
            target: target.clone(),
        },
        // Read into the service's own image or Dockerfile when the environment was found.
        DevContainerBase::Compose { files, service, .. } => {
            return Err(PipelineError::EnvironmentNotYetBuilt {
                repo: repo.name.full_name(),
                what: format!(
                    "its dev container's Compose service {service} of {} was not read",
                    files.join(", ")
                ),
            })
        }
    })
}

/// A setup command as a step of the build: named by its field (and its name, for one
/// of several), run by the shell.
fn setup_step(command: &SetupCommand) -> SetupStep {
    let shell_line = match &command.command {
        CommandForm::Shell(line) => line.clone(),
        CommandForm::Program(words) => words
            .iter()
            .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" "),
    };
    let name = match &command.name {
        Some(name) => format!("{} {name:?} ({shell_line})", command.field),
        None => format!("{} ({shell_line})", command.field),
    };
    SetupStep { name, shell_line }
}
