//! Keeping a run's driving process visible: a heartbeat in the store every few
//! seconds — a restart treats a run without one as abandoned — and the owner's cancel,
//! asked for from any process, passed on to the sandbox.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::domain::RunId;
use crate::store::Store;

/// Stops the supervision when dropped.
#[derive(Debug)]
pub struct Supervision {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Supervision {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Beats every `interval`; turns `cancel` true when a cancel is asked for.
pub fn supervise(
    store: Store,
    run_id: RunId,
    interval: Duration,
    cancel: Arc<watch::Sender<bool>>,
) -> Supervision {
    let task = tokio::spawn(async move {
        loop {
            match store.runs().heartbeat(run_id).await {
                Ok(true) => {
                    if cancel.send(true).is_err() {
                        tracing::debug!(%run_id, "cancel asked after the run stopped listening");
                    }
                }
                Ok(false) => {}
                // A run whose heartbeat cannot be written looks abandoned to another
                // process after a while: say so where the owner can find it.
                Err(error) => {
                    tracing::warn!(%run_id, %error, "the run's heartbeat could not be written")
                }
            }
            tokio::time::sleep(interval).await;
        }
    });
    Supervision { task }
}
