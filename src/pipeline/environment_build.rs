//! Building a repository's environment on this machine's Docker engine, once per key:
//! under the repository's build lock, images ready with the key are used as they are;
//! otherwise the recipe found on the base branch is built with Handoff's agent layer,
//! and the test services made from a Dockerfile beside it, the build recorded with its
//! log (a file of the data folder), and the repository's older images pruned. A run
//! that needs them waits for the build and says its steps in its log, then starts in
//! the image with its services; a failed build fails the run before any agent starts.

use std::io::Write as _;
use std::path::PathBuf;

use super::environment_inputs::service_containers;
use super::environments::FoundEnvironment;
use super::handles::Environments;
use super::run_log::RunLog;
use super::PipelineError;
use crate::domain::environment_recipe::EnvironmentRecipe;
use crate::domain::{Repo, RepoName, RunId, SandboxBackend};
use crate::sandbox::agent_image::local_engine;
use crate::sandbox::build_network::BuildNetwork;
use crate::sandbox::docker::ServiceContainer;
use crate::sandbox::environment_image::{
    build_environment_image, build_service_image, environment_image_name, prune_environment_images,
    ready_environment, service_image_name, EnvironmentBuild, EnvironmentBuildError, ServiceBuild,
};
use crate::sandbox::Sandbox;
use crate::store::file_lock::FileLock;
use crate::store::{EnvironmentBuildEnd, NewEnvironmentBuild};

/// The folder of the data folder that holds the builds' logs and locks.
pub const ENVIRONMENT_BUILDS_FOLDER: &str = "environment-builds";

/// A repository's environment, ready for runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyEnvironment {
    /// The image runs start in: the environment's own, or the agent image when the
    /// repository names services only.
    pub image: String,
    /// Whether `image` is the environment's own.
    pub own_image: bool,
    pub bytes: u64,
    /// Whether this call built it (`false`: it was there with its key).
    pub built_now: bool,
    /// The services its runs start beside the agent.
    pub services: Vec<ServiceContainer>,
}

