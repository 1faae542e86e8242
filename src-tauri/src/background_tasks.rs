//! What the app does on its own while it is open: follow the mirror (tell the page what
//! changed and whether it still follows, turn run events into OS notifications, end runs
//! nothing drives any more) and sync with GitHub on a timer.

use handoff_api::mirror_following::{
    follow_the_mirror, FollowingPace, MirrorFollowing, MirrorListener,
};
use handoff_api::records::MirrorChangesRecord;
use handoff_api::session::{AutomaticUpdateNote, RunNotice, SyncSummary};
use handoff_api::timed_sync::{sync_on_a_timer, SyncListener, TimedSyncer};
use handoff_api::AppCore;
use tauri::{AppHandle, Emitter as _};

use crate::notifications;

use crate::page_events::{MIRROR_CHANGED, MIRROR_FOLLOWING, RUN_EVENT};

pub fn spawn_all(app: AppHandle, core: AppCore) {
    let app_for_the_timer = app.clone();
    tauri::async_runtime::spawn(follow_the_mirror(
        core.clone(),
        WindowListener(app),
        FollowingPace::default(),
    ));
    // The window syncs for as long as it is open.
    tauri::async_runtime::spawn(sync_on_a_timer(
        core,
        TimedSyncer::Window,
        None,
        WindowSyncListener(app_for_the_timer),
        None,
    ));
}

/// The window's side of following the mirror: events for the page, and notifications.
struct WindowListener(AppHandle);

impl MirrorListener for WindowListener {
    fn mirror_changed(&self, changes: MirrorChangesRecord) {
        if let Err(error) = self.0.emit(MIRROR_CHANGED.name, &changes) {
            tracing::warn!(%error, "telling the page the mirror changed");
        }
    }

    fn run_notice(&self, notice: RunNotice) {
        notifications::show(&self.0, &notice);
        if let Err(error) = self.0.emit(RUN_EVENT.name, &notice) {
            tracing::warn!(%error, "telling the page about a run event");
        }
    }

    fn following(&self, following: MirrorFollowing) {
        if let Err(error) = self.0.emit(MIRROR_FOLLOWING.name, &following) {
            tracing::warn!(%error, "telling the page whether it follows the mirror");
        }
    }
}

/// What the timed sync tells the window: a stopped automatic update is the owner's to
/// look at. What the sync changes reaches the page through [`follow_the_mirror`].
struct WindowSyncListener(AppHandle);

impl SyncListener for WindowSyncListener {
    fn synced(&self, _outcome: Result<&SyncSummary, &str>) {}

    fn automatic_update_stopped(&self, note: &AutomaticUpdateNote) {
        notifications::show_automatic_update(&self.0, note);
    }
}
