//! The steps every agent run shares, whatever its stage: the agent and its sandbox made
//! ready before anything is spent; a working copy of a branch from the cache; the job
//! (prompt, inputs, commit message, script) run in the sandbox with its log recorded.
//! Bringing the agent's commits back and pushing them is [`super::agent_push`].
//!
//! - this file: what a job is made of ([`AgentJob`], [`AgentSetup`], [`CopyStart`],
//!   [`WorkingCopy`], [`JobFiles`]) and the agent and sandbox made ready;
//! - [`working_copy`]: the working copy, fresh from the cache or the item's kept one;
//! - [`running`]: the job run in the sandbox, and how it ended;
//! - [`job_spend`]: the job's budget before it runs, and what it spent after.

mod job_spend;
mod reported_metering;
mod running;
mod working_copy;

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use super::agent_usage::AgentUsage;
use super::host_git::HostGit;
use super::job_script::AGENT_OUTPUT_TAIL;
use super::kept_copy::{CopySteps, KeptCopy};
use super::run_log::RunLog;
use super::{Pipeline, PipelineError};
use crate::domain::agent_presets::AgentChoice;
use crate::domain::RunFailureCode;
use crate::domain::{Repo, RepoName, RunId, SandboxBackend, Stage};
use crate::sandbox::key_forwarding::{ForwardedKey, ModelEndpoint};
use crate::sandbox::plan_token_rules::PlanTokenRules;
use crate::sandbox::until_cancelled;
use crate::sandbox::Sandbox;
use crate::secrets::Redactor;
use crate::service_address::check_secret_address;
use crate::setup_check::{self, CheckStatus};
use crate::store::{RunOutcome, StoreError};

/// `step`, unless the owner cancels first: the step is then dropped (a git process it
/// started is killed with it) and the run ends as cancelled. For what a run does outside
/// the sandbox: fetching, pushing, opening the PR.
pub(crate) async fn unless_cancelled<T>(
    cancel: &watch::Receiver<bool>,
    step: impl std::future::Future<Output = Result<T, Stop>>,
) -> Result<T, Stop> {
    let mut cancel = cancel.clone();
    tokio::select! {
        // An early cancel wins over a step that is ready at once.
        biased;
        () = until_cancelled(&mut cancel) => Err(Stop::Cancelled),
        result = step => result,
    }
}

/// Why a started run did not succeed.
pub(crate) enum Stop {
    Failed {
        code: RunFailureCode,
        message: String,
    },
    Cancelled,
}

