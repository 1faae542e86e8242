//! Building a repository's environment image on this machine's Docker engine, once per
//! key: under the repository's build lock, a ready image with the key is used as it is;
//! otherwise the recipe found on the base branch is built with Handoff's agent layer,
//! the build recorded with its log (a file of the data folder), and the repository's
//! older environment images pruned. A run that needs the image waits for the build and
//! says its steps in its log; a failed build fails the run before any agent starts.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::cache_lock::CacheLock;
use super::environments::FoundEnvironment;
use super::handles::Environments;
use super::host_git::HostGit;
use super::run_log::RunLog;
use super::PipelineError;
use crate::domain::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET};
use crate::domain::dev_container::{
    CommandForm, DevContainerBase, DevContainerRecipe, SetupCommand,
};
use crate::domain::environment_recipe::{EnvironmentRecipe, SETUP_SCRIPT};
use crate::domain::{Repo, RepoName, RunId};
use crate::sandbox::agent_image::local_engine;
use crate::sandbox::environment_image::{
    build_environment_image, environment_image_name, prune_environment_images, ready_environment,
    EnvironmentBase, EnvironmentBuild, EnvironmentBuildError, SetupStep,
};
use crate::store::file_lock::FileLock;
use crate::store::{EnvironmentBuildEnd, NewEnvironmentBuild, SettingKey};

/// The folder of the data folder that holds the builds' logs and locks.
pub const ENVIRONMENT_BUILDS_FOLDER: &str = "environment-builds";

/// An environment image ready for runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyEnvironment {
    pub image: String,
    pub bytes: u64,
    /// Whether this call built it (`false`: it was there with its key).
    pub built_now: bool,
}

