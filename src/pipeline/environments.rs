//! A repository's environment as its base branch says it: the recipe found there, the
//! files its image is keyed on, and the key. Read from the repository's cache (one
//! incremental fetch, under the cache's lock), so nothing is cloned for it. Building
//! and caching the image are `environment_build`'s.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

use super::cache_fetched_for_run::note_fetched_for_run;
use super::cache_lock::CacheLock;
use super::handles::Environments;
use super::host_git::HostGit;
use super::PipelineError;
use crate::agent_image::recipe_hash;
use crate::domain::compose_dev_container::{read_compose_dev_container, ComposeAgent};
use crate::domain::dev_container::DevContainerBase;
use crate::domain::environment_key::{environment_key, key_inputs, service_inputs};
use crate::domain::environment_recipe::{
    find_environment, find_services, BaseBranchFiles, EnvironmentRecipe, SETUP_SCRIPT,
};
use crate::domain::test_services::{ServiceSource, TestServices, SERVICES_FILE};
use crate::domain::{Repo, RepoName, RunId};
use crate::sandbox::environment_image::layer_hash;

/// What a repository's base branch says its agent's environment is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundEnvironment {
    pub base_branch: String,
    /// The commit of the base branch it was read at.
    pub commit: String,
    pub recipe: EnvironmentRecipe,
    /// The services its tests reach by name (`.handoff/services.yml`, and those of a
    /// dev container's Compose files).
    pub services: TestServices,
    /// For a dev container that runs in a Compose service: what that service gives the
    /// agent (its image or Dockerfile, its variables).
    pub compose_agent: Option<ComposeAgent>,
    /// The files its images are keyed on (none for the agent image alone).
    pub inputs: Vec<String>,
    /// The image's key, a hash of the inputs and of Handoff's agent layer; none for the
    /// agent image alone, which is not built per repository.
    pub key: Option<String>,
}

/// The key of `inputs` with `layer`: none without inputs. Each input counts by git's id
/// of its content (`entries`), so a large lockfile is not read for it.
fn key_of(inputs: &[String], entries: &BTreeMap<String, String>, layer: &str) -> Option<String> {
    if inputs.is_empty() {
        return None;
    }
    let contents: Vec<(String, Vec<u8>)> = inputs
        .iter()
        .map(|path| {
            let id = entries.get(path).cloned().unwrap_or_default();
            (path.clone(), id.into_bytes())
        })
        .collect();
    Some(environment_key(layer, &contents))
}

/// The texts of the base branch's files a recipe is read from, of those that are there.
async fn recipe_texts(
    git: &HostGit,
    cache: &std::path::Path,
    commit: &str,
) -> Result<BTreeMap<String, String>, super::host_git::GitError> {
    let mut texts = BTreeMap::new();
    for path in BaseBranchFiles::READ {
        if let Some(text) = git.file_at(cache, commit, path).await? {
            texts.insert(path.to_owned(), text);
        }
    }
    Ok(texts)
}

impl FoundEnvironment {
    /// The names of the services built from a Dockerfile of the repository.
    pub fn built_services(&self) -> impl Iterator<Item = &str> {
        self.services
            .services
            .iter()
            .filter(|service| matches!(service.source, ServiceSource::Build { .. }))
            .map(|service| service.name.as_str())
    }

    /// The file the recipe was found in, or what runs use without one.
    pub fn recipe_file(&self) -> String {
        match &self.recipe {
            EnvironmentRecipe::DevContainer(dev_container) => dev_container.file.clone(),
            EnvironmentRecipe::SetupScript => SETUP_SCRIPT.to_owned(),
            EnvironmentRecipe::AgentImageOnly if !self.services.services.is_empty() => {
                SERVICES_FILE.to_owned()
            }
            EnvironmentRecipe::AgentImageOnly => "the agent image".to_owned(),
        }
    }
}

/// The environments read in this process, by repository: the latest reading of each,
/// with what it was read from (the base branch's commit and the settings that go into
/// the reading).
static READ_ENVIRONMENTS: LazyLock<Mutex<HashMap<String, (String, FoundEnvironment)>>> =
    LazyLock::new(Mutex::default);

/// What a reading of `repo`'s environment at `commit` was made from.
fn read_from(repo: &Repo, commit: &str, agent_image: &str) -> String {
    format!(
        "{commit} {} {} {:?} {agent_image}",
        repo.default_branch, repo.agent_preset, repo.environment_key_files,
    )
}

fn remembered_environment(repository: &str, from: &str) -> Option<FoundEnvironment> {
    READ_ENVIRONMENTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(repository)
        .filter(|(remembered, _)| remembered == from)
        .map(|(_, found)| found.clone())
}

fn remember_environment(repository: String, from: String, found: &FoundEnvironment) {
    READ_ENVIRONMENTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(repository, (from, found.clone()));
}

