//! The steps every agent run shares, whatever its stage: the agent and its sandbox made
//! ready before anything is spent; a working copy of a branch from the cache; the job
//! (prompt, inputs, commit message, script) run in the sandbox with its log recorded;
//! and the agent's commits brought back as a bundle, checked and pushed from the host.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::agent_presets::agent_command;
use super::host_git::{GitError, HostGit};
use super::job_script::JobScript;
use super::run_log::{record_sandbox_events, RunLog};
use super::{Pipeline, PipelineError};
use crate::domain::{Repo, RunId, SandboxBackend, Stage};
use crate::sandbox::{JobControl, Sandbox, SandboxEnd, SandboxJob};
use crate::secrets::{Secret, SecretName};
use crate::store::{RunOutcome, StoreError};

/// Why a started run did not succeed.
pub(crate) enum Stop {
    Failed { code: &'static str, message: String },
    Cancelled,
}

impl Stop {
    /// Says in the run's log why the job stopped, and gives the outcome to record.
    pub(crate) async fn logged_outcome(&self, log: &RunLog) -> Result<RunOutcome, StoreError> {
        Ok(match self {
            Stop::Failed { code, message } => {
                log.say(&format!("failed: {message}")).await?;
                RunOutcome::Failed {
                    failure_code: (*code).to_owned(),
                    message: message.clone(),
                    exit_code: None,
                }
            }
            Stop::Cancelled => {
                log.say("cancelled by the owner; the sandbox was stopped")
                    .await?;
                RunOutcome::Cancelled {
                    reason: "cancelled by the owner".to_owned(),
                }
            }
        })
    }

    pub(crate) fn failed(code: &'static str, message: impl Into<String>) -> Self {
        Stop::Failed {
            code,
            message: message.into(),
        }
    }
}

impl From<StoreError> for Stop {
    fn from(error: StoreError) -> Self {
        Stop::failed("store", error.to_string())
    }
}

/// The agent and its sandbox, checked and ready.
#[derive(Debug, Clone)]
pub(crate) struct AgentSetup {
    pub sandbox: Sandbox,
    pub agent_command: String,
    pub agent_environment: Vec<(String, Secret)>,
    pub timeout: Duration,
}

/// A working copy made for a run.
#[derive(Debug, Clone)]
pub(crate) struct WorkingCopy {
    pub cache: PathBuf,
    pub checkout: String,
    pub new_branch: Option<String>,
    pub start_sha: String,
    pub in_place: bool,
}

/// What the sandbox is given besides the working copy.
pub(crate) struct JobFiles<'a> {
    pub prompt: &'a str,
    pub commit_message: &'a str,
    /// Files for `handoff/inputs/` (name, text).
    pub inputs: &'a [(String, String)],
}

/// A file's text, if it has some (NULs dropped, invalid UTF-8 replaced).
pub(crate) fn read_optional(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', ""))
        .filter(|text| !text.trim().is_empty())
}

/// `90 s`, `30 min`, `2 h`.
pub(crate) fn humanize(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 120 {
        format!("{seconds} s")
    } else if seconds < 2 * 3600 {
        format!("{} min", seconds / 60)
    } else {
        format!("{} h", seconds / 3600)
    }
}

impl Pipeline {
    pub(crate) fn host_git(&self) -> HostGit {
        HostGit::new(
            &self.github.endpoints().web_base,
            self.github.token().clone(),
        )
    }

    pub(crate) fn workspace_of(&self, run_id: RunId) -> PathBuf {
        self.data_dir
            .join("workspaces")
            .join(format!("run-{run_id}"))
    }

    pub(crate) fn cache_root(&self) -> PathBuf {
        let host = self.github.endpoints().api_host().replace([':', '/'], "_");
        self.data_dir.join("git-cache").join(host)
    }

