//! A repository's environment on E2B: the same recipe a Docker run's image is built
//! from, built once per key as an E2B template through E2B's template build API, under
//! the repository's build lock. A run finds the template ready by its name and starts
//! from it; otherwise it builds it first, saying the build's steps in its log and
//! keeping the whole log in the data folder, and the repository's older templates go.
//! A failed build fails the run before any agent starts.
//!
//! What E2B cannot hold is said, not hidden: test services start beside Docker runs
//! only, and E2B builds templates on its own network (the repository's allow-list holds
//! for its runs, not for E2B's builds).

use super::environment_build::{logged_progress, BuildLinesToRunLog, ENVIRONMENT_BUILDS_FOLDER};
use super::environments::FoundEnvironment;
use super::handles::Environments;
use super::run_log::RunLog;
use super::PipelineError;
use crate::domain::environment_recipe::EnvironmentRecipe;
use crate::domain::Repo;
use crate::sandbox::dev_container_features::fetch_features;
use crate::sandbox::e2b::template_recipe::{template_name, template_recipe};
use crate::sandbox::e2b::{E2bSandbox, DEFAULT_TEMPLATE};
use crate::sandbox::environment_image::EnvironmentBuildError;

impl Environments<'_> {
    /// The template an E2B run of `repo` starts from when its base branch names an
    /// environment (built first when it is not ready); `None`: the repository's own
    /// template, as without one.
    pub(crate) async fn template_for_run(
        &self,
        repo: &Repo,
        e2b: &E2bSandbox,
        log: &RunLog,
    ) -> Result<Option<String>, PipelineError> {
        let found = self
            .environment_of_for(&repo.name, Some(log.run_id()))
            .await?;
        if found.key.is_none() {
            return Ok(None);
        }
        if !found.services.services.is_empty() {
            let names: Vec<&str> = found
                .services
                .services
                .iter()
                .map(|service| service.name.as_str())
                .collect();
            log.say(&format!(
                "environment: test services start beside Docker runs only: this E2B run works without {}",
                names.join(", ")
            ))
            .await?;
        }
        if found.recipe == EnvironmentRecipe::AgentImageOnly {
            return Ok(None);
        }
        let repository = repo.name.full_name();
        let key = found.key.clone().unwrap_or_default();
        let name = template_name(&repository, &key);
        let _lock = self.build_lock(&repository).await?;
        let unreachable = |error: crate::sandbox::SandboxError| PipelineError::EnvironmentEngine {
            repo: repository.clone(),
            detail: error.to_string(),
        };
        let ready = e2b.template_is_ready(&name).await.map_err(unreachable)?;
        if !ready {
            let feed = BuildLinesToRunLog::start(log);
            let built = self
                .build_template(repo, &found, e2b, &mut |line: &str| feed.offer(line))
                .await;
            feed.finish().await;
            built?;
        }
        log.say(&format!(
            "environment: the E2B template {name} ({}, {})",
            found.recipe_file(),
            if ready {
                "ready, nothing built"
            } else {
                "built for this run"
            }
        ))
        .await?;
        Ok(Some(name))
    }

    /// Builds `found` as `repo`'s template on E2B, keeping the build's log in the data
    /// folder; once it is ready, the repository's older templates go.
    async fn build_template(
        &self,
        repo: &Repo,
        found: &FoundEnvironment,
        e2b: &E2bSandbox,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), PipelineError> {
        let repository = repo.name.full_name();
        let key = found.key.clone().unwrap_or_default();
        let base_branch = self.base_branch_cache(repo).await?;
        let build = self.build_of(repo, found, &key, &base_branch).await?;
        drop(base_branch);
        let Some(build) = build else {
            return Ok(());
        };
        // A setup script runs on the template the repository's E2B runs start from.
        let from_template = (found.recipe == EnvironmentRecipe::SetupScript).then(|| {
            repo.e2b_template
                .clone()
                .unwrap_or_else(|| DEFAULT_TEMPLATE.to_owned())
        });
        let folder = self.pipeline.data_dir.join(ENVIRONMENT_BUILDS_FOLDER);
        let log_path = folder.join(format!("e2b-{}.log", template_name(&repository, &key)));
        let mut both = logged_progress(&log_path, progress).map_err(PipelineError::Workspace)?;
        both("the build's network: E2B's own (the repository's allow-list holds for its runs, not for E2B's builds)");
        let built = match fetch_features(&build.features, &mut both).await {
            Ok(features) => match template_recipe(&build, &features, from_template.as_deref()) {
                Ok(recipe) => e2b.build_template(&recipe, &mut both).await,
                Err(refused) => Err(refused),
            },
            Err(failed) => Err(failed),
        };
        let (step, detail) = match built {
            Ok(()) => {
                let pruned = e2b
                    .prune_templates(&repository, &template_name(&repository, &key))
                    .await
                    .map_err(|error| PipelineError::EnvironmentEngine {
                        repo: repository.clone(),
                        detail: error.to_string(),
                    })?;
                for old in pruned {
                    both(&format!("removed the older E2B template {old}"));
                }
                return Ok(());
            }
            Err(EnvironmentBuildError::Step { step, detail }) => (step, detail),
            Err(other) => ("the E2B template build".to_owned(), other.to_string()),
        };
        both(&format!("failed: {step}: {detail}"));
        Err(PipelineError::EnvironmentBuild {
            repo: repository,
            step,
            detail,
            log: log_path,
        })
    }
}
