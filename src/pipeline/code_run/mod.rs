//! A code run: the first run of a feedback item (new branch, new PR) or an iterate
//! (same branch, same PR, more commits).
//!
//! [`Pipeline::begin_code_run`] does everything that can refuse a run — the owner's
//! approval of an item a visitor opened, the iterate rules, the quota, the agent's key,
//! the sandbox being reachable — before the run is recorded and a unit of quota is
//! spent. [`BegunCodeRun::drive`] then takes it to its
//! end; whatever goes wrong from there is recorded on the run, with the reason and a
//! pointer to its log, and the item leaves CODING.

mod ending;

use ending::{record_end_events, result_and_outcome};

use crate::pipeline::handles::CodeRuns;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tracing::Instrument as _;

use super::agent_job::{
    unless_cancelled, AgentJob, AgentSetup, CopyStart, JobFiles, Stop, WorkingCopy,
};
use super::agent_push::{PushTo, PushedCommits};
use super::queue_wait::QueueWaitEnd;
use super::reconcile::end_a_run_whose_driving_failed;
use super::run_log::RunLog;
use super::run_supervision::supervise;
use super::{Pipeline, PipelineError};
use crate::domain::code_prompt::{code_commit_message, code_prompt, CodePromptParts};
use crate::domain::follow_ups_comment::follow_ups_comment_content;
use crate::domain::run_event::{RunEvent, RunEventKind};
use crate::domain::RunFailureCode;
use crate::domain::{
    code_run_kind, CommentKind, Feedback, FeedbackId, Repo, Run, RunId, SandboxBackend, Stage,
};
use crate::github::comment_publishing::{publish_agent_output, CommentPlace};
use crate::github::feedback_pull_request::{ensure_feedback_pull_request, PullRequestAction};
use crate::github::review_requests::ask_for_labels_and_reviews;
use crate::github::wire::WirePull;
use crate::store::Store;
use crate::store::{AutomaticStart, CodeRunRequest, RunOutcome, StartedCodeRun, StoreError};

/// What the owner asks for.
#[derive(Debug, Clone, Default)]
pub struct CodeRunOptions {
    /// The sandbox to use (default: the repository's).
    pub backend: Option<SandboxBackend>,
    /// New instructions ("Update PR"); stored as an owner follow-up.
    pub instructions: Option<String>,
    /// The wall-clock limit (default: the repository's).
    pub timeout: Option<Duration>,
    /// An automatic update: why it starts, and the reasons and candidates it answers
    /// (its `instructions` are then Handoff's, not the owner's).
    pub automatic: Option<AutomaticStart>,
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
        code: RunFailureCode,
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
    setup: AgentSetup,
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
}

impl CodeRuns<'_> {
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
        let feedback = self.pipeline.store.feedback().feedback(feedback_id).await?;
        let repo = self
            .pipeline
            .store
            .repositories()
            .repo(feedback.repo_id)
            .await?;
        code_run_kind(feedback.id, feedback.status).map_err(StoreError::from)?;
        if let Some(state) = feedback.archived_as {
            return Err(StoreError::ItemArchived {
                feedback_id: feedback.id,
                state,
            }
            .into());
        }
        if feedback.awaits_owner_approval() {
            return Err(PipelineError::FeedbackAwaitsApproval {
                feedback_id: feedback.id,
                author: feedback.github_issue_author.clone().unwrap_or_default(),
            });
        }
        // An item a visitor opened steers the agent with someone else's words, and a
        // branch may hold someone else's commits: with no isolation, whatever that makes
        // the agent run would run as the owner.
        if options.backend.unwrap_or(repo.sandbox_backend) == SandboxBackend::Local {
            if let Some(why) = self
                .pipeline
                .strangers_part_in_code_run(&repo, feedback.id, feedback.pr_number)
                .await?
            {
                return Err(PipelineError::StrangersCodeNeedsSandbox {
                    what: format!("a run of feedback {} ({why})", feedback.id),
                });
            }
        }
        let setup = self
            .pipeline
            .one_runs_setup(&repo, options.backend, options.timeout)
            .await?;
        let backend = setup.sandbox.backend();
        let started = self
            .pipeline
            .store
            .runs()
            .start_code_run_as(
                &CodeRunRequest {
                    feedback_id,
                    backend,
                    agent_preset: repo.agent_preset.clone(),
                    instructions: options.instructions.clone(),
                },
                options.automatic.as_ref(),
            )
            .await?;
        Ok(BegunCodeRun {
            started,
            pipeline: self.pipeline.clone(),
            repo,
            setup,
        })
    }
}

