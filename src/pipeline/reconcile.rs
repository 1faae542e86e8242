//! Runs nothing drives any more: a run whose driving process is gone (its lock is free:
//! a crash, a kill, a closed terminal) or has shown no sign of life for a while (a hung
//! process, a machine that cannot be looked at), or whose driving task panicked, is
//! ended as failed with the reason, its sandbox is removed, and its item leaves CODING;
//! a queued run whose process is gone is taken over by the process that looks
//! (`run_queue`); and a run whose driving failed (its database or its log could not be
//! written) is ended where it failed. Nothing stays stuck.

use crate::pipeline::handles::LeftBehindRuns;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Pipeline, PipelineError};
use crate::domain::run_driver::{DriverLiveness, RunDriver};
use crate::domain::run_event::RunEventKind;
use crate::domain::{FeedbackId, Run, RunId, RunStatus};
use crate::domain::{RunFailureCode, SpendSource};
use crate::store::spend::RunSpend;
use crate::store::{ActiveRun, RunOutcome, Store, StoreError};

/// A heartbeat older than this means the run's process is gone, where its lock cannot
/// tell sooner.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// The moment before which an active run without a sign of life counts as abandoned.
pub fn silent_since(store: &Store) -> DateTime<Utc> {
    store.now() - chrono::Duration::from_std(STALE_AFTER).unwrap_or_default()
}

/// What was done about one abandoned run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reconciled {
    pub run_id: RunId,
    pub message: String,
}

/// The active runs as their drivers leave them.
#[derive(Debug, Default)]
pub struct RunsLeftBehind {
    /// Runs under way (and a chain's waiting stages) whose process is gone or silent,
    /// with why: they are to be ended.
    pub dead: Vec<(ActiveRun, String)>,
    /// Queued runs whose process is gone or silent: another process takes them over.
    pub orphaned_queued: Vec<ActiveRun>,
    /// Queued runs of another process that may still live: taken over only once it is
    /// known gone, or at `silent_from` if it stays silent until then.
    pub waiting_on_others: Vec<WaitingOnDriver>,
}

/// A queued run that waits for a process that may still live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitingOnDriver {
    pub run_id: RunId,
    /// Who drives it, when known.
    pub driver: Option<RunDriver>,
    /// Whether that process was seen to hold its lock (else it cannot be looked at).
    pub seen_alive: bool,
    /// When it counts as silent if no sign of life comes before.
    pub silent_from: DateTime<Utc>,
}

impl RunsLeftBehind {
    /// Sorts the active runs of `store` by how their drivers stand: gone (its lock is
    /// free), silent since `stale_before`, or still driving.
    pub async fn find(
        store: &Store,
        stale_before: DateTime<Utc>,
    ) -> Result<RunsLeftBehind, StoreError> {
        let mine = store.this_driver_so_far().map(|driver| driver.lock.clone());
        let mut left = RunsLeftBehind::default();
        for active in store.active_runs_and_drivers().await? {
            let liveness = match &active.driver {
                Some(driver) => store.driver_liveness(driver),
                None => DriverLiveness::CannotTell,
            };
            let gone = liveness == DriverLiveness::Gone;
            let silent = active.last_sign_of_life < stale_before;
            let waits_in_queue =
                active.run.status == RunStatus::Queued && active.run.parent_run_id.is_none();
            if gone || silent {
                if waits_in_queue {
                    left.orphaned_queued.push(active);
                } else {
                    let why = why_left_behind(&active, gone);
                    left.dead.push((active, why));
                }
            } else if waits_in_queue
                && active.driver.as_ref().map(|driver| &driver.lock) != mine.as_ref()
            {
                left.waiting_on_others.push(WaitingOnDriver {
                    run_id: active.run.id,
                    driver: active.driver.clone(),
                    seen_alive: liveness == DriverLiveness::Alive,
                    silent_from: active.last_sign_of_life
                        + chrono::Duration::from_std(STALE_AFTER).unwrap_or_default(),
                });
            }
        }
        Ok(left)
    }

    /// Whether something is to be ended or taken over.
    pub fn has_work(&self) -> bool {
        !self.dead.is_empty() || !self.orphaned_queued.is_empty()
    }
}

/// Why a run's driver counts as gone, in the owner's words.
fn why_left_behind(active: &ActiveRun, gone: bool) -> String {
    let who = active
        .driver
        .as_ref()
        .map(|driver| format!(" ({})", driver.describe()))
        .unwrap_or_default();
    if gone {
        format!(
            "Handoff stopped while this run was going: the process that drove it{who} ended without finishing it (a crash, a kill or a closed terminal)"
        )
    } else {
        format!(
            "Handoff stopped while this run was going: the process that drove it{who} has shown no sign of life since {} (a crash, a hang or a restart)",
            active.last_sign_of_life.format("%Y-%m-%d %H:%M:%S UTC")
        )
    }
}

impl Pipeline {
    /// A run its driver left behind keeps what it spent: every model call was written to
    /// the ledger as it was reserved and settled, so its total is there; a call whose
    /// answer was never settled is charged all it reserved. Steps, kept in the driver's
    /// memory, are gone with it.
    async fn keep_spend_of_run_left_behind(&self, run: &Run) -> Result<(), PipelineError> {
        let ledger = self
            .store
            .spend()
            .close_run_ledger(run.id, self.store.now())
            .await?;
        if ledger.calls == 0 || run.spend_source.is_some() {
            return Ok(());
        }
        let source = if ledger.calls > ledger.reported_calls {
            SpendSource::Metered
        } else {
            SpendSource::Reported
        };
        let spend = RunSpend {
            source: Some(source),
            cost_usd: Some(ledger.charged_usd),
            ..RunSpend::default()
        };
        self.store
            .spend()
            .record_run_spend(run.id, &spend, &[])
            .await?;
        tracing::info!(run_id = %run.id, cost_usd = ledger.charged_usd, calls = ledger.calls, "a run left behind keeps the spend its ledger holds");
        Ok(())
    }
}

