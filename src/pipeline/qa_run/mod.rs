//! The QA stages on a PR: `review` posts a code review; `plan` a test plan built on the
//! review as it is on GitHub now; `test` runs exactly the current plan, files an issue
//! per failing scenario, stores the results and posts a summary; `fix` reads the stored
//! results (not a comment) and pushes fixes to the PR's branch; `full-auto` chains them
//! without pausing.
//!
//! This file holds what every stage shares: what can refuse a run before anything is
//! spent, the run (or the chain) from start to end — a chain reserves the quota its
//! stages need before the first sandbox starts, gives back what it did not use, and is
//! ended on every way out — and the steps of a stage's job (its working copy, its
//! prompt, its agent). Each stage's inputs and outputs are in a file of its own:
//! [`review`], [`plan`], [`test`], [`fix`].
//!
//! What the owner corrected is what the next stage gets: comments are read back from
//! GitHub, without their marker, header and time line. A missing input is said plainly
//! in the log, on the run and in the app. Re-running a stage over edits of its own
//! comment is refused unless forced, and the edit stays in the history either way.
//!
//! Whose code and text it is matters: every stage works on the PR's own head as GitHub
//! keeps it (`refs/pull/N/head`), so a fork's branch named like one of the repository's
//! never stands in for it; `fix` pushes only to a branch of the repository itself that
//! is neither the base nor the default branch; a stage's input edited by someone other
//! than the owner waits for the owner's approval; and a PR title by someone else is
//! marked as untrusted in the prompt.

mod beginning;
mod fix;
mod plan;
pub mod qa_stage;
mod review;
mod stage_steps;
mod test;
mod untrusted_inputs;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tracing::Instrument as _;

use super::agent_job::{AgentSetup, Stop};
use super::queue_wait::QueueWaitEnd;
use super::reconcile::end_a_run_whose_driving_failed;
use super::run_log::RunLog;
use super::run_supervision::supervise;
use super::{Pipeline, PipelineError};
use crate::domain::run_event::RunEventKind;
use crate::domain::RunFailureCode;
use crate::domain::{Repo, Run, RunId, SandboxBackend, Stage};
use crate::github::wire::WirePull;
use crate::store::{RunOutcome, StageRunRequest};

pub use fix::fix_push_refusal;
pub use qa_stage::{QaPlan, QaStage};

/// What the owner asks for.
#[derive(Debug, Clone, Default)]
pub struct QaOptions {
    pub backend: Option<SandboxBackend>,
    pub timeout: Option<Duration>,
    /// Run even over the owner's edits of the stage's own comment.
    pub force: bool,
}

/// How one stage ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum QaResult {
    Succeeded {
        detail: String,
    },
    Failed {
        code: RunFailureCode,
        message: String,
    },
    Cancelled,
    Skipped {
        reason: String,
    },
}

/// One stage's run and its end.
#[derive(Debug, Clone, Serialize)]
pub struct QaStageReport {
    pub stage: Stage,
    pub run: Option<Run>,
    pub result: QaResult,
}

/// A QA run: its own run, and each stage's.
#[derive(Debug, Clone, Serialize)]
pub struct QaReport {
    pub run: Run,
    pub stages: Vec<QaStageReport>,
}

impl QaReport {
    pub fn succeeded(&self) -> bool {
        self.stages.iter().all(|stage| {
            matches!(
                stage.result,
                QaResult::Succeeded { .. } | QaResult::Skipped { .. }
            )
        })
    }
}

/// A QA run that was allowed to start and has been recorded.
#[derive(Debug)]
pub struct BegunQa {
    pipeline: Pipeline,
    repo: Repo,
    pull: WirePull,
    setup: AgentSetup,
    plan: QaPlan,
    pub run: Run,
    /// Whose work the agent reads on this PR: a tree someone else wrote (a fork, another
    /// author, commits someone else pushed, a visitor's item) never runs on the local
    /// backend and its agent starts with the tree's own agent configuration switched
    /// off; anything someone else's (the tree, or a visitor's follow-up in the prompts)
    /// fences the agent's output when the next stage reads it.
    whose_work: untrusted_inputs::WhoseWork,
}

/// What a stage leaves when it succeeds.
struct StageDone {
    detail: String,
    output: Option<String>,
    end_sha: Option<String>,
}

/// One stage's job: the run it is recorded on, its log, its workspace, its cancel.
struct StageJob<'a> {
    stage: QaStage,
    run_id: RunId,
    log: &'a RunLog,
    workspace: &'a Path,
    cancel: watch::Receiver<bool>,
}

impl StageJob<'_> {
    fn see_log(&self) -> String {
        format!("see the log of run {}", self.run_id)
    }
}

