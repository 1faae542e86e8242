//! Updating the installed app with Tauri's updater: the owner's update feed is asked
//! for a newer version; installing downloads its package, checks its minisign
//! signature against the key built into this app (a package signed with any other key
//! is refused and nothing changes), and replaces the AppImage or installs the .deb.
//! Restarting into the new version is the owner's choice (the page offers it).
//!
//! The key is `HANDOFF_UPDATE_PUBLIC_KEY` when the app was built: release builds give
//! the release key's public half; other builds get the development key from
//! `.cargo/config.toml`, whose private half is in `test-support/keys/` for the tests.

use std::sync::Mutex;

use handoff_api::core_types::{CodedError, ErrorCode};
use handoff_api::updates::{AvailableUpdate, InstalledAs, UpdateCheck};
use tauri::AppHandle;
use tauri_plugin_updater::{Update, UpdaterExt as _};

/// The public half of the key updates must be signed with (minisign, base64).
pub const UPDATE_PUBLIC_KEY: &str = env!("HANDOFF_UPDATE_PUBLIC_KEY");

/// The update a check found, kept for the install the owner asks for next.
#[derive(Default)]
pub struct PendingUpdate(Mutex<Option<Update>>);

fn unavailable(message: String) -> CodedError {
    CodedError {
        code: ErrorCode::UpdateUnavailable,
        message,
        fix: None,
    }
}

/// How this app was installed.
pub fn installed_as() -> InstalledAs {
    match tauri::utils::platform::bundle_type() {
        Some(tauri::utils::config::BundleType::AppImage) => InstalledAs::AppImage,
        Some(tauri::utils::config::BundleType::Deb) => InstalledAs::Deb,
        _ => InstalledAs::Other,
    }
}

/// Asks `feed` whether a version newer than this one exists.
pub async fn check(
    app: &AppHandle,
    pending: &PendingUpdate,
    feed: Option<String>,
) -> Result<UpdateCheck, CodedError> {
    let feed = feed.ok_or_else(|| {
        unavailable("no update feed is set: Settings → Updates takes its address".to_owned())
    })?;
    let endpoint = feed.parse().map_err(|error| {
        unavailable(format!(
            "the update feed {feed:?} is not an address: {error}"
        ))
    })?;
    let updater = app
        .updater_builder()
        .pubkey(UPDATE_PUBLIC_KEY)
        .endpoints(vec![endpoint])
        .and_then(|builder| builder.build())
        .map_err(|error| unavailable(format!("the updater cannot ask {feed}: {error}")))?;
    let found = updater
        .check()
        .await
        .map_err(|error| unavailable(format!("{feed} could not be read: {error}")))?;
    let current_version = app.package_info().version.to_string();
    let available = found.as_ref().map(|update| {
        AvailableUpdate::new(
            update.version.clone(),
            update.date.map(|date| date.to_string()),
            update.body.as_deref(),
        )
    });
    tracing::info!(feed = %feed, newer = ?available.as_ref().map(|update| &update.version), "asked the update feed");
    *pending
        .0
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = found;
    Ok(UpdateCheck {
        current_version,
        available,
    })
}

/// Downloads and installs the version the last check found (`version`, so that the
/// owner installs what was shown); its signature is checked before anything changes.
pub async fn install(pending: &PendingUpdate, version: &str) -> Result<(), CodedError> {
    let update = pending
        .0
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
        .filter(|update| update.version == version)
        .ok_or_else(|| {
            unavailable(format!(
                "version {version} was not found by the last check: check again"
            ))
        })?;
    update
        .download_and_install(|_, _| {}, || {})
        .await
        .map_err(|error| {
            let refused = matches!(
                error,
                tauri_plugin_updater::Error::Minisign(_)
                    | tauri_plugin_updater::Error::Base64(_)
                    | tauri_plugin_updater::Error::SignatureUtf8(_)
                    | tauri_plugin_updater::Error::InvalidUpdaterFormat
            );
            tracing::warn!(%version, %error, refused, "the update was not installed");
            CodedError {
                code: if refused {
                    ErrorCode::UpdateRefused
                } else {
                    ErrorCode::UpdateUnavailable
                },
                message: format!("version {version} was not installed: {error}"),
                fix: None,
            }
        })?;
    tracing::info!(%version, "an update was installed; it runs after a restart");
    Ok(())
}
