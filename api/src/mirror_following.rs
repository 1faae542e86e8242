//! Following the mirror while a window is open: whenever any process (this window, the
//! command line, a background run, a sync) commits something the page shows, the window
//! is told what changed, and new run events become notices. Runs nothing drives any more
//! (their process died while the window stayed open) are ended on a timer, not only at
//! start. The watch never ends for good: when reading the database fails, the window is
//! told it no longer follows changes, the watch is opened again with a growing pause,
//! and the window is told when it follows again (it then reloads what it shows).

use std::time::Duration;

use serde::Serialize;

use crate::records::MirrorChangesRecord;
use crate::session::{self, RunNotice};
use crate::AppCore;
use handoff::store::ChangeWatch;

/// What the window is told while the mirror is followed.
pub trait MirrorListener: Send + Sync {
    /// Something the page shows changed.
    fn mirror_changed(&self, changes: MirrorChangesRecord);
    /// A run event to show (and notify) once.
    fn run_notice(&self, notice: RunNotice);
    /// Whether changes are followed: once the watch first opens, and whenever that
    /// changes (with why, when not).
    fn following(&self, following: MirrorFollowing);
}

/// Whether the window follows the mirror's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MirrorFollowing {
    pub following: bool,
    /// Why not, when not.
    pub problem: Option<String>,
    /// When the watch is opened again, in seconds from now, when not following.
    pub retry_in_seconds: Option<u64>,
}

/// How often things are looked at.
#[derive(Debug, Clone, Copy)]
pub struct FollowingPace {
    /// How often the mirror is asked whether it changed: one tiny query.
    pub poll: Duration,
    /// How often runs nothing drives any more are looked for.
    pub abandoned_runs: Duration,
    /// The first pause before the watch is opened again; each failure doubles it.
    pub first_retry: Duration,
    /// The longest pause between two attempts.
    pub longest_retry: Duration,
}

impl Default for FollowingPace {
    fn default() -> Self {
        FollowingPace {
            poll: Duration::from_millis(750),
            abandoned_runs: Duration::from_secs(3),
            first_retry: Duration::from_secs(1),
            longest_retry: Duration::from_secs(30),
        }
    }
}

/// Follows the mirror for as long as the window is open (see the module's text).
pub async fn follow_the_mirror(core: AppCore, listener: impl MirrorListener, pace: FollowingPace) {
    end_runs_nothing_drives(&core).await;
    let mut last_abandoned_check = tokio::time::Instant::now();
    let mut watch = open_the_watch(&core, &listener, pace).await;
    notify_run_events(&core, &listener).await;
    loop {
        tokio::time::sleep(pace.poll).await;
        if last_abandoned_check.elapsed() >= pace.abandoned_runs {
            end_runs_nothing_drives(&core).await;
            last_abandoned_check = tokio::time::Instant::now();
        }
        match watch.changes().await {
            Ok(Some(changes)) => {
                // A heartbeat or a log line changed nothing the page shows.
                if !changes.is_empty() {
                    listener.mirror_changed(MirrorChangesRecord::from(changes));
                }
                notify_run_events(&core, &listener).await;
            }
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, "the mirror can no longer be watched; opening the watch again");
                listener.following(MirrorFollowing {
                    following: false,
                    problem: Some(error.to_string()),
                    retry_in_seconds: Some(pace.first_retry.as_secs().max(1)),
                });
                watch = open_the_watch(&core, &listener, pace).await;
                // Changes made meanwhile were not seen: the page reloads everything.
                listener.mirror_changed(MirrorChangesRecord::everything());
                notify_run_events(&core, &listener).await;
            }
        }
    }
}

/// Opens the watch, trying again with a growing pause until it opens; says that it
/// follows once it does (at the start, and again after failing).
async fn open_the_watch(
    core: &AppCore,
    listener: &impl MirrorListener,
    pace: FollowingPace,
) -> ChangeWatch {
    let mut pause = pace.first_retry;
    let mut failed = false;
    loop {
        match core.store.watch_changes().await {
            Ok(watch) => {
                if failed {
                    tracing::info!("the mirror is watched again");
                }
                listener.following(MirrorFollowing {
                    following: true,
                    problem: None,
                    retry_in_seconds: None,
                });
                return watch;
            }
            Err(error) => {
                failed = true;
                tracing::error!(%error, retry_in = ?pause, "the mirror cannot be watched");
                listener.following(MirrorFollowing {
                    following: false,
                    problem: Some(error.to_string()),
                    retry_in_seconds: Some(pause.as_secs().max(1)),
                });
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(pace.longest_retry);
            }
        }
    }
}

/// Ends runs whose process is gone (it died while the window stayed open, or before it
/// opened) or has been silent too long; a cancel asked of such a run is answered this
/// way too. Queued runs whose process is gone are taken over and driven here instead.
pub(crate) async fn end_runs_nothing_drives(core: &AppCore) {
    match session::pick_up_runs_left_behind(core).await {
        Ok(picked) => {
            if !picked.ended.is_empty() {
                tracing::info!(
                    runs = picked.ended.len(),
                    "ended runs nothing drives any more"
                );
            }
            if !picked.taken_over.is_empty() {
                tracing::info!(runs = ?picked.taken_over, "took over queued runs whose process stopped");
            }
        }
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "runs nothing drives any more could not be ended or taken over");
        }
    }
}

async fn notify_run_events(core: &AppCore, listener: &impl MirrorListener) {
    match session::take_run_notices(core).await {
        Ok(notices) => {
            for notice in notices {
                listener.run_notice(notice);
            }
        }
        Err(error) => {
            tracing::warn!(code = %error.code, message = %error.message, "run events could not be read");
        }
    }
}
