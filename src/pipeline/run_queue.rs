//! The run queue's runs left behind. (A run's own wait for its turn is
//! [`super::queue_wait`].)
//!
//! Queued runs outlive their process: one whose process is gone (its driver's lock is
//! free) or silent is adopted by the next process that looks after the queue (the
//! window every few seconds, `handoff queue run`, `handoff sync`), which first ends the
//! runs under way whose process is gone, so that they hold no slot, then makes the
//! queued ones again from their record and drives them.

use crate::pipeline::handles::RunQueue;
use tokio::task::JoinHandle;

use super::code_run::BegunCodeRun;
use super::lessons_run::BegunLessons;
use super::qa_run::BegunQa;
use super::reconcile::{Reconciled, RunsLeftBehind, WaitingOnDriver};
use super::spawned_run::spawn_watched_run;
use super::{Pipeline, PipelineError};
use crate::domain::{RunFailureCode, RunId, Stage};
use crate::store::{ActiveRun, RunOutcome};

/// What a process that looks after the queue found and did.
#[derive(Debug)]
pub struct PickedUpRuns {
    /// Runs whose process was gone, ended.
    pub ended: Vec<Reconciled>,
    /// Queued runs whose process was gone, taken over, for the caller to drive.
    pub taken_over: Vec<AdoptedRun>,
    /// Queued runs that wait for a process that may still live.
    pub waiting_on_others: Vec<WaitingOnDriver>,
}

/// A queued run whose process stopped, made again from its record by the process that
/// adopted it.
#[derive(Debug)]
pub enum AdoptedRun {
    Code(Box<BegunCodeRun>),
    Qa(Box<BegunQa>),
    Lessons(Box<BegunLessons>),
}

impl AdoptedRun {
    pub fn run_id(&self) -> RunId {
        match self {
            AdoptedRun::Code(run) => run.run_id(),
            AdoptedRun::Qa(run) => run.run_id(),
            AdoptedRun::Lessons(run) => run.run_id(),
        }
    }

    /// Drives it to its end here.
    pub async fn drive(self) -> Result<(), PipelineError> {
        match self {
            AdoptedRun::Code(run) => run.drive().await.map(drop),
            AdoptedRun::Qa(run) => run.drive().await.map(drop),
            AdoptedRun::Lessons(run) => run.drive().await.map(drop),
        }
    }

    /// Drives it in a task of its own, watched (`spawned_run`).
    pub fn drive_in_background(self, pipeline: Pipeline) -> JoinHandle<()> {
        let run_id = self.run_id();
        spawn_watched_run(
            pipeline,
            run_id,
            "a run taken over from the queue",
            self.drive(),
        )
    }
}

impl Pipeline {
    /// Takes over each of `orphans` that no other process took meanwhile. One that
    /// cannot be made again (its repository disconnected, its setup broken) is ended as
    /// failed, saying why, and its quota comes back: it never started.
    async fn take_over(&self, orphans: Vec<ActiveRun>) -> Result<Vec<AdoptedRun>, PipelineError> {
        let mut adopted = Vec::new();
        for orphan in orphans {
            if !self.store.take_over_queued_run(&orphan).await? {
                continue;
            }
            let run = orphan.run;
            let run_id = run.id;
            let made = match run.stage {
                Stage::Code => self
                    .resume_code_run(run.clone())
                    .await
                    .map(|run| AdoptedRun::Code(Box::new(run))),
                Stage::Lessons => self
                    .resume_lessons(run.clone())
                    .await
                    .map(|run| AdoptedRun::Lessons(Box::new(run))),
                _ => self
                    .resume_qa(run.clone())
                    .await
                    .map(|run| AdoptedRun::Qa(Box::new(run))),
            };
            match made {
                Ok(made) => {
                    tracing::info!(run = %run_id, "a queued run whose process stopped was taken over");
                    adopted.push(made);
                }
                Err(error) => {
                    tracing::warn!(run = %run_id, %error, "a queued run whose process stopped could not be taken over; it is ended");
                    self.store
                        .runs().finish_run(
                            run_id,
                            &RunOutcome::Failed {
                                failure_code: RunFailureCode::Abandoned,
                                message: format!(
                                    "Handoff stopped while this run waited in the queue, and it could not be started again: {error}"
                                ),
                                exit_code: None,
                            },
                        )
                        .await?;
                    self.store.spend().settle_quota(run_id, 0).await?;
                }
            }
        }
        Ok(adopted)
    }
}

impl RunQueue<'_> {
    /// What a process that looks after the queue does first: ends the runs whose
    /// process is gone or silent since `stale_before` (so that they hold no slot), then
    /// takes over the queued runs whose process is gone, made again for the caller to
    /// drive; and says which queued runs wait for a process that may still live.
    pub async fn pick_up_runs_left_behind(
        &self,
        stale_before: chrono::DateTime<chrono::Utc>,
    ) -> Result<PickedUpRuns, PipelineError> {
        let left = RunsLeftBehind::find(&self.pipeline.store, stale_before).await?;
        let ended = self.pipeline.left_behind().end_dead_runs(left.dead).await?;
        let taken_over = self.pipeline.take_over(left.orphaned_queued).await?;
        Ok(PickedUpRuns {
            ended,
            taken_over,
            waiting_on_others: left.waiting_on_others,
        })
    }

    /// Takes over every queued run whose process is gone or silent since
    /// `stale_before`, and makes each again from its record, for the caller to drive.
    pub async fn adopt_queued_runs(
        &self,
        stale_before: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<AdoptedRun>, PipelineError> {
        let left = RunsLeftBehind::find(&self.pipeline.store, stale_before).await?;
        self.pipeline.take_over(left.orphaned_queued).await
    }
}
