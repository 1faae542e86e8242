//! What the app does on its own while it is open: notice when the mirror changed (and
//! tell the page), turn run events into OS notifications (D6), sync with GitHub on a
//! timer (D8), and end runs a crash left behind when it starts (P7).

use std::time::Duration;

use handoff::app_commands::{session, AppCore};
use tauri::{AppHandle, Emitter as _};
use tauri_plugin_notification::NotificationExt as _;

/// The event that tells the page the mirror changed.
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
    let _ = session::reconcile_abandoned_runs(&core).await;
    let Ok(mut watch) = core.store.watch_changes().await else {
        return;
    };
    notify_run_events(&app, &core).await;
    loop {
        tokio::time::sleep(POLL_INTERVAL).await;
        match watch.changed().await {
            Ok(true) => {
                let _ = app.emit(MIRROR_CHANGED, ());
                notify_run_events(&app, &core).await;
            }
            Ok(false) => {}
            Err(_) => return,
        }
    }
}

async fn notify_run_events(app: &AppHandle, core: &AppCore) {
    let Ok(events) = session::take_run_events(core).await else {
        return;
    };
    for event in events {
        let title = match event.kind.as_str() {
            "pr_opened" => "PR opened",
            "pr_updated" => "PR updated",
            "run_failed" => "Run failed",
            _ => "Run finished",
        };
        let _ = app
            .notification()
            .builder()
            .title(title)
            .body(&event.message)
            .show();
        let _ = app.emit(RUN_EVENT, &event);
    }
}

/// What the sync changes reaches the page through [`follow_the_mirror`].
async fn sync_on_a_timer(core: AppCore) {
    loop {
        if session::session_status(&core)
            .await
            .is_ok_and(|status| status.signed_in)
        {
            let _ = session::sync_now(&core).await;
        }
        tokio::time::sleep(SYNC_INTERVAL).await;
    }
}
