//! The Updates tab's commands: the version and the feed, a check, the install, and the
//! restart into the new version.

use handoff_api::updates::{self, UpdateCheck, UpdateSettings};
use tauri::State;

use super::Answer;
use crate::desktop_state::DesktopState;
use crate::updates::{installed_as, PendingUpdate};

/// The Updates tab: this version, how it was installed, the feed.
#[tauri::command]
pub async fn update_settings(state: State<'_, DesktopState>) -> Answer<UpdateSettings> {
    updates::update_settings(
        state.core()?,
        env!("CARGO_PKG_VERSION"),
        installed_as(),
        crate::updates::UPDATE_PUBLIC_KEY,
    )
    .await
}

/// Sets the update feed (or unsets it, given nothing).
#[tauri::command]
pub async fn set_update_feed(
    state: State<'_, DesktopState>,
    address: String,
) -> Answer<UpdateSettings> {
    updates::set_update_feed(state.core()?, &address).await?;
    update_settings(state).await
}

/// Asks the feed for a newer version.
#[tauri::command]
pub async fn check_for_update(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    pending: State<'_, PendingUpdate>,
) -> Answer<UpdateCheck> {
    crate::updates::check(&app, &pending, updates::update_feed(state.core()?).await?).await
}

/// Installs `version`, which the last check found, once its signature checks out.
#[tauri::command]
pub async fn install_update(pending: State<'_, PendingUpdate>, version: String) -> Answer<()> {
    crate::updates::install(&pending, &version).await
}

/// Restarts the app (into the version just installed).
#[tauri::command]
pub fn restart_app(app: tauri::AppHandle) {
    app.restart();
}