impl BegunQa {
    pub fn run_id(&self) -> RunId {
        self.run.id
    }

    /// Runs the stage (or the chain) to its end and records how each ended. The run is
    /// ended whatever happens: a store that fails midway still leaves it failed, not
    /// running.
    pub async fn drive(mut self) -> Result<QaReport, PipelineError> {
        let store = self.pipeline.store.clone();
        let top = self.run.id;
        // Every line the run (and each stage of its chain) logs carries its id.
        let driven = async {
            let pipeline = self.pipeline.clone();
            match pipeline
                .wait_for_turn(top, &self.repo, &mut self.setup)
                .await?
            {
                QueueWaitEnd::Cancelled => Ok(QaReport {
                    run: store.runs().run(top).await?,
                    stages: vec![QaStageReport {
                        stage: self.plan.stage(),
                        run: None,
                        result: QaResult::Cancelled,
                    }],
                }),
                QueueWaitEnd::Started => {
                    // The PR may have changed while the run waited: whose work it holds
                    // is asked again now, before anything of it runs.
                    self.whose_work = pipeline.whose_work_on(&self.repo, &self.pull).await?;
                    self.drive_to_the_end().await
                }
            }
        }
        .instrument(tracing::info_span!("run", run = %top))
        .await;
        if let Err(error) = &driven {
            end_a_run_whose_driving_failed(&store, top, self.run.feedback_id, error).await;
        }
        driven
    }

    async fn drive_to_the_end(&self) -> Result<QaReport, PipelineError> {
        let store = self.pipeline.store.clone();
        let top = self.run.id;
        store.runs().mark_run_running(top, None).await?;
        let (cancel_sender, cancel) = watch::channel(false);
        let cancel_sender = Arc::new(cancel_sender);
        let interval = self.pipeline.settings.heartbeat_interval;
        let _top_supervision = supervise(store.clone(), top, interval, cancel_sender.clone());

        let stages = match self.plan {
            QaPlan::One(stage) => {
                let result = self.run_stage(top, stage, cancel.clone()).await?;
                vec![QaStageReport {
                    stage: stage.stage(),
                    run: Some(store.runs().run(top).await?),
                    result,
                }]
            }
            QaPlan::FullAuto => {
                let stages = self.run_chain(top, &cancel, &cancel_sender).await?;
                let ran = stages.iter().filter(|stage| stage.run.is_some()).count();
                store.spend().settle_quota(top, ran as u32).await?;
                store
                    .runs()
                    .finish_run(top, &full_auto_outcome(&stages))
                    .await?;
                stages
            }
        };
        Ok(QaReport {
            run: store.runs().run(top).await?,
            stages,
        })
    }

    /// The full-auto chain: each stage a run of its own under the chain's run, stopping
    /// at the first that does not succeed; fix is skipped (and says why) when it cannot
    /// push or nothing failed.
    async fn run_chain(
        &self,
        top: RunId,
        cancel: &watch::Receiver<bool>,
        cancel_sender: &Arc<watch::Sender<bool>>,
    ) -> Result<Vec<QaStageReport>, PipelineError> {
        let store = &self.pipeline.store;
        let interval = self.pipeline.settings.heartbeat_interval;
        let log = RunLog::new(store.clone(), top, self.setup.redactor.clone());
        let mut stages = Vec::new();
        for stage in QaStage::CHAIN {
            if stage == QaStage::Fix {
                if let Some(reason) = self.reason_to_skip_fix().await? {
                    log.say(&reason).await?;
                    stages.push(QaStageReport {
                        stage: stage.stage(),
                        run: None,
                        result: QaResult::Skipped { reason },
                    });
                    continue;
                }
            }
            let child = store
                .stage_runs()
                .start_stage_run(&StageRunRequest {
                    repo_id: self.repo.id,
                    pr_number: Some(self.pull.number),
                    feedback_id: self.run.feedback_id,
                    stage: stage.stage(),
                    backend: self.setup.sandbox.backend(),
                    agent_preset: self.repo.agent_preset.clone(),
                    parent_run_id: Some(top),
                    quota_units: 0,
                })
                .await?;
            store.runs().mark_run_running(child.id, None).await?;
            let _child_supervision =
                supervise(store.clone(), child.id, interval, cancel_sender.clone());
            log.say(&format!("{stage}: run {}", child.id)).await?;
            let result = self.run_stage(child.id, stage, cancel.clone()).await?;
            let ok = matches!(result, QaResult::Succeeded { .. });
            log.say(&format!("{stage}: {}", describe(&result))).await?;
            stages.push(QaStageReport {
                stage: stage.stage(),
                run: Some(store.runs().run(child.id).await?),
                result,
            });
            if !ok {
                break;
            }
        }
        Ok(stages)
    }

