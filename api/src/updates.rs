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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
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

/// The public half of the development update key (minisign, base64 of its .pub file),
/// whose secret half is in `test-support/keys/` for the tests: the key builds from this
/// repository trust unless a release key is given (`.cargo/config.toml`).
pub const DEVELOPMENT_UPDATE_PUBLIC_KEY: &str = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6IDc5RTMzQTgxRjc2NEVGODUKUldTRjcyVDNnVHJqZVF0SXRZTXF2eTlNd0ZZejJodHFOZXlTclVNQm1iK3ZHUy9LMTJ4b3p4b1EK";

/// The key a build installs updates with: its minisign key id, and whether it is the
/// development key (anyone may sign with it: never a release's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateKeyRecord {
    /// The key id as minisign prints it (`79E33A81F764EF85`), or `unreadable`.
    pub id: String,
    pub development: bool,
}

/// The key of `public_key` (base64 of a minisign .pub file, as a build is given it).
pub fn update_key_of(public_key: &str) -> UpdateKeyRecord {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let id = engine
        .decode(public_key.trim())
        .ok()
        .and_then(|file| String::from_utf8(file).ok())
        .and_then(|file| file.lines().nth(1).map(str::to_owned))
        .and_then(|key| engine.decode(key.trim()).ok())
        // "Ed", the key id (8 bytes, little-endian), then the key itself.
        .filter(|bytes| bytes.len() == 42 && bytes.starts_with(b"Ed"))
        .map(|bytes| {
            bytes[2..10]
                .iter()
                .rev()
                .map(|b| format!("{b:02X}"))
                .collect()
        })
        .unwrap_or_else(|| "unreadable".to_owned());
    UpdateKeyRecord {
        id,
        development: public_key.trim() == DEVELOPMENT_UPDATE_PUBLIC_KEY,
    }
}

/// The Updates tab of Settings.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UpdateSettings {
    pub current_version: String,
    pub installed_as: InstalledAs,
    /// The feed's address, when one is set.
    pub feed: Option<String>,
    /// The key an update's signature must be of.
    pub update_key: UpdateKeyRecord,
}

/// A newer version the feed offers.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AvailableUpdate {
    pub version: String,
    /// When it was published, as the feed says.
    pub published: Option<String>,
    /// Its notes, rendered and sanitized.
    pub notes_html: String,
}

/// What asking the feed found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
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
/// feed, and the key updates must be signed with (`update_public_key`, built in).
pub async fn update_settings(
    core: &AppCore,
    current_version: &str,
    installed_as: InstalledAs,
    update_public_key: &str,
) -> Result<UpdateSettings, CodedError> {
    Ok(UpdateSettings {
        current_version: current_version.to_owned(),
        installed_as,
        feed: core
            .store
            .settings()
            .setting(SettingKey::UpdateFeed)
            .await?,
        update_key: update_key_of(update_public_key),
    })
}

/// The feed's address, when one is set.
pub async fn update_feed(core: &AppCore) -> Result<Option<String>, CodedError> {
    Ok(core
        .store
        .settings()
        .setting(SettingKey::UpdateFeed)
        .await?)
}

/// Sets the feed (https, or http on this machine), or unsets it when `address` is empty.
pub async fn set_update_feed(core: &AppCore, address: &str) -> Result<(), CodedError> {
    let address = address.trim();
    if address.is_empty() {
        core.store
            .settings()
            .remove_setting(SettingKey::UpdateFeed)
            .await?;
        return Ok(());
    }
    check_secret_address(address).map_err(|refusal| CodedError {
        code: ErrorCode::InvalidInput,
        message: format!("the update feed {address:?} is refused: {refusal}"),
        fix: None,
    })?;
    core.store
        .settings()
        .set_setting(SettingKey::UpdateFeed, address)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_development_key_is_told_apart_by_its_id() {
        assert_eq!(
            update_key_of(DEVELOPMENT_UPDATE_PUBLIC_KEY),
            UpdateKeyRecord {
                id: "79E33A81F764EF85".to_owned(),
                development: true,
            }
        );
        // Another key, in minisign's format: its id, and not the development one.
        let release = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6IDA4OEMxMjY1MjA4NzA5REEKUldUYUNZY2daUktNQ0tEYnVHb0xUNy9Uemk3OE1naGNMMCtJTFB5NnhRT1FtdW8zMEdna1lvMGkK";
        assert_eq!(
            update_key_of(release),
            UpdateKeyRecord {
                id: "088C1265208709DA".to_owned(),
                development: false,
            }
        );
        assert_eq!(update_key_of("not a key").id, "unreadable");
    }

    #[test]
    fn the_development_key_is_the_one_the_repositorys_builds_get() {
        let config = include_str!("../../.cargo/config.toml");
        assert!(
            config.contains(&format!(
                "HANDOFF_UPDATE_PUBLIC_KEY = \"{DEVELOPMENT_UPDATE_PUBLIC_KEY}\""
            )),
            "the development key here and in .cargo/config.toml differ"
        );
    }
}
