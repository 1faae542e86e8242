//! The headless daemon (`handoff serve`): what the open window does by itself, kept going
//! with no window, on a laptop left on or a small server. It looks after the queue every
//! few seconds (ends runs whose process is gone, takes over and drives queued ones) and
//! syncs on a timer (with the due lessons and automatic updates a sync starts). One
//! daemon serves a data folder: it holds `serve.lock` there for as long as it lives, and
//! writes what it is doing to `serve.json` beside it, for `handoff status` and the
//! window. Told to stop, it starts nothing new, lets the runs it has under way finish
//! (for a grace period, then cancels what is left), and leaves its queued runs queued:
//! its lock goes with it, so the next process takes them over at once. Nothing is lost.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use tokio::sync::watch;

pub use crate::daemon_status::{daemon_serving, DaemonState};
use crate::daemon_status::{read_state, SERVE_LOCK, SERVE_STATE};
use crate::mirror_following::end_runs_nothing_drives;
use crate::session::{AutomaticUpdateNote, SyncSummary};
use crate::timed_sync::{sync_on_a_timer, SyncListener, TimedSyncer};
use crate::AppCore;
use handoff::domain::{RunId, RunStatus};
use handoff::file_lock::FileLock;

/// How the daemon works.
#[derive(Debug, Clone, Copy)]
pub struct ServeSettings {
    /// How often it syncs with GitHub (`None`: the installation's setting).
    pub sync_interval: Option<Duration>,
    /// How often it looks after the queue.
    pub queue_interval: Duration,
    /// How long, once told to stop, it lets its runs under way go on before it cancels
    /// them.
    pub grace: Duration,
}

impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            sync_interval: None,
            queue_interval: Duration::from_secs(3),
            grace: Duration::from_secs(120),
        }
    }
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("a daemon already serves this data folder (process {pid})")]
    AlreadyServing { pid: u32 },
    #[error("another daemon holds {}, and what it does cannot be read", .0.display())]
    AlreadyServingUnknown(PathBuf),
    #[error("the daemon's lock {} cannot be taken: {source}", .path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The daemon serving a data folder, holding its lock.
#[derive(Debug, Clone)]
pub struct Daemon {
    inner: Arc<DaemonInner>,
}

#[derive(Debug)]
struct DaemonInner {
    _lock: FileLock,
    state_file: PathBuf,
    state: Mutex<DaemonState>,
}

impl Daemon {
    /// Takes the data folder's daemon lock; refused while another daemon serves it.
    pub fn take(data_dir: &Path) -> Result<Daemon, DaemonError> {
        let lock_path = data_dir.join(SERVE_LOCK);
        let lock = FileLock::try_take(&lock_path).map_err(|source| DaemonError::Lock {
            path: lock_path.clone(),
            source,
        })?;
        let Some(lock) = lock else {
            return Err(match read_state(data_dir) {
                Some(state) => DaemonError::AlreadyServing { pid: state.pid },
                None => DaemonError::AlreadyServingUnknown(lock_path),
            });
        };
        let daemon = Daemon {
            inner: Arc::new(DaemonInner {
                _lock: lock,
                state_file: data_dir.join(SERVE_STATE),
                state: Mutex::new(DaemonState {
                    pid: std::process::id(),
                    started_at: Utc::now(),
                    last_sync_at: None,
                    last_sync: None,
                    driving: Vec::new(),
                    stopping: false,
                }),
            }),
        };
        daemon.change(|_| {});
        Ok(daemon)
    }

    /// Changes what it says it is doing, and writes it down (a whole new file, renamed
    /// into place, so a reader never sees half of it).
    fn change(&self, change: impl FnOnce(&mut DaemonState)) {
        let state = {
            let mut state = match self.inner.state.lock() {
                Ok(state) => state,
                Err(poisoned) => poisoned.into_inner(),
            };
            change(&mut state);
            state.clone()
        };
        let written = serde_json::to_vec_pretty(&state)
            .map_err(std::io::Error::other)
            .and_then(|text| {
                let partial = self.inner.state_file.with_extension("json.partial");
                std::fs::write(&partial, text)?;
                std::fs::rename(&partial, &self.inner.state_file)
            });
        if let Err(error) = written {
            tracing::warn!(file = %self.inner.state_file.display(), %error, "what the daemon is doing could not be written down");
        }
    }
}