impl Environments<'_> {
    /// `repo`'s environment at the tip of its base branch.
    pub async fn environment_of(&self, repo: &RepoName) -> Result<FoundEnvironment, PipelineError> {
        self.environment_of_for(repo, None).await
    }

    /// [`Self::environment_of`], read for `run` when given: its working copy then uses
    /// this fetch of the cache instead of making its own.
    pub(crate) async fn environment_of_for(
        &self,
        repo: &RepoName,
        run: Option<RunId>,
    ) -> Result<FoundEnvironment, PipelineError> {
        let pipeline = self.pipeline;
        let repo = pipeline.store.repositories().repo_by_name(repo).await?;
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
        if let Some(run) = run {
            note_fetched_for_run(&cache, run);
        }
        let base_ref = format!("refs/heads/{}", repo.default_branch);
        let commit = git
            .resolve(&cache, &base_ref)
            .await
            .map_err(|error| unread(error.to_string()))?;
        // What a commit says is fixed: a base branch that did not move is not read again.
        let repository = repo.name.full_name();
        let from = read_from(&repo, &commit, &pipeline.docker_image_of(&repo).0);
        if let Some(found) = remembered_environment(&repository, &from) {
            return Ok(found);
        }
        let found = self.environment_at(&repo, &git, &cache, commit).await?;
        remember_environment(repository, from, &found);
        Ok(found)
    }

    /// `repo`'s environment as its base branch's `commit` in `cache` says it.
    async fn environment_at(
        &self,
        repo: &Repo,
        git: &HostGit,
        cache: &std::path::Path,
        commit: String,
    ) -> Result<FoundEnvironment, PipelineError> {
        let pipeline = self.pipeline;
        let unread = |detail: String| PipelineError::BaseBranchUnread {
            repo: repo.name.full_name(),
            detail,
        };
        let entries: BTreeMap<String, String> = git
            .files_at(cache, &commit)
            .await
            .map_err(|error| unread(error.to_string()))?
            .into_iter()
            .collect();
        let texts = recipe_texts(git, cache, &commit)
            .await
            .map_err(|error| unread(error.to_string()))?;
        let files = BaseBranchFiles::new(entries.keys().cloned(), texts);
        let recipe =
            find_environment(&files).map_err(|error| PipelineError::EnvironmentRecipe {
                repo: repo.name.full_name(),
                error,
            })?;
        let mut services =
            find_services(&files).map_err(|error| PipelineError::EnvironmentServices {
                repo: repo.name.full_name(),
                error,
            })?;
        let mut inputs = key_inputs(&recipe, &files, &repo.environment_key_files);
        let compose_agent = self
            .compose_agent_of(
                &repo.name,
                &recipe,
                &files,
                (git, cache, &commit),
                &mut services,
            )
            .await?;
        if let Some(DevContainerBase::Dockerfile { dockerfile, .. }) =
            compose_agent.as_ref().map(|agent| &agent.base)
        {
            inputs.push(dockerfile.clone());
        }
        inputs.extend(service_inputs(&services));
        inputs.sort();
        inputs.dedup();
        // Handoff's agent layer, and the agent image a setup script starts from.
        let layer = format!(
            "{} {} {} {}",
            repo.agent_preset,
            recipe_hash(),
            layer_hash(),
            pipeline.docker_image_of(repo).0
        );
        let key = key_of(&inputs, &entries, &layer);
        Ok(FoundEnvironment {
            base_branch: repo.default_branch.clone(),
            commit,
            recipe,
            services,
            compose_agent,
            inputs,
            key,
        })
    }

    /// For a dev container that runs in a Compose service: what that service gives the
    /// agent, read from the Compose files at `commit`; its other services join
    /// `services`. `None` for any other recipe.
    async fn compose_agent_of(
        &self,
        repo: &RepoName,
        recipe: &EnvironmentRecipe,
        files: &BaseBranchFiles,
        (git, cache, commit): (&HostGit, &std::path::Path, &str),
        services: &mut TestServices,
    ) -> Result<Option<ComposeAgent>, PipelineError> {
        let EnvironmentRecipe::DevContainer(dev_container) = recipe else {
            return Ok(None);
        };
        let DevContainerBase::Compose {
            files: compose_files,
            service,
            run_services,
        } = &dev_container.base
        else {
            return Ok(None);
        };
        let mut texts = Vec::new();
        for file in compose_files {
            let text = git
                .file_at(cache, commit, file)
                .await
                .map_err(|error| PipelineError::BaseBranchUnread {
                    repo: repo.full_name(),
                    detail: error.to_string(),
                })?
                .unwrap_or_default();
            texts.push((file.clone(), text));
        }
        read_compose_dev_container(&texts, service, run_services, |path| files.has(path))
            .and_then(|agent| {
                services.add(agent.services.clone())?;
                Ok(agent)
            })
            .map(Some)
            .map_err(|error| PipelineError::EnvironmentServices {
                repo: repo.full_name(),
                error,
            })
    }
}
