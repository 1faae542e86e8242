//! Runs nothing drives any more: a run whose driving process shows no sign of life (a
//! crash, a restart, a killed process), or whose driving task panicked, is ended as
//! failed with the reason, its sandbox is removed, and its item leaves CODING; and a run
//! whose driving failed (its database or its log could not be written) is ended where it
//! failed. Nothing stays stuck.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Pipeline, PipelineError};
use crate::domain::run_event::RunEventKind;
use crate::domain::RunFailureCode;
use crate::domain::{FeedbackId, Run, RunId};
use crate::store::{RunOutcome, Store, StoreError};

/// A heartbeat older than this means the run's process is gone.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// The moment before which an active run without a sign of life counts as abandoned.
pub fn silent_since() -> DateTime<Utc> {
    Utc::now() - chrono::Duration::from_std(STALE_AFTER).unwrap_or_default()
}

/// What was done about one abandoned run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reconciled {
    pub run_id: RunId,
    pub message: String,
}

impl Pipeline {
    /// Ends every active run whose process has been silent for [`STALE_AFTER`].
    pub async fn reconcile_silent_runs(&self) -> Result<Vec<Reconciled>, PipelineError> {
        self.reconcile_abandoned_runs(silent_since()).await
    }

    /// Ends every active run whose process has shown no sign of life since
    /// `stale_before`.
    pub async fn reconcile_abandoned_runs(
        &self,
        stale_before: DateTime<Utc>,
    ) -> Result<Vec<Reconciled>, PipelineError> {
        let mut reconciled = Vec::new();
        for run in self.store.abandoned_runs(stale_before).await? {
            let ended = self
                .end_run_left_behind(
                    &run,
                    RunFailureCode::Abandoned,
                    "Handoff stopped while this run was going (a crash or a restart)",
                )
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
        let repo = match self.store.repo(run.repo_id).await {
            Ok(repo) => Some(repo),
            Err(error) => {
                tracing::warn!(run_id = %run.id, %error, "the run's repository could not be read; its sandbox is looked for with the defaults");
                None
            }
        };
        let removal = match self.sandbox_for(run.backend, repo.as_ref()).await {
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
            .store
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
        self.store
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
    let message = format!("the run could not be recorded to its end: {error}");
    let outcome = RunOutcome::Failed {
        failure_code: RunFailureCode::Store,
        message: message.clone(),
        exit_code: None,
    };
    match store.finish_run(run_id, &outcome).await {
        Ok(_) => {
            tracing::warn!(run = %run_id, %error, "a run failed while it was driven; it was ended as failed");
            if let Err(event_error) = store
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