impl Environments<'_> {
    /// Builds `repo`'s environment unless an image with its key is ready (`force`:
    /// builds it all the same); `None` when the repository has no recipe and runs use
    /// the agent image. Each line of the build goes to `progress`.
    pub async fn build_environment(
        &self,
        repo: &RepoName,
        force: bool,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Option<ReadyEnvironment>, PipelineError> {
        let found = self.environment_of(repo).await?;
        let repo = self
            .pipeline
            .store
            .repositories()
            .repo_by_name(repo)
            .await?;
        if found.key.is_none() {
            return Ok(None);
        }
        self.ensure_built(&repo, &found, force, None, progress)
            .await
            .map(Some)
    }

    /// The image a Docker run of `repo` uses when its base branch names an environment
    /// (built first when it is not ready, its steps said in the run's log); `None`:
    /// the agent image.
    pub(crate) async fn image_for_run(
        &self,
        repo: &Repo,
        run_id: RunId,
        log: &RunLog,
    ) -> Result<Option<String>, PipelineError> {
        let found = self.environment_of(&repo.name).await?;
        if found.key.is_none() {
            return Ok(None);
        }
        let (lines, mut said) = tokio::sync::mpsc::unbounded_channel::<String>();
        let run_log = log.clone();
        let saying = tokio::spawn(async move {
            while let Some(line) = said.recv().await {
                if let Err(error) = run_log.say(&line).await {
                    tracing::warn!(%error, "a line of the environment's build did not reach the run's log");
                }
            }
        });
        // The run's log gets the build's steps; the build's own log gets every line.
        let mut progress = |line: &str| {
            let a_step = [
                "Step ",
                " : ",
                "building ",
                "adding ",
                "failed: ",
                "removed ",
            ]
            .iter()
            .any(|start| line.starts_with(start));
            if a_step && lines.send(format!("environment: {line}")).is_err() {
                tracing::debug!("the run's log stopped taking the environment's build lines");
            }
        };
        let ready = self
            .ensure_built(repo, &found, false, Some(run_id), &mut progress)
            .await;
        drop(lines);
        if let Err(error) = saying.await {
            tracing::warn!(%error, "the environment's build lines stopped reaching the run's log");
        }
        let ready = ready?;
        log.say(&format!(
            "environment: {} ({}, {})",
            ready.image,
            found.recipe_file(),
            if ready.built_now {
                "built for this run"
            } else {
                "ready, nothing built"
            }
        ))
        .await?;
        Ok(Some(ready.image))
    }

    /// Under the repository's build lock: the ready image, or a new build of it.
    async fn ensure_built(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        force: bool,
        run_id: Option<RunId>,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ReadyEnvironment, PipelineError> {
        let key = found.key.clone().unwrap_or_default();
        let image = environment_image_name(&repo.name.full_name(), &key);
        let engine_failed = |error: EnvironmentBuildError| PipelineError::EnvironmentEngine {
            repo: repo.name.full_name(),
            detail: error.to_string(),
        };
        let docker = local_engine().map_err(|error| PipelineError::EnvironmentEngine {
            repo: repo.name.full_name(),
            detail: error.to_string(),
        })?;
        let folder = self.pipeline.data_dir.join(ENVIRONMENT_BUILDS_FOLDER);
        std::fs::create_dir_all(&folder)
            .map_err(|error| PipelineError::Workspace(error.to_string()))?;
        let lock_path = folder.join(format!("{}.lock", image.replace([':', '/'], "_")));
        let _lock = FileLock::take(&lock_path)
            .await
            .map_err(|error| PipelineError::Workspace(error.to_string()))?;
        if !force {
            if let Some(ready) = ready_environment(&docker, &image, &key)
                .await
                .map_err(engine_failed)?
            {
                return Ok(ReadyEnvironment {
                    image: ready.image,
                    bytes: ready.bytes,
                    built_now: false,
                });
            }
        }
        self.build_and_record(repo, found, &docker, run_id, progress)
            .await
    }

    /// Builds `found`'s image, recording the build and keeping its log; once it is
    /// ready, the repository's older images go.
    async fn build_and_record(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        docker: &bollard::Docker,
        run_id: Option<RunId>,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ReadyEnvironment, PipelineError> {
        let key = found.key.clone().unwrap_or_default();
        let build = self.build_of(repo, found, &key).await?;
        let store = &self.pipeline.store;
        let id = store
            .environment_builds()
            .begin_environment_build(&NewEnvironmentBuild {
                repo_id: repo.id,
                key: &key,
                image: &build.image_name(),
                recipe_file: &found.recipe_file(),
                commit_sha: &found.commit,
                run_id,
            })
            .await?;
        let log_path = build_log_path(&self.pipeline.data_dir, id);
        let mut log_file = std::fs::File::create(&log_path)
            .map_err(|error| PipelineError::Workspace(error.to_string()))?;
        let mut both = |line: &str| {
            if let Err(error) = writeln!(log_file, "{line}") {
                tracing::warn!(%error, "a line of the environment's build log was not written");
            }
            progress(line);
        };
        let (step, detail) = match build_environment_image(docker, &build, &mut both).await {
            Ok(built) => {
                let ready = EnvironmentBuildEnd::Ready {
                    image_bytes: built.bytes,
                };
                store
                    .environment_builds()
                    .end_environment_build(id, &ready)
                    .await?;
                let pruned =
                    prune_environment_images(docker, &build.installation, &build.repository, &key)
                        .await
                        .map_err(|error| PipelineError::EnvironmentEngine {
                            repo: build.repository.clone(),
                            detail: error.to_string(),
                        })?;
                for old in pruned {
                    both(&format!("removed the older environment image {old}"));
                }
                return Ok(ReadyEnvironment {
                    image: built.image,
                    bytes: built.bytes,
                    built_now: true,
                });
            }
            Err(EnvironmentBuildError::Step { step, detail }) => (step, detail),
            Err(other) => ("the build".to_owned(), other.to_string()),
        };
        both(&format!("failed: {step}: {detail}"));
        let failed = EnvironmentBuildEnd::Failed {
            step: step.clone(),
            failure: detail.clone(),
        };
        store
            .environment_builds()
            .end_environment_build(id, &failed)
            .await?;
        Err(PipelineError::EnvironmentBuild {
            repo: build.repository,
            step,
            detail,
            log: log_path,
        })
    }

    /// What to build for `found`: its base, the files it is given, the agent layer's
    /// preset and the setup commands.
    async fn build_of(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        key: &str,
    ) -> Result<EnvironmentBuild, PipelineError> {
        let pipeline = self.pipeline;
        let unread = |detail: String| PipelineError::BaseBranchUnread {
            repo: repo.name.full_name(),
            detail,
        };
        let git = pipeline.host_git();
        let cache_root = pipeline.cache_root();
        let (_lock, _) = CacheLock::acquire(&cache_root, &repo.name, async {})
            .await
            .map_err(|error| unread(format!("the repository's cache is locked: {error}")))?;
        let cache = git
            .update_cache(&cache_root, &repo.name, &[])
            .await
            .map_err(|error| unread(error.to_string()))?;
        let working_copy = git
            .archive_at(&cache, &found.commit, ".")
            .await
            .map_err(|error| unread(error.to_string()))?;
        let agent_image = pipeline.docker_image_of(repo).0;
        let image_preset = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref())
            .map(|agent| agent.image_preset())
            .unwrap_or(CUSTOM_IMAGE_PRESET);
        let (base, preset, variables, setup_steps) = match &found.recipe {
            EnvironmentRecipe::AgentImageOnly => {
                return Err(PipelineError::Workspace(
                    "the agent image alone is not built per repository".to_owned(),
                ))
            }
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
                let base =
                    dev_container_base(repo, dev_container, &git, &cache, &found.commit).await?;
                let mut variables = dev_container.container_env.clone();
                variables.extend(dev_container.remote_env.clone());
                let steps = dev_container
                    .setup_commands
                    .iter()
                    .map(setup_step)
                    .collect();
                (base, image_preset.to_owned(), variables, steps)
            }
        };
        let stand_in = self.stand_in(&preset).await?;
        Ok(EnvironmentBuild {
            repository: repo.name.full_name(),
            installation: pipeline.store.settings().installation_id().await?,
            key: key.to_owned(),
            base,
            preset,
            stand_in,
            variables,
            setup_steps,
            working_copy,
        })
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

/// What a dev container's image starts from: its image, or its Dockerfile with the
/// context's files at `commit`. Features, and a Compose service as the agent's
/// container, are refused by name, rather than built into an image without them.
async fn dev_container_base(
    repo: &Repo,
    dev_container: &DevContainerRecipe,
    git: &HostGit,
    cache: &Path,
    commit: &str,
) -> Result<EnvironmentBase, PipelineError> {
    let unread = |detail: String| PipelineError::BaseBranchUnread {
        repo: repo.name.full_name(),
        detail,
    };
    if !dev_container.features.is_empty() {
        return Err(PipelineError::EnvironmentNotYetBuilt {
            repo: repo.name.full_name(),
            what: format!(
                "its dev container asks for features ({}); install what they add in its Dockerfile instead",
                dev_container.features.join(", ")
            ),
        });
    }
    Ok(match &dev_container.base {
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
                .map_err(|error| unread(error.to_string()))?,
            path: dockerfile.clone(),
            text: git
                .file_at(cache, commit, dockerfile)
                .await
                .map_err(|error| unread(error.to_string()))?
                .unwrap_or_default(),
            args: args.clone(),
            target: target.clone(),
        },
        DevContainerBase::Compose { files, service, .. } => {
            return Err(PipelineError::EnvironmentNotYetBuilt {
                repo: repo.name.full_name(),
                what: format!(
                    "its dev container runs in the Docker Compose service {service} of {}; \
                     name an image or a Dockerfile for the agent instead",
                    files.join(", ")
                ),
            })
        }
    })
}

/// Where build `id`'s log is kept.
pub fn build_log_path(data_dir: &std::path::Path, id: i64) -> PathBuf {
    data_dir
        .join(ENVIRONMENT_BUILDS_FOLDER)
        .join(format!("{id}.log"))
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
