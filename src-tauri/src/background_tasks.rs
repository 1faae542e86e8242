//! What the app does on its own while it is open: follow the mirror (tell the page what
//! changed and whether it still follows, turn run events into OS notifications, end runs
//! nothing drives any more) and sync with GitHub on a timer.

use std::time::Duration;

use handoff::domain::AutomaticDecision;
use handoff_api::mirror_following::{
    follow_the_mirror, FollowingPace, MirrorFollowing, MirrorListener,
};
use handoff_api::records::MirrorChangesRecord;
use handoff_api::session::{self, RunNotice};
use handoff_api::AppCore;
use tauri::{AppHandle, Emitter as _};

use crate::notifications;

/// The event that tells the page what in the mirror changed.
pub const MIRROR_CHANGED: &str = "mirror-changed";
/// The event that tells the page about a run event (it shows it and offers its card).
pub const RUN_EVENT: &str = "run-event";

/// The event that tells the page whether it follows the mirror's changes.
pub const MIRROR_FOLLOWING: &str = "mirror-following";

/// How often the app syncs with GitHub by itself.
const SYNC_INTERVAL: Duration = Duration::from_secs(5 * 60);

pub fn spawn_all(app: AppHandle, core: AppCore) {
    let app_for_the_timer = app.clone();
    tauri::async_runtime::spawn(follow_the_mirror(
        core.clone(),
        WindowListener(app),
        FollowingPace::default(),
    ));
    tauri::async_runtime::spawn(sync_on_a_timer(app_for_the_timer, core));
}

/// The window's side of following the mirror: events for the page, and notifications.
struct WindowListener(AppHandle);

impl MirrorListener for WindowListener {
    fn mirror_changed(&self, changes: MirrorChangesRecord) {
        if let Err(error) = self.0.emit(MIRROR_CHANGED, &changes) {
            tracing::warn!(%error, "telling the page the mirror changed");
        }
    }

    fn run_notice(&self, notice: RunNotice) {
        notifications::show(&self.0, &notice);
        if let Err(error) = self.0.emit(RUN_EVENT, &notice) {
            tracing::warn!(%error, "telling the page about a run event");
        }
    }

    fn following(&self, following: MirrorFollowing) {
        if let Err(error) = self.0.emit(MIRROR_FOLLOWING, &following) {
            tracing::warn!(%error, "telling the page whether it follows the mirror");
        }
    }
}

/// What the sync changes reaches the page through [`follow_the_mirror`].
async fn sync_on_a_timer(app: AppHandle, core: AppCore) {
    loop {
        match session::session_status(&core).await {
            Ok(status) if status.signed_in => {
                match session::sync_now(&core).await {
                    // An automatic update that stopped is the owner's to look at.
                    Ok(summary) => summary
                        .automatic_updates
                        .iter()
                        .filter(|note| note.decision == AutomaticDecision::Stopped)
                        .for_each(|note| notifications::show_automatic_update(&app, note)),
                    Err(error) => {
                        tracing::warn!(code = %error.code, message = %error.message, "the timed sync failed");
                    }
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