impl Stop {
    /// Says in the run's log why the job stopped, and gives the outcome to record.
    pub(crate) async fn logged_outcome(&self, log: &RunLog) -> Result<RunOutcome, StoreError> {
        Ok(match self {
            Stop::Failed { code, message } => {
                log.say(&format!("failed: {message}")).await?;
                RunOutcome::Failed {
                    failure_code: *code,
                    message: log.redactor().redact(message),
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

    pub(crate) fn failed(code: RunFailureCode, message: impl Into<String>) -> Self {
        Stop::Failed {
            code,
            message: message.into(),
        }
    }
}

impl From<StoreError> for Stop {
    fn from(error: StoreError) -> Self {
        Stop::failed(RunFailureCode::Store, error.to_string())
    }
}

/// The agent and its sandbox, checked and ready.
#[derive(Debug, Clone)]
pub(crate) struct AgentSetup {
    pub sandbox: Sandbox,
    pub agent: AgentChoice,
    /// The agent's API key, kept out of the sandbox (each job gets its own placeholder).
    pub agent_key: Option<ForwardedKey>,
    pub timeout: Duration,
    /// Every secret of the run (the agent's key, the GitHub token, the E2B key), to scrub
    /// out of whatever the run stores or shows.
    pub redactor: Redactor,
}

impl AgentSetup {
    /// A file of the run's `out/` folder as text ([`read_optional`]), with every secret
    /// of the run scrubbed out: the agent's output is published and stored.
    pub fn read_output(&self, path: &Path) -> Option<String> {
        read_optional(path).map(|text| self.redactor.redact(&text))
    }

    /// What the agent spent, from the run's `out/` folder `out`: its `usage.json` if it
    /// wrote one, else its own report at the end of its output; unknown when neither
    /// says (see [`crate::pipeline::agent_usage`]).
    pub fn agent_usage(&self, out: &Path, run_id: RunId) -> AgentUsage {
        if let Some(text) = self.read_output(&out.join("usage.json")) {
            match AgentUsage::from_usage_file(&text) {
                Ok(usage) => return usage,
                Err(error) => {
                    tracing::warn!(run = %run_id, %error, "the agent's usage.json cannot be read");
                }
            }
        }
        let usage = self
            .read_output(&out.join(AGENT_OUTPUT_TAIL))
            .and_then(|tail| AgentUsage::from_agent_output(&tail))
            .unwrap_or_default();
        if !usage.is_known() {
            tracing::info!(run = %run_id, "the agent reported no tokens or cost");
        }
        usage
    }
}

/// Where a run's working copy starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CopyStart<'a> {
    /// The current tip of `branch` on GitHub. When the branch is gone: a new `branch`
    /// from the last head of `pull_request` if it had one (so earlier runs' commits are
    /// kept), else from `base_for_new` when given.
    Branch {
        branch: &'a str,
        base_for_new: Option<&'a str>,
        pull_request: Option<u64>,
        /// The fork the branch lives in, when not the repository itself.
        in_fork: Option<&'a RepoName>,
        /// Where an earlier run stopped unfinished (its budget spent): the copy goes on
        /// from its commits when the branch has not moved since.
        resume: Option<&'a UnfinishedWork>,
    },
    /// A pull request's own head as GitHub keeps it (`refs/pull/N/head`), whatever
    /// repository its branch lives in; the working copy's branch is named `branch`.
    PullRequestHead { number: u64, branch: &'a str },
}

/// The commits an earlier run of the item left when its budget stopped it, kept in
/// the cache for a retry to go on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnfinishedWork {
    pub run_id: RunId,
    /// Where that run started (the branch's tip then).
    pub start_sha: String,
    /// Its last commit, in the cache as [`unfinished_work_ref`].
    pub end_sha: String,
}

/// Where a run's unfinished commits wait in the repository's cache.
pub(crate) fn unfinished_work_ref(run_id: RunId) -> String {
    format!("refs/handoff/runs/{run_id}")
}

/// A working copy made for a run.
#[derive(Debug, Clone)]
pub(crate) struct WorkingCopy {
    pub cache: PathBuf,
    /// The branch checked out in the copy.
    pub branch: String,
    /// Where the run starts on the branch: what its commits are counted and pushed
    /// from.
    pub start_sha: String,
    /// The commit checked out: `start_sha`, or an earlier unfinished run's last commit
    /// that this run goes on from.
    pub checkout_sha: String,
    /// How the sandbox makes the copy, or brings the kept one to `checkout_sha`.
    pub steps: CopySteps,
    /// The feedback item's copy kept between its runs, when this run uses one.
    pub kept: Option<KeptCopy>,
    /// What the owner should know about how the copy was made.
    pub note: Option<String>,
}

/// What the sandbox is given besides the working copy.
pub(crate) struct JobFiles<'a> {
    pub prompt: &'a str,
    pub commit_message: &'a str,
    /// Files for `handoff/inputs/` (name, text).
    pub inputs: &'a [(String, String)],
}

/// One agent job of a run: what each of its steps needs.
#[derive(Clone, Copy)]
pub(crate) struct AgentJob<'a> {
    pub setup: &'a AgentSetup,
    pub log: &'a RunLog,
    /// The run's workspace on the host (`handoff/`, `out/`, the working copy).
    pub workspace: &'a Path,
    pub repo: &'a Repo,
    pub run_id: RunId,
    pub stage: Stage,
    pub cancel: &'a watch::Receiver<bool>,
    /// Why the tree or the prompt holds what someone other than the owner wrote, when it
    /// does: the job never runs on the local backend then, and the agent starts with the
    /// tree's own agent configuration switched off.
    pub strangers_work: Option<&'a str>,
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

    /// A single run's checks before it is recorded: a unit of `repo`'s quota and room
    /// in its budgets left, then [`Pipeline::agent_setup`]. (A full-auto chain checks
    /// the units and budgets of all its stages instead.)
    pub(crate) async fn one_runs_setup(
        &self,
        repo: &Repo,
        backend: Option<SandboxBackend>,
        timeout: Option<Duration>,
    ) -> Result<AgentSetup, PipelineError> {
        self.store.spend().check_quota_left(repo, 1).await?;
        self.store.spend().check_budget_left(repo, None).await?;
        self.agent_setup(repo, backend, timeout).await
    }

    /// The agent's command and key, and a sandbox that answers: everything that can
    /// refuse a run before it is recorded. A missing key, a Docker engine that does not
    /// answer or an image that is not there refuse the run with the line Check setup
    /// shows for it.
    pub(crate) async fn agent_setup(
        &self,
        repo: &Repo,
        backend: Option<SandboxBackend>,
        timeout: Option<Duration>,
    ) -> Result<AgentSetup, PipelineError> {
        if repo.disconnected_at.is_some() {
            return Err(PipelineError::RepoDisconnected(repo.name.full_name()));
        }
        let agent = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref())?;
        let agent_key = self.agent_key_for(repo, &agent).await?;
        let backend = backend.unwrap_or(repo.sandbox_backend);
        // The local backend is a development choice the owner confirms per repository
        // (when setting it); a single run cannot choose it for a repository set otherwise.
        if backend == SandboxBackend::Local && repo.sandbox_backend != SandboxBackend::Local {
            return Err(PipelineError::LocalNotConfirmed {
                repo: repo.name.full_name(),
            });
        }
        let sandbox = self.sandbox_for(backend, Some(repo)).await?;
        self.check_sandbox_ready(repo, &sandbox).await?;
        sandbox.preflight().await?;
        let redactor = Redactor::new(
            agent_key
                .iter()
                .map(|key| &key.secret)
                .chain([self.github.token()])
                .chain(sandbox.own_secret()),
        );
        Ok(AgentSetup {
            sandbox,
            agent,
            agent_key,
            timeout: timeout.unwrap_or(Duration::from_secs(u64::from(repo.run_timeout_seconds))),
            redactor,
        })
    }

    /// The key `agent` runs with in `repo`, forwarded so that the sandbox holds only a
    /// placeholder; none for an agent that needs none. Missing or refused, it is a setup
    /// step to finish.
    async fn agent_key_for(
        &self,
        repo: &Repo,
        agent: &AgentChoice,
    ) -> Result<Option<ForwardedKey>, PipelineError> {
        let key_line = setup_check::agent_key(&self.secrets, &self.settings, repo, agent).await;
        if key_line.status == CheckStatus::Failure {
            return Err(PipelineError::SetupIncomplete(key_line));
        }
        // Claude Code pays with the owner's Claude plan when a plan token is kept, and
        // with the API key otherwise; no other agent may carry the plan's token.
        let plan_token = match agent.plan_key() {
            Some(plan_key) => self
                .settings
                .claude_plan_token(&self.secrets)
                .await?
                .map(|token| (plan_key, token)),
            None => None,
        };
        let chosen = match plan_token {
            Some((plan_key, token)) => Some((plan_key, token, true)),
            None => match agent.api_key() {
                Some(key) => Some((
                    key,
                    self.settings
                        .agent_key(&self.secrets, key.provider)
                        .await?
                        .ok_or_else(|| PipelineError::SetupIncomplete(key_line.clone()))?,
                    false,
                )),
                None => None,
            },
        };
        if let Some((key, secret, is_plan_token)) = chosen {
            let upstream = self.settings.provider_api_base(key);
            if let Err(refusal) = check_secret_address(&upstream) {
                return Err(PipelineError::SetupIncomplete(
                    setup_check::provider_address_refused(repo, key.provider, &refusal.to_string()),
                ));
            }
            let forwarded = ForwardedKey::new(
                key.variable,
                key.base_address_variables,
                key.base_path,
                key.header.name,
                key.header.prefix,
                key.api_host,
                &upstream,
                ModelEndpoint::list(key.model_endpoints),
                secret,
            );
            return Ok(Some(if is_plan_token {
                forwarded.with_plan_rules(PlanTokenRules::claude_code())
            } else {
                forwarded
            }));
        }
        Ok(None)
    }

    /// Refuses a run whose sandbox is not ready: Docker without its engine, the image or
    /// (with a network) the egress gate; E2B without a reachable address or its key.
    async fn check_sandbox_ready(
        &self,
        repo: &Repo,
        sandbox: &Sandbox,
    ) -> Result<(), PipelineError> {
        match sandbox {
            Sandbox::Docker(docker) => {
                let (engine_line, engine) = setup_check::docker_engine().await;
                let Some(engine) = engine else {
                    return Err(PipelineError::SetupIncomplete(engine_line));
                };
                let (_, preset) = self.docker_image_of(repo);
                let image_line =
                    setup_check::docker_image(&engine, docker.image(), preset.as_deref()).await;
                if image_line.status == CheckStatus::Failure {
                    return Err(PipelineError::SetupIncomplete(image_line));
                }
                if repo.network_mode != crate::domain::NetworkMode::None {
                    let gate_line = setup_check::egress_gate(&engine).await;
                    if gate_line.status == CheckStatus::Failure {
                        return Err(PipelineError::SetupIncomplete(gate_line));
                    }
                }
            }
            Sandbox::E2b(e2b) => {
                if let Err(refusal) = self.settings.e2b.check_addresses() {
                    return Err(PipelineError::SetupIncomplete(
                        setup_check::e2b_address_refused(&refusal),
                    ));
                }
                if e2b.api_key().is_none() {
                    return Err(PipelineError::SetupIncomplete(
                        setup_check::e2b_key_missing(&self.settings.e2b.api_host()),
                    ));
                }
            }
            Sandbox::Local(_) => {}
        }
        Ok(())
    }
}