impl Environments<'_> {
    /// Builds `repo`'s environment unless it is ready with its key (`force`: builds it
    /// all the same); `None` when the repository names none and runs use the agent
    /// image alone. Each line of the build goes to `progress`.
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

    /// What a Docker run of `repo` works in when its base branch names an environment
    /// (built first when it is not ready, its steps said in the run's log); `None`:
    /// the agent image alone.
    pub(crate) async fn environment_for_run(
        &self,
        repo: &Repo,
        run_id: RunId,
        log: &RunLog,
    ) -> Result<Option<ReadyEnvironment>, PipelineError> {
        let found = self.environment_of_for(&repo.name, Some(run_id)).await?;
        if found.key.is_none() {
            return Ok(None);
        }
        let feed = BuildLinesToRunLog::start(log);
        let mut progress = |line: &str| feed.offer(line);
        let ready = self
            .ensure_built(repo, &found, false, Some(run_id), &mut progress)
            .await;
        feed.finish().await;
        let ready = ready?;
        let services: Vec<&str> = ready
            .services
            .iter()
            .map(|service| service.name.as_str())
            .collect();
        log.say(&format!(
            "environment: {} ({}{}, {})",
            ready.image,
            found.recipe_file(),
            if services.is_empty() {
                String::new()
            } else {
                format!("; services {}", services.join(", "))
            },
            if ready.built_now {
                "built for this run"
            } else {
                "ready, nothing built"
            }
        ))
        .await?;
        Ok(Some(ready))
    }

    /// Under the repository's build lock: the ready images, or a new build of them.
    async fn ensure_built(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        force: bool,
        run_id: Option<RunId>,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ReadyEnvironment, PipelineError> {
        let name = repo.name.full_name();
        let key = found.key.clone().unwrap_or_default();
        let engine_failed = |error: EnvironmentBuildError| PipelineError::EnvironmentEngine {
            repo: name.clone(),
            detail: error.to_string(),
        };
        let docker = local_engine().map_err(|error| PipelineError::EnvironmentEngine {
            repo: name.clone(),
            detail: error.to_string(),
        })?;
        let _lock = self.build_lock(&name).await?;
        let mut ready = ReadyEnvironment {
            image: self.pipeline.docker_image_of(repo).0,
            own_image: found.recipe != EnvironmentRecipe::AgentImageOnly,
            bytes: 0,
            built_now: false,
            services: service_containers(&name, found, &key),
        };
        if ready.own_image {
            ready.image = environment_image_name(&name, &key);
        }
        if !force {
            let mut wanted = found
                .built_services()
                .map(|service| service_image_name(&name, service, &key))
                .collect::<Vec<_>>();
            if ready.own_image {
                wanted.insert(0, ready.image.clone());
            }
            let mut all_there = true;
            for image in &wanted {
                match ready_environment(&docker, image, &key)
                    .await
                    .map_err(engine_failed)?
                {
                    Some(there) if *image == ready.image => ready.bytes = there.bytes,
                    Some(_) => {}
                    None => all_there = false,
                }
            }
            if all_there {
                return Ok(ready);
            }
        }
        ready.bytes = self
            .build_and_record(repo, found, &docker, run_id, progress)
            .await?;
        ready.built_now = true;
        Ok(ready)
    }

    /// Builds `found`'s image and its services' images, recording the build and keeping
    /// its log; once they are ready, the repository's older images go. Returns the size
    /// of the environment's own image (0 without one).
    async fn build_and_record(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        docker: &bollard::Docker,
        run_id: Option<RunId>,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<u64, PipelineError> {
        let key = found.key.clone().unwrap_or_default();
        let name = repo.name.full_name();
        let base_branch = self.base_branch_cache(repo).await?;
        let own = self.build_of(repo, found, &key, &base_branch).await?;
        let services = self
            .service_builds_of(repo, found, &key, &base_branch)
            .await?;
        drop(base_branch);
        let network = self.build_network_of(repo).await?;
        let store = &self.pipeline.store;
        let image = match &own {
            Some(build) => build.image_name(),
            None => services
                .first()
                .map(|build| build.image_name())
                .unwrap_or_default(),
        };
        let id = store
            .environment_builds()
            .begin_environment_build(&NewEnvironmentBuild {
                repo_id: repo.id,
                key: &key,
                image: &image,
                recipe_file: &found.recipe_file(),
                commit_sha: &found.commit,
                run_id,
            })
            .await?;
        let log_path = build_log_path(&self.pipeline.data_dir, id);
        let mut both = logged_progress(&log_path, progress).map_err(PipelineError::Workspace)?;
        both(&format!("the build's network: {}", network.words));
        let built = build_images(docker, own.as_ref(), &services, &network, &mut both).await;
        let (step, detail) = match built {
            Ok(bytes) => {
                let ready = EnvironmentBuildEnd::Ready { image_bytes: bytes };
                store
                    .environment_builds()
                    .end_environment_build(id, &ready)
                    .await?;
                self.prune_older(docker, &name, &key, &mut both).await?;
                return Ok(bytes);
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
            repo: name,
            step,
            detail,
            log: log_path,
        })
    }

    /// The lock that keeps two builds of `repository`'s environment (an image, a
    /// template) from running at once, taken.
    pub(super) async fn build_lock(&self, repository: &str) -> Result<FileLock, PipelineError> {
        let folder = self.pipeline.data_dir.join(ENVIRONMENT_BUILDS_FOLDER);
        std::fs::create_dir_all(&folder)
            .map_err(|error| PipelineError::Workspace(error.to_string()))?;
        let lock_path = folder.join(format!("{}.lock", repository.replace('/', "+")));
        FileLock::take(&lock_path)
            .await
            .map_err(|error| PipelineError::Workspace(error.to_string()))
    }

    /// The network `repo`'s environment is built on: its Docker runs' own (none, or
    /// its allow-list or open mode through its egress gate).
    async fn build_network_of(&self, repo: &Repo) -> Result<BuildNetwork, PipelineError> {
        let sandbox = self
            .pipeline
            .sandbox_for(SandboxBackend::Docker, Some(repo))
            .await?;
        let Sandbox::Docker(docker) = sandbox else {
            return Ok(BuildNetwork::default());
        };
        // The egress gate runs from the repository's agent image: a missing one is named
        // as Check setup names it, with how to build it.
        if repo.network_mode != crate::domain::NetworkMode::None {
            let (engine_line, engine) = crate::setup_check::docker_engine().await;
            let Some(engine) = engine else {
                return Err(PipelineError::SetupIncomplete(engine_line));
            };
            let (image, preset) = self.pipeline.docker_image_of(repo);
            let image_line =
                crate::setup_check::docker_image(&engine, &image, preset.as_deref()).await;
            if image_line.status == crate::setup_check::CheckStatus::Failure {
                return Err(PipelineError::SetupIncomplete(image_line));
            }
        }
        docker
            .build_network()
            .await
            .map_err(|error| PipelineError::EnvironmentEngine {
                repo: repo.name.full_name(),
                detail: format!("the build's network cannot be set up: {error}"),
            })
    }

    /// Removes the repository's images of other keys, saying each in the build's log.
    async fn prune_older(
        &self,
        docker: &bollard::Docker,
        repository: &str,
        key: &str,
        log: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), PipelineError> {
        let installation = self.pipeline.store.settings().installation_id().await?;
        let pruned = prune_environment_images(docker, &installation, repository, key)
            .await
            .map_err(|error| PipelineError::EnvironmentEngine {
                repo: repository.to_owned(),
                detail: error.to_string(),
            })?;
        for old in pruned {
            log(&format!("removed the older environment image {old}"));
        }
        Ok(())
    }
}

/// The lines of an environment's build that a run's log gets: its steps, not every
/// line of their output (the build's own log has those).
pub(super) struct BuildLinesToRunLog {
    lines: tokio::sync::mpsc::UnboundedSender<String>,
    saying: tokio::task::JoinHandle<()>,
}

impl BuildLinesToRunLog {
    pub(super) fn start(log: &RunLog) -> Self {
        let (lines, mut said) = tokio::sync::mpsc::unbounded_channel::<String>();
        let run_log = log.clone();
        let saying = tokio::spawn(async move {
            while let Some(line) = said.recv().await {
                if let Err(error) = run_log.say(&line).await {
                    tracing::warn!(%error, "a line of the environment's build did not reach the run's log");
                }
            }
        });
        BuildLinesToRunLog { lines, saying }
    }

    /// Passes `line` on when it is a step of the build.
    pub(super) fn offer(&self, line: &str) {
        let a_step = [
            "Step ",
            " : ",
            "building ",
            "adding ",
            "failed: ",
            "removed ",
            "note: ",
            "starting the build",
            "uploaded files",
            "fetching the feature ",
            "the feature ",
        ]
        .iter()
        .any(|start| line.starts_with(start));
        if a_step && self.lines.send(format!("environment: {line}")).is_err() {
            tracing::debug!("the run's log stopped taking the environment's build lines");
        }
    }

    /// Waits until every line offered is in the run's log.
    pub(super) async fn finish(self) {
        drop(self.lines);
        if let Err(error) = self.saying.await {
            tracing::warn!(%error, "the environment's build lines stopped reaching the run's log");
        }
    }
}

/// Builds the environment's own image (when it has one) and its services' images;
/// returns the size of its own.
async fn build_images(
    docker: &bollard::Docker,
    own: Option<&EnvironmentBuild>,
    services: &[ServiceBuild],
    network: &BuildNetwork,
    log: &mut (dyn FnMut(&str) + Send),
) -> Result<u64, EnvironmentBuildError> {
    let mut bytes = 0;
    if let Some(build) = own {
        bytes = build_environment_image(docker, build, network, log)
            .await?
            .bytes;
    }
    for build in services {
        build_service_image(docker, build, network, log).await?;
    }
    Ok(bytes)
}

/// Where build `id`'s log is kept.
/// `progress`, with each line also written to a new log file at `log_path`; an error
/// says the file cannot be made.
pub(super) fn logged_progress<'a>(
    log_path: &std::path::Path,
    progress: &'a mut (dyn FnMut(&str) + Send),
) -> Result<impl FnMut(&str) + Send + 'a, String> {
    let mut log_file = std::fs::File::create(log_path)
        .map_err(|error| format!("cannot make {}: {error}", log_path.display()))?;
    let log_path = log_path.to_owned();
    Ok(move |line: &str| {
        if let Err(error) = writeln!(log_file, "{line}") {
            tracing::warn!(%error, log = %log_path.display(), "a line of a build's log was not written");
        }
        progress(line);
    })
}

pub fn build_log_path(data_dir: &std::path::Path, id: i64) -> PathBuf {
    data_dir
        .join(ENVIRONMENT_BUILDS_FOLDER)
        .join(format!("{id}.log"))
}