    /// The agent's command and key, and a sandbox that answers: everything that can
    /// refuse a run before it is recorded.
    pub(crate) async fn agent_setup(
        &self,
        repo: &Repo,
        backend: Option<SandboxBackend>,
        timeout: Option<Duration>,
    ) -> Result<AgentSetup, PipelineError> {
        let (command, key) = agent_command(&repo.agent_preset, repo.agent_command.as_deref())?;
        let mut agent_environment = Vec::new();
        if let Some(key) = key {
            let secret = self
                .secrets
                .get(&SecretName::AgentApiKey {
                    provider: key.provider.to_owned(),
                })
                .await?
                .ok_or_else(|| PipelineError::MissingAgentKey {
                    preset: repo.agent_preset.clone(),
                    provider: key.provider.to_owned(),
                })?;
            agent_environment.push((key.variable.to_owned(), secret));
        }
        let sandbox = self
            .sandbox_for(backend.unwrap_or(repo.sandbox_backend), Some(repo))
            .await?;
        sandbox.preflight().await?;
        Ok(AgentSetup {
            sandbox,
            agent_command: command,
            agent_environment,
            timeout: timeout.unwrap_or(Duration::from_secs(u64::from(repo.run_timeout_seconds))),
        })
    }

    /// A working copy of `branch` at its current tip on GitHub; when the branch does not
    /// exist and `base_for_new` is given, a new `branch` made from that base.
    pub(crate) async fn prepare_working_copy(
        &self,
        setup: &AgentSetup,
        log: &RunLog,
        workspace: &Path,
        repo: &Repo,
        branch: &str,
        base_for_new: Option<&str>,
    ) -> Result<WorkingCopy, Stop> {
        std::fs::create_dir_all(workspace.join("handoff/inputs"))
            .and_then(|()| std::fs::create_dir_all(workspace.join("out")))
            .map_err(|error| Stop::failed("workspace", error.to_string()))?;
        let git = self.host_git();
        log.say(&format!("fetching {} into the cache", repo.name))
            .await?;
        let cache = git
            .update_cache(&self.cache_root(), &repo.name)
            .await
            .map_err(|error| Stop::failed("git_fetch", error.to_string()))?;
        let (checkout, new_branch) = if git.branch_exists(&cache, branch).await {
            (branch.to_owned(), None)
        } else {
            match base_for_new {
                Some(base) if git.branch_exists(&cache, base).await => {
                    (base.to_owned(), Some(branch.to_owned()))
                }
                Some(base) => {
                    return Err(Stop::failed(
                        "no_base_branch",
                        format!("the base branch {base} does not exist on GitHub"),
                    ))
                }
                None => {
                    return Err(Stop::failed(
                        "no_branch",
                        format!(
                            "the branch {branch} is not in {} (a PR from a fork?)",
                            repo.name
                        ),
                    ))
                }
            }
        };
        let in_place = setup.sandbox.works_in_place();
        let start_sha = if in_place {
            git.make_working_copy(
                &cache,
                &workspace.join("repo"),
                &checkout,
                new_branch.as_deref(),
            )
            .await
        } else {
            git.bundle_branch(&cache, &checkout, &workspace.join("handoff/repo.bundle"))
                .await
        }
        .map_err(|error| Stop::failed("git_checkout", error.to_string()))?;
        log.say(&format!(
            "working copy of {branch} at {} ({}{})",
            &start_sha[..start_sha.len().min(12)],
            match &new_branch {
                Some(_) => format!("new, from {checkout}"),
                None => "its current tip".to_owned(),
            },
            if in_place {
                ""
            } else {
                "; made in the sandbox from a bundle"
            }
        ))
        .await?;
        Ok(WorkingCopy {
            cache,
            checkout,
            new_branch,
            start_sha,
            in_place,
        })
    }

