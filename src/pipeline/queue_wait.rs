//! Waiting in the run queue. Every run, once begun (checked and recorded as
//! `queued`), waits here for a slot before its sandbox starts: its process asks the
//! store for its turn every half second, keeps it alive with a heartbeat, tells the
//! run's log its place as it changes, and gives up when the owner cancels it (the
//! quota it took is given back: nothing ran). A Docker run the queue sends to E2B
//! (its repository allows it when Docker's slots are full) gets E2B's sandbox here.
//! Every kind of run (code, QA stage, lessons) waits here; picking up the runs a gone
//! process left behind is [`super::run_queue`].

use crate::pipeline::handles::RunQueue;
use std::time::{Duration, Instant};

use super::agent_job::AgentSetup;
use super::reconcile::RunsLeftBehind;
use super::run_log::RunLog;
use super::{Pipeline, PipelineError};
use crate::domain::{Repo, Run, RunId, RunStatus};
use crate::sandbox::Sandbox;
use crate::secrets::SecretName;
use crate::store::{QueueEntry, RunOutcome, StoreError, TakenTurn};

/// How often a waiting run asks for its turn.
const QUEUE_POLL: Duration = Duration::from_millis(500);

/// How a run's wait in the queue ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueWaitEnd {
    /// It holds a slot and is running.
    Started,
    /// The owner cancelled it while it waited; it has been ended as cancelled.
    Cancelled,
}

impl Pipeline {
    /// Whether runs may go to E2B on this installation (its key is set).
    pub async fn e2b_usable(&self) -> bool {
        let key = SecretName::E2bApiKey {
            api_host: self.settings.e2b.api_host(),
        };
        matches!(self.secrets.get(&key).await, Ok(Some(_)))
    }

    /// Waits until queued run `run_id` gets a slot (it is then `running`) or is
    /// cancelled (it is then ended, its quota given back). `setup` is made again for E2B
    /// when the queue sends a Docker run there.
    pub(crate) async fn wait_for_turn(
        &self,
        run_id: RunId,
        repo: &Repo,
        setup: &mut AgentSetup,
    ) -> Result<QueueWaitEnd, PipelineError> {
        let log = RunLog::new(self.store.clone(), run_id, setup.redactor.clone());
        let e2b_usable = repo.overflow_to_e2b && self.e2b_usable().await;
        let mut told_place = None;
        let mut last_sign_of_life = Instant::now();
        loop {
            match self
                .store
                .run_queue()
                .take_queue_turn(run_id, e2b_usable)
                .await?
            {
                TakenTurn::Started { backend } => {
                    if told_place.is_some() {
                        log.say("a slot is free: the run starts").await?;
                    }
                    if backend != setup.sandbox.backend() {
                        let why = format!(
                            "{}'s slots were full, so this run went to {backend} (the repository allows it)",
                            setup.sandbox.backend()
                        );
                        log.say(&why).await?;
                        self.store.runs().add_run_note(run_id, &why).await?;
                        *setup = self
                            .agent_setup(repo, Some(backend), Some(setup.timeout))
                            .await?;
                    }
                    self.put_in_its_environment(repo, run_id, setup, &log)
                        .await?;
                    return Ok(QueueWaitEnd::Started);
                }
                TakenTurn::Waiting { place } => {
                    if told_place != Some(place) {
                        log.say(&format!("waiting in the run queue: place {place}"))
                            .await?;
                        told_place = Some(place);
                    }
                }
                // The run stays queued; its heartbeat goes on until this process ends.
                TakenTurn::HeldWhileStopping => {}
                TakenTurn::CancelRequested => {
                    self.end_queued_run_cancelled(run_id).await?;
                    return Ok(QueueWaitEnd::Cancelled);
                }
                TakenTurn::NotQueued { status } => {
                    return match status {
                        // Begun runs are always queued; one already going is driven twice.
                        RunStatus::Running => Err(PipelineError::Store(StoreError::Corrupt(
                            format!("run {run_id} was started by another process"),
                        ))),
                        _ => Err(PipelineError::Store(StoreError::RunAlreadyFinished(run_id))),
                    };
                }
            }
            if last_sign_of_life.elapsed() >= self.settings.heartbeat_interval {
                self.store.runs().heartbeat(run_id).await?;
                last_sign_of_life = Instant::now();
            }
            tokio::time::sleep(QUEUE_POLL).await;
        }
    }

    /// Ends a run cancelled before it started: nothing ran, so its quota comes back.
    async fn end_queued_run_cancelled(&self, run_id: RunId) -> Result<Run, PipelineError> {
        let run = self
            .store
            .runs()
            .finish_run(
                run_id,
                &RunOutcome::Cancelled {
                    reason: "cancelled while it waited in the run queue".to_owned(),
                },
            )
            .await?;
        self.store.spend().settle_quota(run_id, 0).await?;
        Ok(run)
    }

    /// A run works in the environment its repository's base branch names: a Docker run
    /// in its image with its test services, an E2B run from its template; each built
    /// first when it is not ready.
    async fn put_in_its_environment(
        &self,
        repo: &Repo,
        run_id: RunId,
        setup: &mut AgentSetup,
        log: &RunLog,
    ) -> Result<(), PipelineError> {
        match &setup.sandbox {
            Sandbox::Docker(docker) => {
                if let Some(ready) = self
                    .environments()
                    .environment_for_run(repo, run_id, log)
                    .await?
                {
                    let image = ready.own_image.then_some(ready.image.as_str());
                    setup.sandbox =
                        Sandbox::Docker(docker.clone().with_environment(image, ready.services));
                }
            }
            Sandbox::E2b(e2b) => {
                if let Some(template) = self.environments().template_for_run(repo, e2b, log).await?
                {
                    setup.sandbox = Sandbox::E2b(e2b.clone().with_template(&template));
                }
            }
            Sandbox::Local(_) => {}
        }
        Ok(())
    }
}

impl RunQueue<'_> {
    /// The queue as the owner sees it: the runs going, then the waiting ones by place.
    pub async fn queue(&self) -> Result<Vec<QueueEntry>, PipelineError> {
        Ok(self
            .pipeline
            .store
            .run_queue()
            .queue(self.pipeline.e2b_usable().await)
            .await?)
    }

    /// Cancels run `run_id`: a queued run whose process is gone is ended here and now,
    /// any other active run is asked to stop (its process ends it).
    pub async fn cancel_run(&self, run_id: RunId) -> Result<Run, PipelineError> {
        let run = self.pipeline.store.runs().request_cancel(run_id).await?;
        if run.status == RunStatus::Queued && run.parent_run_id.is_none() {
            let left = RunsLeftBehind::find(
                &self.pipeline.store,
                super::reconcile::silent_since(&self.pipeline.store),
            )
            .await?;
            if let Some(orphan) = left
                .orphaned_queued
                .iter()
                .find(|orphan| orphan.run.id == run_id)
            {
                if self.pipeline.store.take_over_queued_run(orphan).await? {
                    return self.pipeline.end_queued_run_cancelled(run_id).await;
                }
            }
        }
        Ok(run)
    }
}
