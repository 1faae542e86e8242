//! A code run: the first run of a feedback item (new branch, new PR) or an iterate
//! (same branch, same PR, more commits; I1-I8).
//!
//! [`Pipeline::begin_code_run`] does everything that can refuse a run — the iterate
//! rules, the quota, the agent's key, the sandbox being reachable — before the run is
//! recorded and a unit of quota is spent. [`BegunCodeRun::drive`] then takes it to its
//! end; whatever goes wrong from there is recorded on the run, with the reason and a
//! pointer to its log, and the item leaves CODING.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::agent_presets::agent_command;
use super::host_git::{GitError, HostGit};
use super::job_script::JobScript;
use super::run_log::{record_sandbox_events, RunLog};
use super::run_supervision::supervise;
use super::{Pipeline, PipelineError};
use crate::domain::code_prompt::{code_prompt, CodePromptParts};
use crate::domain::follow_ups_comment::follow_ups_comment_content;
use crate::domain::run_event::{RunEvent, RunEventKind};
use crate::domain::{
    code_run_kind, CodeRunKind, CommentKind, FeedbackId, Repo, Run, RunId, SandboxBackend, Stage,
};
use crate::github::comment_publishing::{publish_agent_output, CommentPlace};
use crate::github::feedback_pull_request::{ensure_feedback_pull_request, PullRequestAction};
use crate::sandbox::{JobControl, Sandbox, SandboxEnd, SandboxJob};
use crate::secrets::{Secret, SecretName};
use crate::store::{CodeRunRequest, RunOutcome, StartedCodeRun, StoreError};