    /// Why a chain skips fix, if it does.
    async fn reason_to_skip_fix(&self) -> Result<Option<String>, PipelineError> {
        if let Some(reason) = fix_push_refusal(&self.pull, &self.repo) {
            return Ok(Some(format!("fix cannot push: {reason}")));
        }
        let failures = self
            .pipeline
            .store
            .stage_runs()
            .latest_test_results(self.repo.id, self.pull.number)
            .await?
            .map(|results| results.results.iter().filter(|r| !r.result.passed).count())
            .unwrap_or(0);
        Ok((failures == 0).then(|| "every scenario passed: nothing to fix".to_owned()))
    }

    /// Runs one stage as run `run_id` and records its end on that run.
    async fn run_stage(
        &self,
        run_id: RunId,
        stage: QaStage,
        cancel: watch::Receiver<bool>,
    ) -> Result<QaResult, PipelineError> {
        let store = &self.pipeline.store;
        let log = RunLog::new(store.clone(), run_id, self.setup.redactor.clone());
        let workspace = self.pipeline.workspace_of(run_id);
        let job = StageJob {
            stage,
            run_id,
            log: &log,
            workspace: &workspace,
            cancel,
        };
        let outcome = match stage {
            QaStage::Review => self.review(&job).await,
            QaStage::Plan => self.plan(&job).await,
            QaStage::Test => self.test(&job).await,
            QaStage::Fix => self.fix(&job).await,
        };
        if !self.pipeline.settings.keep_workspaces {
            if let Err(error) = std::fs::remove_dir_all(&workspace) {
                tracing::warn!(run = %run_id, %error, "the run's workspace could not be removed");
            }
        }
        let (result, run_outcome) = match outcome {
            Ok(done) => (
                QaResult::Succeeded {
                    detail: done.detail.clone(),
                },
                RunOutcome::Succeeded {
                    exit_code: Some(0),
                    end_sha: done.end_sha,
                    output: done.output,
                },
            ),
            Err(stop) => {
                let outcome = stop.logged_outcome(&log).await?;
                let result = match stop {
                    Stop::Failed { code, message } => QaResult::Failed {
                        code,
                        message: log.redactor().redact(&message),
                    },
                    Stop::Cancelled => QaResult::Cancelled,
                };
                (result, outcome)
            }
        };
        if let QaResult::Succeeded { detail } = &result {
            log.say(&format!("done: {detail}")).await?;
        }
        self.setup.sandbox.teardown_done(run_id).await;
        store.runs().finish_run(run_id, &run_outcome).await?;
        let (kind, message) = match &result {
            QaResult::Succeeded { detail } => (
                RunEventKind::RunSucceeded,
                format!("{stage} on PR #{}: {detail}", self.pull.number),
            ),
            QaResult::Failed { message, .. } => (
                RunEventKind::RunFailed,
                format!("{stage} on PR #{} failed: {message}", self.pull.number),
            ),
            QaResult::Cancelled => (
                RunEventKind::RunFailed,
                format!("{stage} on PR #{} was cancelled", self.pull.number),
            ),
            QaResult::Skipped { .. } => return Ok(result),
        };
        store
            .runs()
            .record_run_event(run_id, self.run.feedback_id, kind, &message)
            .await?;
        Ok(result)
    }
}

fn describe(result: &QaResult) -> String {
    match result {
        QaResult::Succeeded { detail } => detail.clone(),
        QaResult::Failed { message, .. } => format!("failed: {message}"),
        QaResult::Cancelled => "cancelled".to_owned(),
        QaResult::Skipped { reason } => format!("skipped: {reason}"),
    }
}

fn full_auto_outcome(stages: &[QaStageReport]) -> RunOutcome {
    let summary = stages
        .iter()
        .map(|stage| format!("{}: {}", stage.stage, describe(&stage.result)))
        .collect::<Vec<_>>()
        .join("\n");
    match stages.iter().find(|stage| {
        !matches!(
            stage.result,
            QaResult::Succeeded { .. } | QaResult::Skipped { .. }
        )
    }) {
        None => RunOutcome::Succeeded {
            exit_code: Some(0),
            end_sha: None,
            output: Some(summary),
        },
        Some(stage) if stage.result == QaResult::Cancelled => RunOutcome::Cancelled {
            reason: "cancelled by the owner".to_owned(),
        },
        Some(stage) => RunOutcome::Failed {
            failure_code: RunFailureCode::StageFailed,
            message: format!(
                "the {} stage failed: {}",
                stage.stage,
                describe(&stage.result)
            ),
            exit_code: None,
        },
    }
}