impl LeftBehindRuns<'_> {
    /// Ends every run under way whose process is gone, or silent for [`STALE_AFTER`].
    pub async fn reconcile_silent_runs(&self) -> Result<Vec<Reconciled>, PipelineError> {
        self.pipeline
            .left_behind()
            .reconcile_abandoned_runs(silent_since(&self.pipeline.store))
            .await
    }

    /// Ends every run under way whose process is gone, or has shown no sign of life
    /// since `stale_before`.
    pub async fn reconcile_abandoned_runs(
        &self,
        stale_before: DateTime<Utc>,
    ) -> Result<Vec<Reconciled>, PipelineError> {
        let left = RunsLeftBehind::find(&self.pipeline.store, stale_before).await?;
        self.pipeline.left_behind().end_dead_runs(left.dead).await
    }

    /// Ends each of `dead` with its reason.
    pub async fn end_dead_runs(
        &self,
        dead: Vec<(ActiveRun, String)>,
    ) -> Result<Vec<Reconciled>, PipelineError> {
        let mut reconciled = Vec::new();
        for (active, why) in dead {
            let ended = self
                .pipeline
                .left_behind()
                .end_run_left_behind(&active.run, RunFailureCode::Abandoned, &why)
                .await?;
            reconciled.extend(ended);
        }
        Ok(reconciled)
    }

    /// Ends `run`, which nothing drives any more, as failed with `code` and `why`: its
    /// sandbox is removed (the message says whether that worked), and a run event tells
    /// the owner. `None` when its process finished it meanwhile after all.
    pub async fn end_run_left_behind(
        &self,
        run: &Run,
        code: RunFailureCode,
        why: &str,
    ) -> Result<Option<Reconciled>, PipelineError> {
        let repo = match self.pipeline.store.repositories().repo(run.repo_id).await {
            Ok(repo) => Some(repo),
            Err(error) => {
                tracing::warn!(run_id = %run.id, %error, "the run's repository could not be read; its sandbox is looked for with the defaults");
                None
            }
        };
        let removal = match self.pipeline.sandbox_for(run.backend, repo.as_ref()).await {
            Ok(sandbox) => sandbox
                .remove_leftover(run.id, run.sandbox_id.as_deref())
                .await
                .map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        let message = format!(
            "{why}; {}",
            match removal {
                Ok(()) => "its sandbox was removed".to_owned(),
                Err(error) => format!("its sandbox could not be removed: {error}"),
            }
        );
        match self
            .pipeline
            .store
            .runs()
            .finish_run(
                run.id,
                &RunOutcome::Failed {
                    failure_code: code,
                    message: message.clone(),
                    exit_code: None,
                },
            )
            .await
        {
            Ok(_) => {}
            Err(StoreError::RunAlreadyFinished(_)) => return Ok(None),
            Err(error) => return Err(error.into()),
        }
        self.pipeline.keep_spend_of_run_left_behind(run).await?;
        self.pipeline
            .store
            .runs()
            .record_run_event(
                run.id,
                run.feedback_id,
                RunEventKind::RunFailed,
                &format!("Run {} failed: {message}", run.id),
            )
            .await?;
        Ok(Some(Reconciled {
            run_id: run.id,
            message,
        }))
    }
}

/// Ends a run whose driving failed (its database or its log could not be written): as
/// failed, with a run event so that the owner hears of it. A run that ended meanwhile is
/// left as it is; one that cannot be ended either is for the next start's reconcile.
pub(crate) async fn end_a_run_whose_driving_failed(
    store: &Store,
    run_id: RunId,
    feedback_id: Option<FeedbackId>,
    error: &PipelineError,
) {
    let (failure_code, message) = match error {
        // Nothing of the run's own went wrong: its environment could not be had.
        PipelineError::EnvironmentBuild { .. }
        | PipelineError::EnvironmentEngine { .. }
        | PipelineError::EnvironmentNotYetBuilt { .. }
        | PipelineError::EnvironmentServices { .. }
        | PipelineError::EnvironmentRecipe { .. } => {
            (RunFailureCode::Environment, error.to_string())
        }
        // The base branch the environment is read from could not be fetched.
        PipelineError::BaseBranchUnread { .. } => (RunFailureCode::GitFetch, error.to_string()),
        _ => (
            RunFailureCode::Store,
            format!("the run could not be recorded to its end: {error}"),
        ),
    };
    let outcome = RunOutcome::Failed {
        failure_code,
        message: message.clone(),
        exit_code: None,
    };
    match store.runs().finish_run(run_id, &outcome).await {
        Ok(_) => {
            tracing::warn!(run = %run_id, %error, "a run failed while it was driven; it was ended as failed");
            if let Err(event_error) = store
                .runs()
                .record_run_event(
                    run_id,
                    feedback_id,
                    RunEventKind::RunFailed,
                    &format!("Run {run_id} failed: {message}"),
                )
                .await
            {
                tracing::warn!(run = %run_id, %event_error, "the failed run's event could not be recorded");
            }
        }
        Err(StoreError::RunAlreadyFinished(_)) => {}
        Err(also) => {
            tracing::error!(run = %run_id, %error, %also, "a run could not be ended; the next start ends it")
        }
    }
}
