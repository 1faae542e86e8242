//! Tells the page when the mirror changed, whoever changed it (this app, the `handoff`
//! command line, a sync), so the dashboard is never stale.

use std::time::Duration;

use tauri::{AppHandle, Emitter as _};

use crate::desktop_state::DesktopState;

/// The event the page listens for.
pub const MIRROR_CHANGED: &str = "mirror-changed";

/// How often the watch looks; a look is one tiny query.
const POLL_INTERVAL: Duration = Duration::from_millis(750);

pub fn spawn(app: AppHandle, state: &DesktopState) {
    let Ok(store) = state.store() else { return };
    let store = store.clone();
    tauri::async_runtime::spawn(async move {
        let Ok(mut watch) = store.watch_changes().await else {
            return;
        };
        loop {
            tokio::time::sleep(POLL_INTERVAL).await;
            match watch.changed().await {
                Ok(true) => {
                    let _ = app.emit(MIRROR_CHANGED, ());
                }
                Ok(false) => {}
                Err(_) => return,
            }
        }
    });
}