/// Serves until `stop` resolves, then stops cleanly (see the module's text).
pub async fn serve(
    core: AppCore,
    daemon: Daemon,
    settings: ServeSettings,
    stop: impl std::future::Future<Output = ()>,
) {
    tracing::info!(pid = std::process::id(), data_dir = %core.data_dir.display(), "the daemon serves this data folder");
    let (stopping, stopped) = watch::channel(false);
    let syncing = tokio::spawn(sync_on_a_timer(
        core.clone(),
        TimedSyncer::Daemon,
        settings.sync_interval,
        DaemonSyncListener(daemon.clone()),
        Some(stopped.clone()),
    ));
    let queue = tokio::spawn(look_after_the_queue(
        core.clone(),
        daemon.clone(),
        settings.queue_interval,
        stopped,
    ));
    stop.await;
    tracing::info!(
        "the daemon was told to stop: it starts nothing new and lets its runs under way end"
    );
    daemon.change(|state| state.stopping = true);
    // Nothing new starts from here: queued runs wait for the next process.
    core.store.start_no_more_runs();
    if stopping.send(true).is_err() {
        tracing::debug!("the daemon's loops had already ended");
    }
    for (what, task) in [("the timed sync", syncing), ("the queue", queue)] {
        if let Err(error) = task.await {
            tracing::warn!(%error, "{what} of the daemon ended badly");
        }
    }
    let left = wait_for_runs_under_way(&core, &daemon, settings.grace).await;
    if !left.is_empty() {
        tracing::warn!(runs = ?left, "runs were still going at the end of the grace period: they are cancelled");
        for run in &left {
            if let Err(error) = core.store.runs().request_cancel(*run).await {
                tracing::warn!(run = %run, %error, "a run could not be asked to stop");
            }
        }
        let still = wait_for_runs_under_way(&core, &daemon, Duration::from_secs(30)).await;
        if !still.is_empty() {
            tracing::error!(runs = ?still, "runs did not stop: the next start ends them");
        }
    }
    tracing::info!("the daemon stopped");
}

/// Ends the runs nothing drives and takes over the queued ones, every `interval`.
async fn look_after_the_queue(
    core: AppCore,
    daemon: Daemon,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        end_runs_nothing_drives(&core).await;
        let driving = runs_driven_here(&core, false).await;
        daemon.change(|state| state.driving = driving.iter().map(|run| run.0).collect());
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = stop.changed() => {}
        }
    }
}

/// The runs this process drives (only those under way, when `running_only`).
async fn runs_driven_here(core: &AppCore, running_only: bool) -> Vec<RunId> {
    let Some(mine) = core
        .store
        .this_driver_so_far()
        .map(|driver| driver.lock.clone())
    else {
        return Vec::new();
    };
    match core.store.active_runs_and_drivers().await {
        Ok(active) => active
            .into_iter()
            .filter(|run| {
                run.driver
                    .as_ref()
                    .is_some_and(|driver| driver.lock == mine)
            })
            .filter(|run| !running_only || run.run.status == RunStatus::Running)
            .map(|run| run.run.id)
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "the runs this daemon drives could not be read");
            Vec::new()
        }
    }
}

/// Waits up to `grace` for the runs this process has under way to end; those left.
async fn wait_for_runs_under_way(core: &AppCore, daemon: &Daemon, grace: Duration) -> Vec<RunId> {
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        let going = runs_driven_here(core, true).await;
        daemon.change(|state| state.driving = going.iter().map(|run| run.0).collect());
        if going.is_empty() || tokio::time::Instant::now() >= deadline {
            return going;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Writes each sync's outcome into what the daemon says it is doing, and the log.
struct DaemonSyncListener(Daemon);

impl SyncListener for DaemonSyncListener {
    fn synced(&self, outcome: Result<&SyncSummary, &str>) {
        let said = match outcome {
            Ok(summary) => format!(
                "{} repositories, {} new feedback, {} status changes{}",
                summary.repos,
                summary.new_feedback,
                summary.status_changes,
                if summary.errors.is_empty() {
                    String::new()
                } else {
                    format!(", {} failed", summary.errors.len())
                }
            ),
            Err(message) => format!("failed: {message}"),
        };
        tracing::info!(sync = %said, "the daemon synced");
        self.0.change(|state| {
            state.last_sync_at = Some(Utc::now());
            state.last_sync = Some(said);
        });
    }

    fn automatic_update_stopped(&self, note: &AutomaticUpdateNote) {
        tracing::warn!(feedback = note.feedback_id, reason = %note.reason, "{}", note.title());
    }
}