impl Pipeline {
    /// A queued code run made again from its record: its process stopped while it
    /// waited. What could refuse it was checked when it was begun.
    pub(crate) async fn resume_code_run(&self, run: Run) -> Result<BegunCodeRun, PipelineError> {
        let repo = self.store.repositories().repo(run.repo_id).await?;
        let kind = run
            .code_run_kind
            .ok_or_else(|| StoreError::Corrupt(format!("code run {} without its kind", run.id)))?;
        let quota = self
            .store
            .spend()
            .quota_status(repo.id, self.store.now())
            .await?;
        let setup = self.agent_setup(&repo, Some(run.backend), None).await?;
        Ok(BegunCodeRun {
            started: StartedCodeRun { run, kind, quota },
            pipeline: self.clone(),
            repo,
            setup,
        })
    }
}

impl BegunCodeRun {
    pub fn run_id(&self) -> RunId {
        self.started.run.id
    }

    /// Runs to the end and records how it ended. Only a failing store is an error here;
    /// every other failure is the run's result. When driving itself fails, the run is
    /// ended as failed at once (and says so), not left running until a restart.
    pub async fn drive(self) -> Result<CodeRunReport, PipelineError> {
        // Every line the run logs carries its id.
        let span = tracing::info_span!("run", run = %self.run_id());
        self.drive_in_its_span().instrument(span).await
    }

    async fn drive_in_its_span(self) -> Result<CodeRunReport, PipelineError> {
        let store = self.pipeline.store.clone();
        let run_id = self.run_id();
        let feedback_id = self.started.run.feedback_id;
        let pipeline = self.pipeline.clone();
        let driven = self.drive_to_the_end().await;
        if let Err(error) = &driven {
            end_a_run_whose_driving_failed(&store, run_id, feedback_id, error).await;
        }
        // Kept working copies of items merged meanwhile, or unused too long, go.
        if let Err(error) = pipeline.kept_copies().prune_kept_copies().await {
            tracing::warn!(run = %run_id, %error, "the kept working copies could not be pruned");
        }
        driven
    }

    async fn drive_to_the_end(mut self) -> Result<CodeRunReport, PipelineError> {
        let store = self.pipeline.store.clone();
        let run_id = self.run_id();
        let pipeline = self.pipeline.clone();
        if pipeline
            .wait_for_turn(run_id, &self.repo, &mut self.setup)
            .await?
            == QueueWaitEnd::Cancelled
        {
            return Ok(CodeRunReport {
                run: store.runs().run(run_id).await?,
                result: CodeRunResult::Cancelled,
                events: Vec::new(),
            });
        }
        let log = RunLog::new(store.clone(), run_id, self.setup.redactor.clone());
        store.runs().mark_run_running(run_id, None).await?;
        let (cancel_sender, cancel) = watch::channel(false);
        let supervision = supervise(
            store.clone(),
            run_id,
            self.pipeline.settings.heartbeat_interval,
            std::sync::Arc::new(cancel_sender),
        );
        let workspace = self.pipeline.workspace_of(run_id);

        let outcome = self.execute(&log, &workspace, cancel).await;
        self.setup.sandbox.teardown_done(run_id).await;
        drop(supervision);
        if !self.pipeline.settings.keep_workspaces {
            if let Err(error) = std::fs::remove_dir_all(&workspace) {
                tracing::warn!(run = %run_id, workspace = %workspace.display(), %error, "the run's workspace could not be removed");
            }
        }

        let feedback_id = self.started.run.feedback_id;
        let (result, run_outcome) = result_and_outcome(&log, outcome).await?;
        let run = store.runs().finish_run(run_id, &run_outcome).await?;

        let events = record_end_events(&store, run_id, feedback_id, &result).await?;
        Ok(CodeRunReport {
            run,
            result,
            events,
        })
    }

