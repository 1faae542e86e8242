//! Runs driven in the background (the window starts them and returns at once): each is
//! driven in a task of its own, inside a `run` span carrying its id so every line it
//! logs says which run it belongs to, and watched by a second task. A run whose driving
//! ends with an error has that error logged; one whose driving panicked is ended as
//! failed at once, with the panic's message and its sandbox removed, together with any
//! stage of its chain still going, instead of staying "running" until the next start.

use std::future::Future;

use tokio::task::JoinHandle;
use tracing::Instrument as _;

use super::{Pipeline, PipelineError};
use crate::domain::{RunFailureCode, RunId};
use crate::log_file::panic_message;

/// Drives `driving` (run `run_id`'s, a `what` such as "a code run") in the background
/// under the watch described above. The handle ends when the watch has done its part.
pub fn spawn_watched_run<Report>(
    pipeline: Pipeline,
    run_id: RunId,
    what: &'static str,
    driving: impl Future<Output = Result<Report, PipelineError>> + Send + 'static,
) -> JoinHandle<()>
where
    Report: Send + 'static,
{
    // The driving carries its own `run` span (the command line's runs too).
    let driven = tokio::spawn(driving);
    let span = tracing::info_span!("run", run = %run_id);
    tokio::spawn(
        async move {
            match driven.await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::error!(%error, "{what} ended with an error"),
                Err(stopped) => {
                    let why = if stopped.is_panic() {
                        let message = panic_message(&*stopped.into_panic());
                        tracing::error!("the task driving {what} panicked: {message}");
                        format!("Handoff failed while driving this run (a fault in Handoff, in the log file): {message}")
                    } else {
                        tracing::error!("the task driving {what} was stopped");
                        "Handoff stopped driving this run".to_owned()
                    };
                    end_the_chain(&pipeline, run_id, &why).await;
                }
            }
        }
        .instrument(span),
    )
}

/// Ends `top` and every stage of its chain still active.
async fn end_the_chain(pipeline: &Pipeline, top: RunId, why: &str) {
    let active = match pipeline.store.runs().active_runs_of_chain(top).await {
        Ok(active) => active,
        Err(error) => {
            tracing::error!(%error, "the runs of a run whose driving panicked could not be read; they end at the next check for abandoned runs");
            return;
        }
    };
    for run in active {
        if let Err(error) = pipeline
            .left_behind()
            .end_run_left_behind(&run, RunFailureCode::DrivingPanicked, why)
            .await
        {
            tracing::error!(run_id = %run.id, %error, "a run whose driving panicked could not be ended; it ends at the next check for abandoned runs");
        }
    }
}
