//! What the app does on its own while it is open: notice when the mirror changed (and
//! tell the page), turn run events into OS notifications, sync with GitHub on a timer,
//! and end runs a crash left behind when it starts.

use std::time::Duration;

use handoff::app_commands::records::MirrorChangesRecord;
use handoff::app_commands::{session, AppCore};
use tauri::{AppHandle, Emitter as _};

use crate::notifications;

/// The event that tells the page what in the mirror changed.
pub const MIRROR_CHANGED: &str = "mirror-changed";
/// The event that tells the page about a run event (it shows it and offers its card).
pub const RUN_EVENT: &str = "run-event";

/// How often the app looks for a change to the mirror: one tiny query.
const POLL_INTERVAL: Duration = Duration::from_millis(750);
/// How often the app syncs with GitHub by itself.
const SYNC_INTERVAL: Duration = Duration::from_secs(5 * 60);

pub fn spawn_all(app: AppHandle, core: AppCore) {
    tauri::async_runtime::spawn(follow_the_mirror(app.clone(), core.clone()));
    tauri::async_runtime::spawn(sync_on_a_timer(core));
}

/// Ends runs a crash left behind, then, whenever any process commits to the mirror,
/// tells the page and turns new run events into notifications. Run events are only
/// written by commits, so they are looked for only after one.
async fn follow_the_mirror(app: AppHandle, core: AppCore) {
    match session::reconcile_abandoned_runs(&core).await {
        Ok(ended) if !ended.is_empty() => {
            tracing::info!(runs = ended.len(), "ended runs a crash left behind");
        }
        Ok(_) => {}
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "runs a crash left behind could not be ended");
        }
    }
    let mut watch = match core.store.watch_changes().await {
        Ok(watch) => watch,
        Err(error) => {
            tracing::error!(%error, "the mirror cannot be watched: the window will not refresh by itself");
            return;
        }
    };
    notify_run_events(&app, &core).await;
    loop {
        tokio::time::sleep(POLL_INTERVAL).await;
        match watch.changes().await {
            Ok(Some(changes)) => {
                // A heartbeat or a log line changed nothing the page shows.
                if !changes.is_empty() {
                    let changes = MirrorChangesRecord::from(changes);
                    if let Err(error) = app.emit(MIRROR_CHANGED, &changes) {
                        tracing::warn!(%error, "telling the page the mirror changed");
                    }
                }
                notify_run_events(&app, &core).await;
            }
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, "the mirror can no longer be watched");
                return;
            }
        }
    }
}

async fn notify_run_events(app: &AppHandle, core: &AppCore) {
    let notices = match session::take_run_notices(core).await {
        Ok(notices) => notices,
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "run events could not be read");
            return;
        }
    };
    for notice in notices {
        notifications::show(app, &notice);
        if let Err(error) = app.emit(RUN_EVENT, &notice) {
            tracing::warn!(%error, "telling the page about a run event");
        }
    }
}

/// What the sync changes reaches the page through [`follow_the_mirror`].
async fn sync_on_a_timer(core: AppCore) {
    loop {
        match session::session_status(&core).await {
            Ok(status) if status.signed_in => {
                if let Err(error) = session::sync_now(&core).await {
                    tracing::warn!(code = %error.code, message = %error.message, "the timed sync failed");
                }
                match session::prune_kept_copies(&core).await {
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
            Ok(_) => tracing::debug!("the timed sync waits for a sign-in"),
            Err(error) => {
                tracing::warn!(code = %error.code, message = %error.message, "the timed sync was skipped: whether this installation is signed in cannot be read");
            }
        }
        tokio::time::sleep(SYNC_INTERVAL).await;
    }
}