    /// Writes the job's files and runs it in the sandbox, recording its log; returns the
    /// `out/` folder. A cancel, a timeout or a non-zero exit stops the run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_agent(
        &self,
        setup: &AgentSetup,
        log: &RunLog,
        workspace: &Path,
        run_id: RunId,
        stage: Stage,
        copy: &WorkingCopy,
        files: JobFiles<'_>,
        cancel: watch::Receiver<bool>,
    ) -> Result<PathBuf, Stop> {
        let store = &self.store;
        let job_script = JobScript {
            run_id,
            clone_from_bundle: (!copy.in_place)
                .then_some((copy.checkout.as_str(), copy.new_branch.as_deref())),
            stage,
            agent_command: &setup.agent_command,
            start_sha: &copy.start_sha,
            git_name: &self.settings.git_name,
            git_email: &self.settings.git_email,
        }
        .render();
        let handoff = workspace.join("handoff");
        let write = |path: PathBuf, text: &str| {
            std::fs::write(path, text).map_err(|error| Stop::failed("workspace", error.to_string()))
        };
        write(handoff.join("prompt.md"), files.prompt)?;
        write(handoff.join("commit-message.txt"), files.commit_message)?;
        write(handoff.join("job.sh"), &job_script)?;
        for (name, text) in files.inputs {
            write(handoff.join("inputs").join(name), text)?;
        }
        let branch = copy.new_branch.as_deref().unwrap_or(&copy.checkout);
        store
            .record_run_start(run_id, branch, &copy.start_sha, files.prompt)
            .await?;

        log.say(&format!(
            "starting the {} sandbox ({} limit)",
            setup.sandbox.backend(),
            humanize(setup.timeout)
        ))
        .await?;
        let (events, receiver) = mpsc::unbounded_channel();
        let recorder = tokio::spawn(record_sandbox_events(store.clone(), run_id, receiver));
        let job = SandboxJob {
            run_id,
            workspace: workspace.to_owned(),
            environment: setup.agent_environment.clone(),
            timeout: setup.timeout,
            limits: self.settings.limits,
        };
        let end = setup.sandbox.run(&job, JobControl { events, cancel }).await;
        let recorded = recorder
            .await
            .map_err(|error| Stop::failed("log", error.to_string()))?;
        recorded?;
        let end = end.map_err(|error| Stop::failed("sandbox", error.to_string()))?;
        let see_log = format!("see its log: `handoff runs logs {run_id}`");
        match end {
            SandboxEnd::Cancelled => Err(Stop::Cancelled),
            SandboxEnd::TimedOut => Err(Stop::failed(
                "timed_out",
                format!(
                    "the run took longer than {} and was stopped; {see_log}",
                    humanize(setup.timeout)
                ),
            )),
            SandboxEnd::Exited(0) => Ok(workspace.join("out")),
            SandboxEnd::Exited(code) => Err(Stop::failed(
                "agent_failed",
                format!("the agent exited with code {code}; {see_log}"),
            )),
        }
    }

    /// Brings the agent's commits back (from `out/changes.bundle`) and pushes them to
    /// `branch`, never forced and never to `protected`. `None` when the agent left no
    /// commit.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn push_agent_commits(
        &self,
        log: &RunLog,
        run_id: RunId,
        out: &Path,
        copy: &WorkingCopy,
        repo: &Repo,
        branch: &str,
        protected: &str,
    ) -> Result<Option<(String, u32)>, Stop> {
        let bundle = out.join("changes.bundle");
        if !bundle.exists() {
            return Ok(None);
        }
        let git = self.host_git();
        let run_ref = format!("refs/handoff/runs/{run_id}");
        let end_sha = git
            .import_bundle(&copy.cache, &bundle, &run_ref)
            .await
            .map_err(|error| Stop::failed("bundle", error.to_string()))?;
        if !git
            .is_ancestor(&copy.cache, &copy.start_sha, &end_sha)
            .await
        {
            return Err(Stop::failed(
                "rewritten_history",
                GitError::RewrittenHistory.to_string(),
            ));
        }
        let commits = git
            .commits_between(&copy.cache, &copy.start_sha, &end_sha)
            .await
            .map_err(|error| Stop::failed("bundle", error.to_string()))?;
        log.say(&format!("pushing {commits} commit(s) to {branch}"))
            .await?;
        git.push(&copy.cache, &repo.name, &run_ref, branch, protected)
            .await
            .map_err(|error| match error {
                GitError::Rejected { .. } => Stop::failed(
                    "push_rejected",
                    format!("{error}; the agent's commits are kept in Handoff's cache as {run_ref}: run again to build on the new tip"),
                ),
                other => Stop::failed("push", other.to_string()),
            })?;
        Ok(Some((end_sha, commits)))
    }
}
