//! Syncing with GitHub on a timer, as the open window and the daemon (`handoff serve`)
//! both do: one sync (with the due lessons and the automatic updates it starts, and the
//! kept working copies pruned after) at once, then one every interval, for as long as
//! the installation is signed in; until told to stop, which waits for a sync under way
//! to end rather than cutting it off. While a daemon serves the data folder, the window
//! leaves the syncing to it.

use std::time::Duration;

use tokio::sync::watch;

use crate::session::{self, AutomaticUpdateNote, SyncSummary};
use crate::AppCore;

/// How often Handoff syncs with GitHub by itself, unless the owner set another interval.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The shortest interval the owner may set: a sync costs a few requests, and GitHub's
/// rate limit is per hour.
pub const SHORTEST_SYNC_INTERVAL: Duration = Duration::from_secs(30);

/// The interval a stored `sync.interval_seconds` gives: whole seconds, at least
/// [`SHORTEST_SYNC_INTERVAL`].
pub fn parse_sync_interval(text: &str) -> Result<Duration, String> {
    let seconds: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    let interval = Duration::from_secs(seconds);
    if interval < SHORTEST_SYNC_INTERVAL {
        return Err(format!(
            "{seconds} s is too often: at least {} s",
            SHORTEST_SYNC_INTERVAL.as_secs()
        ));
    }
    Ok(interval)
}

/// How often to sync: the owner's setting, or [`SYNC_INTERVAL`].
pub async fn sync_interval(core: &AppCore) -> Duration {
    match core
        .store
        .settings()
        .setting(handoff::store::SettingKey::SyncIntervalSeconds)
        .await
    {
        Ok(Some(text)) => parse_sync_interval(&text).unwrap_or_else(|refusal| {
            tracing::warn!(%refusal, "the stored sync interval is not used");
            SYNC_INTERVAL
        }),
        Ok(None) => SYNC_INTERVAL,
        Err(error) => {
            tracing::warn!(%error, "the sync interval could not be read");
            SYNC_INTERVAL
        }
    }
}

/// What the one who syncs is told.
pub trait SyncListener: Send + Sync {
    /// A sync ended (the summary), or failed (the message).
    fn synced(&self, outcome: Result<&SyncSummary, &str>);
    /// An automatic update stopped, for the owner to look at.
    fn automatic_update_stopped(&self, note: &AutomaticUpdateNote);
}

/// Who syncs on a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimedSyncer {
    /// The open window: it leaves the syncing to a daemon that serves the data folder.
    Window,
    /// The daemon.
    Daemon,
}

/// Syncs now and every `interval` after (`None`: the owner's setting, read again before
/// each wait), until `stop` turns true (with no `stop`, for as long as the process
/// lives).
pub async fn sync_on_a_timer(
    core: AppCore,
    syncer: TimedSyncer,
    interval: Option<Duration>,
    listener: impl SyncListener,
    mut stop: Option<watch::Receiver<bool>>,
) {
    loop {
        if stop.as_ref().is_some_and(|stop| *stop.borrow()) {
            return;
        }
        let daemon = match syncer {
            TimedSyncer::Window => crate::daemon_status::daemon_serving(&core.data_dir),
            TimedSyncer::Daemon => None,
        };
        match daemon {
            Some(daemon) => {
                tracing::debug!(
                    pid = daemon.pid,
                    "the daemon serves this data folder: the window leaves the timed sync to it"
                )
            }
            None => sync_once(&core, &listener).await,
        }
        let interval = match interval {
            Some(interval) => interval,
            None => sync_interval(&core).await,
        };
        match &mut stop {
            Some(stop) => {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    changed = stop.changed() => {
                        if changed.is_err() {
                            tracing::debug!("nobody can tell the timed sync to stop any more");
                            tokio::time::sleep(interval).await;
                        }
                    }
                }
            }
            None => tokio::time::sleep(interval).await,
        }
    }
}

async fn sync_once(core: &AppCore, listener: &impl SyncListener) {
    match session::session_status(core).await {
        Ok(status) if status.signed_in => {}
        Ok(_) => {
            tracing::debug!("the timed sync waits for a sign-in");
            return;
        }
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "the timed sync was skipped: whether this installation is signed in cannot be read");
            return;
        }
    }
    match session::sync_now(core).await {
        Ok(summary) => {
            listener.synced(Ok(&summary));
            summary
                .automatic_updates
                .iter()
                .filter(|note| note.decision == handoff::domain::AutomaticDecision::Stopped)
                .for_each(|note| listener.automatic_update_stopped(note));
        }
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "the timed sync failed");
            listener.synced(Err(&error.message));
        }
    }
    match session::prune_kept_copies(core).await {
        Ok(0) => {}
        Ok(dropped) => tracing::info!(
            dropped,
            "kept working copies of merged or idle items were dropped"
        ),
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "the kept working copies could not be pruned")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owners_sync_interval_is_whole_seconds_and_not_too_often() {
        assert_eq!(parse_sync_interval(" 60 "), Ok(Duration::from_secs(60)));
        assert_eq!(parse_sync_interval("30"), Ok(SHORTEST_SYNC_INTERVAL));
        assert!(parse_sync_interval("29")
            .unwrap_err()
            .contains("too often: at least 30 s"));
        assert!(parse_sync_interval("5m")
            .unwrap_err()
            .contains("not a number of seconds"));
    }
}