/// What the owner asks for.
#[derive(Debug, Clone, Default)]
pub struct CodeRunOptions {
    /// The sandbox to use (default: the repository's).
    pub backend: Option<SandboxBackend>,
    /// New instructions ("Update PR"); stored as an owner follow-up.
    pub instructions: Option<String>,
    /// The wall-clock limit (default: the repository's).
    pub timeout: Option<Duration>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum CodeRunResult {
    Succeeded {
        pr_number: u64,
        pr_url: String,
        action: PullRequestAction,
        commits: u32,
    },
    Failed {
        code: String,
        message: String,
    },
    Cancelled,
}

/// A run, how it ended, and what the owner is told.
#[derive(Debug, Clone, Serialize)]
pub struct CodeRunReport {
    pub run: Run,
    pub result: CodeRunResult,
    pub events: Vec<RunEvent>,
}

/// A run that was allowed to start and has been recorded.
#[derive(Debug)]
pub struct BegunCodeRun {
    pub started: StartedCodeRun,
    pipeline: Pipeline,
    repo: Repo,
    sandbox: Sandbox,
    agent_command: String,
    agent_environment: Vec<(String, Secret)>,
    timeout: Duration,
}

/// Why a started run did not succeed.
enum Stop {
    Failed { code: &'static str, message: String },
    Cancelled,
}

impl Stop {
    fn failed(code: &'static str, message: impl Into<String>) -> Self {
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

/// What a successful run leaves.
struct Pushed {
    branch: String,
    end_sha: String,
    commits: u32,
    pr_number: u64,
    pr_url: String,
    action: PullRequestAction,
    summary: Option<String>,
    usage: Usage,
}

/// The agent's own account of its cost, if it wrote `out/usage.json`.
#[derive(Debug, Default, serde::Deserialize)]
struct Usage {
    cost_usd: Option<f64>,
    tokens_in: Option<i64>,
    tokens_out: Option<i64>,
}

fn read_optional(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', ""))
        .filter(|text| !text.trim().is_empty())
}

impl Pipeline {
    /// Checks everything that can refuse a run, then records it (status CODING, one unit
    /// of quota). Nothing is spent when this fails.
    pub async fn begin_code_run(
        &self,
        feedback_id: FeedbackId,
        options: CodeRunOptions,
    ) -> Result<BegunCodeRun, PipelineError> {
        if let Some(text) = &options.instructions {
            crate::domain::FollowUpBody::parse("follow-up", text).map_err(StoreError::from)?;
        }
        let feedback = self.store.feedback(feedback_id).await?;
        let repo = self.store.repo(feedback.repo_id).await?;
        code_run_kind(feedback.id, feedback.status).map_err(StoreError::from)?;
        let quota = self.store.quota_status(repo.id, Utc::now()).await?;
        if let (true, Some(limit)) = (quota.is_exhausted(), quota.quota) {
            return Err(StoreError::QuotaExhausted {
                repo: repo.name.full_name(),
                quota: limit,
                used: quota.used,
            }
            .into());
        }
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
        let backend = options.backend.unwrap_or(repo.sandbox_backend);
        let sandbox = self.sandbox_for(backend, Some(&repo)).await?;
        sandbox.preflight().await?;
        let started = self
            .store
            .start_code_run(&CodeRunRequest {
                feedback_id,
                backend,
                agent_preset: repo.agent_preset.clone(),
                instructions: options.instructions.clone(),
            })
            .await?;
        Ok(BegunCodeRun {
            started,
            pipeline: self.clone(),
            timeout: options
                .timeout
                .unwrap_or(Duration::from_secs(u64::from(repo.run_timeout_seconds))),
            repo,
            sandbox,
            agent_command: command,
            agent_environment,
        })
    }

    fn workspace_of(&self, run_id: RunId) -> PathBuf {
        self.data_dir
            .join("workspaces")
            .join(format!("run-{run_id}"))
    }

    fn cache_root(&self) -> PathBuf {
        let host = self.github.endpoints().api_host().replace([':', '/'], "_");
        self.data_dir.join("git-cache").join(host)
    }
}

impl BegunCodeRun {
    pub fn run_id(&self) -> RunId {
        self.started.run.id
    }

    /// Runs to the end and records how it ended. Only a failing store is an error here;
    /// every other failure is the run's result.
    pub async fn drive(self) -> Result<CodeRunReport, PipelineError> {
        let store = self.pipeline.store.clone();
        let run_id = self.run_id();
        let log = RunLog::new(store.clone(), run_id);
        store.mark_run_running(run_id, None).await?;
        let (cancel_sender, cancel) = watch::channel(false);
        let supervision = supervise(
            store.clone(),
            run_id,
            self.pipeline.settings.heartbeat_interval,
            cancel_sender,
        );
        let workspace = self.pipeline.workspace_of(run_id);

        let outcome = self.execute(&log, &workspace, cancel).await;
        drop(supervision);
        if !self.pipeline.settings.keep_workspaces {
            let _ = std::fs::remove_dir_all(&workspace);
        }

        let feedback_id = self.started.run.feedback_id;
        let (result, run_outcome) = match outcome {
            Ok(pushed) => {
                log.say(&format!(
                    "done: {} commit(s) on {}, PR #{} ({})",
                    pushed.commits, pushed.branch, pushed.pr_number, pushed.pr_url
                ))
                .await?;
                (
                    CodeRunResult::Succeeded {
                        pr_number: pushed.pr_number,
                        pr_url: pushed.pr_url.clone(),
                        action: pushed.action,
                        commits: pushed.commits,
                    },
                    RunOutcome::Succeeded {
                        exit_code: Some(0),
                        end_sha: Some(pushed.end_sha),
                        output: pushed.summary,
                        llm_cost_usd: pushed.usage.cost_usd,
                        tokens_in: pushed.usage.tokens_in,
                        tokens_out: pushed.usage.tokens_out,
                    },
                )
            }
            Err(Stop::Failed { code, message }) => {
                log.say(&format!("failed: {message}")).await?;
                (
                    CodeRunResult::Failed {
                        code: code.to_owned(),
                        message: message.clone(),
                    },
                    RunOutcome::Failed {
                        failure_code: code.to_owned(),
                        message,
                        exit_code: None,
                    },
                )
            }
            Err(Stop::Cancelled) => {
                log.say("cancelled by the owner; the sandbox was stopped")
                    .await?;
                (
                    CodeRunResult::Cancelled,
                    RunOutcome::Cancelled {
                        reason: "cancelled by the owner".to_owned(),
                    },
                )
            }
        };
        let run = store.finish_run(run_id, &run_outcome).await?;

        let feedback_title = match feedback_id {
            Some(id) => store.feedback(id).await?.title,
            None => String::new(),
        };
        let mut events = Vec::new();
        match &result {
            CodeRunResult::Succeeded {
                pr_number,
                action,
                commits,
                ..
            } => {
                let opened = if *action == PullRequestAction::Opened {
                    store
                        .record_run_event(
                            run_id,
                            feedback_id,
                            RunEventKind::PullRequestOpened,
                            &format!("PR #{pr_number} opened: {feedback_title}"),
                        )
                        .await?
                } else {
                    None
                };
                match opened {
                    Some(event) => events.push(event),
                    None => events.extend(
                        store
                            .record_run_event(
                                run_id,
                                feedback_id,
                                RunEventKind::PullRequestUpdated,
                                &format!("PR #{pr_number} updated with {commits} commit(s): {feedback_title}"),
                            )
                            .await?,
                    ),
                }
            }
            CodeRunResult::Failed { message, .. } => events.extend(
                store
                    .record_run_event(
                        run_id,
                        feedback_id,
                        RunEventKind::RunFailed,
                        &format!("Run {run_id} failed ({feedback_title}): {message}"),
                    )
                    .await?,
            ),
            CodeRunResult::Cancelled => events.extend(
                store
                    .record_run_event(
                        run_id,
                        feedback_id,
                        RunEventKind::RunFailed,
                        &format!("Run {run_id} was cancelled ({feedback_title})"),
                    )
                    .await?,
            ),
        }
        Ok(CodeRunReport {
            run,
            result,
            events,
        })
    }

    async fn execute(
        &self,
        log: &RunLog,
        workspace: &Path,
        cancel: watch::Receiver<bool>,
    ) -> Result<Pushed, Stop> {
        let store = &self.pipeline.store;
        let run_id = self.run_id();
        let feedback_id = self
            .started
            .run
            .feedback_id
            .ok_or_else(|| Stop::failed("store", "a code run without feedback"))?;
        let feedback = store.feedback(feedback_id).await?;
        let repo = &self.repo;
        let base = repo.default_branch.as_str();
        let head = feedback.head_branch.as_str();
        if head == base {
            return Err(Stop::failed(
                "protected_branch",
                format!("the head branch {head} is the base branch"),
            ));
        }
        let git = HostGit::new(
            &self.pipeline.github.endpoints().web_base,
            self.pipeline.github.token().clone(),
        );
        let see_log = format!("see its log: `handoff runs logs {run_id}`");

        // 1. The working copy: the current tip of the head branch for an iterate (with
        //    whatever the owner pushed by hand), the base branch for a first run.
        std::fs::create_dir_all(workspace.join("handoff/inputs"))
            .and_then(|()| std::fs::create_dir_all(workspace.join("out")))
            .map_err(|error| Stop::failed("workspace", error.to_string()))?;
        log.say(&format!("fetching {} into the cache", repo.name))
            .await?;
        let cache = git
            .update_cache(&self.pipeline.cache_root(), &repo.name)
            .await
            .map_err(|error| Stop::failed("git_fetch", error.to_string()))?;
        let (checkout, new_branch) = if git.branch_exists(&cache, head).await {
            (head, None)
        } else if git.branch_exists(&cache, base).await {
            (base, Some(head))
        } else {
            return Err(Stop::failed(
                "no_base_branch",
                format!("the base branch {base} does not exist on GitHub"),
            ));
        };
        let in_place = self.sandbox.works_in_place();
        let start_sha = if in_place {
            git.make_working_copy(&cache, &workspace.join("repo"), checkout, new_branch)
                .await
        } else {
            git.bundle_branch(&cache, checkout, &workspace.join("handoff/repo.bundle"))
                .await
        }
        .map_err(|error| Stop::failed("git_checkout", error.to_string()))?;
        log.say(&format!(
            "working copy of {head} at {} ({}{})",
            &start_sha[..start_sha.len().min(12)],
            if new_branch.is_some() {
                format!("new, from {base}")
            } else {
                "its current tip".to_owned()
            },
            if in_place {
                ""
            } else {
                "; made in the sandbox from a bundle"
            }
        ))
        .await?;

        // 2. The prompt (I4) and the job.
        let follow_ups = store.follow_ups(feedback.id).await?;
        let kind = self.started.kind;
        let prompt = code_prompt(CodePromptParts {
            feedback: &feedback,
            follow_ups: &follow_ups,
            custom_instructions: &repo.custom_instructions,
            kind,
            base_branch: base,
        });
        let newest = follow_ups.iter().rev().find(|f| f.included_in_prompts);
        let commit_message = match (kind, newest) {
            (CodeRunKind::First, _) | (_, None) => {
                format!(
                    "{}\n\nHandoff feedback {}, run {run_id}.\n",
                    feedback.title, feedback.public_id
                )
            }
            (_, Some(follow_up)) => format!(
                "{}\n\nFollow-up: {}\n\nHandoff feedback {}, run {run_id}.\n",
                feedback.title,
                follow_up.body.lines().next().unwrap_or_default(),
                feedback.public_id
            ),
        };
        let job_script = JobScript {
            run_id,
            clone_from_bundle: (!in_place).then_some((checkout, new_branch)),
            stage: Stage::Code,
            agent_command: &self.agent_command,
            start_sha: &start_sha,
            git_name: &self.pipeline.settings.git_name,
            git_email: &self.pipeline.settings.git_email,
        }
        .render();
        for (name, text) in [
            ("prompt.md", prompt.as_str()),
            ("commit-message.txt", commit_message.as_str()),
            ("job.sh", job_script.as_str()),
        ] {
            std::fs::write(workspace.join("handoff").join(name), text)
                .map_err(|error| Stop::failed("workspace", error.to_string()))?;
        }
        store
            .record_run_start(run_id, head, &start_sha, &prompt)
            .await?;

        // 3. The sandbox.
        log.say(&format!(
            "starting the {} sandbox ({} limit)",
            self.sandbox.backend(),
            humanize(self.timeout)
        ))
        .await?;
        let (events, receiver) = mpsc::unbounded_channel();
        let recorder = tokio::spawn(record_sandbox_events(store.clone(), run_id, receiver));
        let job = SandboxJob {
            run_id,
            workspace: workspace.to_owned(),
            environment: self.agent_environment.clone(),
            timeout: self.timeout,
            limits: self.pipeline.settings.limits,
        };
        let end = self.sandbox.run(&job, JobControl { events, cancel }).await;
        let recorded = recorder
            .await
            .map_err(|error| Stop::failed("log", error.to_string()))?;
        recorded?;
        let end = end.map_err(|error| Stop::failed("sandbox", error.to_string()))?;
        match end {
            SandboxEnd::Cancelled => return Err(Stop::Cancelled),
            SandboxEnd::TimedOut => {
                return Err(Stop::failed(
                    "timed_out",
                    format!(
                        "the run took longer than {} and was stopped; {see_log}",
                        humanize(self.timeout)
                    ),
                ))
            }
            SandboxEnd::Exited(0) => {}
            SandboxEnd::Exited(code) => {
                return Err(Stop::failed(
                    "agent_failed",
                    format!("the agent exited with code {code}; {see_log}"),
                ))
            }
        }

        // 4. Its commits (P6: none is a loud failure), checked, then pushed from here.
        let out = workspace.join("out");
        let bundle = out.join("changes.bundle");
        if !bundle.exists() {
            return Err(Stop::failed(
                "no_changes",
                format!("the agent changed nothing; {see_log}"),
            ));
        }
        let run_ref = format!("refs/handoff/runs/{run_id}");
        let end_sha = git
            .import_bundle(&cache, &bundle, &run_ref)
            .await
            .map_err(|error| Stop::failed("bundle", error.to_string()))?;
        if !git.is_ancestor(&cache, &start_sha, &end_sha).await {
            return Err(Stop::failed(
                "rewritten_history",
                GitError::RewrittenHistory.to_string(),
            ));
        }
        let commits = git
            .commits_between(&cache, &start_sha, &end_sha)
            .await
            .map_err(|error| Stop::failed("bundle", error.to_string()))?;
        log.say(&format!("pushing {commits} commit(s) to {head}"))
            .await?;
        git.push(&cache, &repo.name, &run_ref, head, base).await.map_err(|error| match error {
            GitError::Rejected { .. } => Stop::failed(
                "push_rejected",
                format!("{error}; the agent's commits are kept in Handoff's cache as {run_ref}: run again to build on the new tip"),
            ),
            other => Stop::failed("push", other.to_string()),
        })?;

        // 5. The PR (never a second one) and its Follow-ups comment (I5, I6).
        let github = &self.pipeline.github;
        let feedback = store.feedback(feedback.id).await?;
        let (pull, action) = ensure_feedback_pull_request(github, store, repo, &feedback)
            .await
            .map_err(|error| Stop::failed("pull_request", error.to_string()))?;
        log.say(&format!(
            "PR #{} {}",
            pull.number,
            match action {
                PullRequestAction::Opened => "opened",
                PullRequestAction::Kept => "updated",
                PullRequestAction::Reopened => "reopened and updated",
                PullRequestAction::Replaced =>
                    "opened in place of the one that could not be reopened",
            }
        ))
        .await?;
        if let Some(content) = follow_ups_comment_content(&store.follow_ups(feedback.id).await?) {
            let place = CommentPlace {
                repo,
                pr_number: pull.number,
                kind: CommentKind::FollowUps,
            };
            if let Err(error) =
                publish_agent_output(github, store, place, &content, Some(run_id), Some(head)).await
            {
                let note = format!("the Follow-ups comment could not be updated: {error}");
                log.say(&format!("warning: {note}")).await?;
                store.add_run_note(run_id, &note).await?;
            }
        }
        let usage = read_optional(&out.join("usage.json"))
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Ok(Pushed {
            branch: head.to_owned(),
            end_sha,
            commits,
            pr_number: pull.number,
            pr_url: pull.html_url,
            action,
            summary: read_optional(&out.join("summary.md")),
            usage,
        })
    }
}

/// `90 s`, `30 min`, `2 h`.
fn humanize(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 120 {
        format!("{seconds} s")
    } else if seconds < 2 * 3600 {
        format!("{} min", seconds / 60)
    } else {
        format!("{} h", seconds / 3600)
    }
}
