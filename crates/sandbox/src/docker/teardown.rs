//! A run's containers go once the run has what it needs from them: the job's exit
//! status and `out/`. Stopping and removing a container costs the engine tens of
//! milliseconds (more on a network), so `run` hands it to a task and returns, and the
//! host goes on with the push meanwhile; the pipeline awaits the removal before the run
//! ends ([`DockerSandbox::teardown_done`]), so that no run's container outlives it. A
//! process that dies first leaves them to the sweep of leftovers (they carry the run's
//! label). After the removal, the item's next container is made ahead.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use tokio::task::JoinHandle;

use super::ready_container::ReadyContainer;
use super::DockerSandbox;
use handoff_domain::{FeedbackId, RunId};

/// The removals under way, by installation and run.
type Removals = HashMap<(String, RunId), JoinHandle<()>>;
static TEARDOWNS: LazyLock<Mutex<Removals>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// What a run leaves to remove: its containers (the job's last), its services'
/// network, and the container to make ahead for its item's next run.
pub(super) struct RunLeftovers {
    pub containers: Vec<String>,
    pub services_network: Option<String>,
    pub next_ready: Option<(FeedbackId, ReadyContainer)>,
}

impl DockerSandbox {
    /// Removes what run `run` left, in a task of its own that
    /// [`DockerSandbox::teardown_done`] awaits.
    pub(super) fn tear_down_later(&self, run: RunId, leftovers: RunLeftovers) {
        let sandbox = self.clone();
        let removal = tokio::spawn(async move {
            let RunLeftovers {
                containers,
                services_network,
                next_ready,
            } = leftovers;
            for id in containers.iter().rev() {
                sandbox.remove(id).await;
            }
            if let Some(network) = services_network {
                if let Err(error) = sandbox.docker.remove_network(&network).await {
                    tracing::warn!(%network, %error, "the run's services network could not be removed");
                }
            }
            if let Some((item, ready)) = next_ready {
                sandbox.make_ready_later(item, ready);
            }
        });
        let earlier = TEARDOWNS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((self.installation.clone(), run), removal);
        if earlier.is_some() {
            tracing::warn!(%run, "a run's containers were handed for removal twice; the first removal goes on unawaited");
        }
    }

    /// Waits until what run `run` left has been removed (at once when nothing is
    /// being removed for it).
    pub async fn teardown_done(&self, run: RunId) {
        let removal = TEARDOWNS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(self.installation.clone(), run));
        if let Some(removal) = removal {
            if let Err(error) = removal.await {
                tracing::warn!(%run, %error, "removing a run's containers stopped short; the sweep of leftovers removes what is left");
            }
        }
    }
}