    /// The agent's prompt for `feedback` and its follow-ups, and the message of the
    /// commit it makes.
    async fn prompt_and_commit_message(
        &self,
        feedback: &Feedback,
    ) -> Result<(String, String), Stop> {
        let repo = &self.repo;
        let follow_ups = self
            .pipeline
            .store
            .feedback()
            .follow_ups(feedback.id)
            .await?;
        let kind = self.started.kind;
        let prompt = code_prompt(CodePromptParts {
            feedback,
            follow_ups: &follow_ups,
            custom_instructions: &repo.custom_instructions,
            kind,
            base_branch: &repo.default_branch,
        });
        let commit_message = code_commit_message(feedback, &follow_ups, kind, self.run_id());
        Ok((prompt, commit_message))
    }

    /// The agent's commits, checked, then pushed from here to the item's head branch
    /// (never the base). None is a loud failure.
    async fn push_the_commits(
        &self,
        log: &RunLog,
        cancel: &watch::Receiver<bool>,
        feedback: &Feedback,
        copy: &WorkingCopy,
        out: &Path,
    ) -> Result<PushedCommits, Stop> {
        let (repo, run_id) = (&self.repo, self.run_id());
        let pushed = unless_cancelled(
            cancel,
            self.pipeline.push_agent_commits(
                log,
                run_id,
                out,
                copy,
                repo,
                PushTo {
                    repository: repo.head_repository(),
                    branch: &feedback.head_branch,
                    protected: &[repo.default_branch.as_str()],
                    ci_changes_wait_for_owner: feedback.opened_by_visitor,
                },
            ),
        )
        .await?;
        pushed.ok_or_else(|| {
            Stop::failed(
                RunFailureCode::NoChanges,
                format!("the agent changed nothing; see the log of run {run_id}"),
            )
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
        let feedback_id =
            self.started.run.feedback_id.ok_or_else(|| {
                Stop::failed(RunFailureCode::Store, "a code run without feedback")
            })?;
        let feedback = store.feedback().feedback(feedback_id).await?;
        let repo = &self.repo;
        let base = repo.default_branch.as_str();
        let head = feedback.head_branch.as_str();
        if head == base {
            return Err(Stop::failed(
                RunFailureCode::ProtectedBranch,
                format!("the head branch {head} is the base branch"),
            ));
        }
        let pipeline = &self.pipeline;

        // 1. The prompt.
        let (prompt, commit_message) = self.prompt_and_commit_message(&feedback).await?;

        // 2. The working copy — the current tip of the head branch for an iterate (with
        //    whatever the owner pushed by hand), the base branch for a first run, and the
        //    PR's last head when its branch was deleted; the item's kept copy when it has
        //    one, brought to that tip — and the job, run in the sandbox. A kept copy that
        //    cannot be brought to the tip (the agent did not run) is dropped, and the job
        //    starts once more from a fresh copy. What of the tree is someone else's is
        //    asked again now that the run's turn came (the branch may have moved while
        //    it waited): such a tree never runs on the local backend, and in a sandbox
        //    its own agent configuration is switched off.
        let strangers = pipeline
            .strangers_part_in_code_run(repo, feedback.id, feedback.pr_number)
            .await
            .map_err(|error| Stop::failed(RunFailureCode::Github, error.to_string()))?;
        let job = AgentJob {
            setup: &self.setup,
            log,
            workspace,
            repo,
            run_id,
            stage: Stage::Code,
            cancel: &cancel,
            strangers_work: strangers.as_deref(),
        };
        let (copy, out) = self
            .run_the_agent(&job, &feedback, &prompt, &commit_message)
            .await?;

        // 3. Its commits (none is a loud failure), checked, then pushed from here.
        let PushedCommits {
            end_sha,
            commits,
            ci_entry_points,
        } = self
            .push_the_commits(log, &cancel, &feedback, &copy, &out)
            .await?;

        // 4. The PR (never a second one) and its Follow-ups comment.
        let (pull, action) = self
            .make_sure_of_the_pull_request(log, &cancel, feedback.id, &ci_entry_points)
            .await?;
        Ok(Pushed {
            branch: head.to_owned(),
            end_sha,
            commits,
            pr_number: pull.number,
            pr_url: pull.html_url,
            action,
            summary: self.setup.read_output(&out.join("summary.md")),
        })
    }

    /// The working copy — the current tip of the head branch for an iterate (with
    /// whatever the owner pushed by hand), the base branch for a first run, and the PR's
    /// last head when its branch was deleted; the item's kept copy when it has one,
    /// brought to that tip — and the job, run in the sandbox. A kept copy that cannot be
    /// brought to the tip (the agent did not run) is dropped, and the job starts once
    /// more from a fresh copy. Returns the copy and the job's `out/`.
    async fn run_the_agent(
        &self,
        job: &AgentJob<'_>,
        feedback: &Feedback,
        prompt: &str,
        commit_message: &str,
    ) -> Result<(WorkingCopy, PathBuf), Stop> {
        let AgentJob {
            log,
            workspace,
            repo,
            run_id,
            cancel,
            ..
        } = *job;
        let store = &self.pipeline.store;
        let pipeline = &self.pipeline;
        let base = repo.default_branch.as_str();
        let head = feedback.head_branch.as_str();
        let mut fresh_copy_tried = false;
        // A retry after a run stopped by its budget goes on from that run's commits.
        let unfinished = pipeline.unfinished_work_of(feedback.id).await?;
        loop {
            let copy = unless_cancelled(
                cancel,
                pipeline.prepare_working_copy(
                    job,
                    CopyStart::Branch {
                        branch: head,
                        base_for_new: Some(base),
                        pull_request: feedback.pr_number,
                        in_fork: repo.push_fork.as_ref(),
                        resume: unfinished.as_ref(),
                    },
                    Some(feedback.id),
                ),
            )
            .await?;
            if let Some(note) = copy.note.as_deref().filter(|_| !fresh_copy_tried) {
                store.runs().add_run_note(run_id, note).await?;
            }
            let ran = pipeline
                .run_agent(
                    job,
                    &copy,
                    JobFiles {
                        prompt,
                        commit_message,
                        inputs: &[],
                    },
                )
                .await;
            match (ran, &copy.kept) {
                (
                    Err(Stop::Failed {
                        code: RunFailureCode::KeptCopyUnusable,
                        ..
                    }),
                    Some(kept),
                ) if !fresh_copy_tried => {
                    fresh_copy_tried = true;
                    let note = "the item's kept working copy could not be brought to the branch's tip; it was dropped and the run started again from a fresh copy";
                    log.say(&format!("note: {note}")).await?;
                    store.runs().add_run_note(run_id, note).await?;
                    if let Err(error) = pipeline
                        .drop_kept_copy(kept, Some(&self.setup.sandbox))
                        .await
                    {
                        tracing::warn!(run = %run_id, %error, "the unusable kept copy could not be removed");
                    }
                    reset_output_folder(workspace)?;
                }
                (ran, _) => return Ok((copy, ran?)),
            }
        }
    }
}

/// Empties a run's `out/` for a second start of its job.
fn reset_output_folder(workspace: &Path) -> Result<(), Stop> {
    let out = workspace.join("out");
    std::fs::remove_dir_all(&out)
        .and_then(|()| std::fs::create_dir_all(&out))
        .map_err(|error| Stop::failed(RunFailureCode::Workspace, error.to_string()))
}
