//! Updates of the installed app, as the page sees them: the version running, how it was
//! installed, the update feed the owner set (nothing is asked until one is), and a newer
//! version the feed offers, with its notes rendered to sanitized HTML (the feed's text is
//! not Handoff's). Asking the feed, checking the signature and installing are the desktop
//! shell's (Tauri's updater); what it finds comes back here as records.

use serde::Serialize;

use crate::AppCore;
use handoff::error_code::{CodedError, ErrorCode};
use handoff::markdown::render_markdown;
use handoff::service_address::check_secret_address;
use handoff::store::SettingKey;

/// How the running app was installed, which says how an update is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum InstalledAs {
    /// An AppImage: the update replaces the file.
    AppImage,
    /// The .deb: the update is installed as a package (which asks for the administrator's
    /// password).
    Deb,
    /// Built from the sources or copied by hand: updates come the same way.
    Other,
}

/// The Updates tab of Settings.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSettings {
    pub current_version: String,
    pub installed_as: InstalledAs,
    /// The feed's address, when one is set.
    pub feed: Option<String>,
}

/// A newer version the feed offers.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AvailableUpdate {
    pub version: String,
    /// When it was published, as the feed says.
    pub published: Option<String>,
    /// Its notes, rendered and sanitized.
    pub notes_html: String,
}

/// What asking the feed found.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCheck {
    pub current_version: String,
    /// None: this is the newest version.
    pub available: Option<AvailableUpdate>,
}

impl AvailableUpdate {
    /// A newer version, with notes as the feed gave them (markdown, untrusted).
    pub fn new(version: String, published: Option<String>, notes: Option<&str>) -> Self {
        AvailableUpdate {
            version,
            published,
            notes_html: render_markdown(notes.unwrap_or("")),
        }
    }
}

/// The Updates tab: the version running (`current_version`), how it was installed, the
/// feed.
pub async fn update_settings(
    core: &AppCore,
    current_version: &str,
    installed_as: InstalledAs,
) -> Result<UpdateSettings, CodedError> {
    Ok(UpdateSettings {
        current_version: current_version.to_owned(),
        installed_as,
        feed: core.store.setting(SettingKey::UpdateFeed).await?,
    })
}

/// The feed's address, when one is set.
pub async fn update_feed(core: &AppCore) -> Result<Option<String>, CodedError> {
    Ok(core.store.setting(SettingKey::UpdateFeed).await?)
}

/// Sets the feed (https, or http on this machine), or unsets it when `address` is empty.
pub async fn set_update_feed(core: &AppCore, address: &str) -> Result<(), CodedError> {
    let address = address.trim();
    if address.is_empty() {
        core.store.remove_setting(SettingKey::UpdateFeed).await?;
        return Ok(());
    }
    check_secret_address(address).map_err(|refusal| CodedError {
        code: ErrorCode::InvalidInput,
        message: format!("the update feed {address:?} is refused: {refusal}"),
    })?;
    core.store
        .set_setting(SettingKey::UpdateFeed, address)
        .await?;
    Ok(())
}
