//! Where GitHub is: the REST API base and the web base (for device-flow sign-in). Both
//! are configurable, so Handoff talks to github.com, a GitHub Enterprise server, or the
//! fake GitHub of the tests through the same code.

use serde::Serialize;

use super::error::GithubError;
use crate::store::{SettingKey, Store, StoreError};

pub const GITHUB_COM_API: &str = "https://api.github.com";
pub const GITHUB_COM_WEB: &str = "https://github.com";

/// The two bases, without trailing slashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GithubEndpoints {
    pub api_base: String,
    pub web_base: String,
}

impl Default for GithubEndpoints {
    fn default() -> Self {
        GithubEndpoints {
            api_base: GITHUB_COM_API.to_owned(),
            web_base: GITHUB_COM_WEB.to_owned(),
        }
    }
}

fn normalized(address: &str) -> Result<String, GithubError> {
    let trimmed = address.trim().trim_end_matches('/');
    let (scheme, rest) = trimmed
        .split_once("://")
        .ok_or_else(|| GithubError::BadAddress(address.to_owned()))?;
    let host = rest.split('/').next().unwrap_or_default();
    if !matches!(scheme, "http" | "https")
        || host.is_empty()
        || trimmed.contains(char::is_whitespace)
    {
        return Err(GithubError::BadAddress(address.to_owned()));
    }
    Ok(trimmed.to_owned())
}

impl GithubEndpoints {
    /// Endpoints from an API base; the web base is guessed the way GitHub lays them out
    /// (`https://api.github.com` → `https://github.com`, `https://HOST/api/v3` →
    /// `https://HOST`), unless given.
    pub fn new(api_base: &str, web_base: Option<&str>) -> Result<Self, GithubError> {
        let api_base = normalized(api_base)?;
        let web_base = match web_base {
            Some(web) => normalized(web)?,
            None if api_base == GITHUB_COM_API => GITHUB_COM_WEB.to_owned(),
            None => api_base
                .strip_suffix("/api/v3")
                .unwrap_or(&api_base)
                .to_owned(),
        };
        Ok(GithubEndpoints { api_base, web_base })
    }

    /// The host (and port) of the API, which names the keyring entry of its token.
    pub fn api_host(&self) -> String {
        self.api_base
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    }

    /// The endpoints this installation is configured for (github.com if none).
    pub async fn configured(store: &Store) -> Result<Self, GithubError> {
        let api = store.setting(SettingKey::GithubApiBase).await?;
        let web = store.setting(SettingKey::GithubWebBase).await?;
        match api {
            Some(api) => GithubEndpoints::new(&api, web.as_deref()),
            None => Ok(GithubEndpoints::default()),
        }
    }

    /// Remembers these endpoints as the installation's.
    pub async fn save(&self, store: &Store) -> Result<(), StoreError> {
        store
            .set_setting(SettingKey::GithubApiBase, &self.api_base)
            .await?;
        store
            .set_setting(SettingKey::GithubWebBase, &self.web_base)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_base_follows_the_api_base() {
        assert_eq!(
            GithubEndpoints::new("https://api.github.com/", None).unwrap(),
            GithubEndpoints::default()
        );
        let enterprise = GithubEndpoints::new("https://git.example.com/api/v3", None).unwrap();
        assert_eq!(enterprise.web_base, "https://git.example.com");
        assert_eq!(enterprise.api_host(), "git.example.com");
        let fake = GithubEndpoints::new("http://127.0.0.1:4000", None).unwrap();
        assert_eq!(fake.api_host(), "127.0.0.1:4000");
    }

    #[test]
    fn bad_addresses_are_refused() {
        for address in ["api.github.com", "ftp://x", "https://", "http://a b"] {
            assert!(GithubEndpoints::new(address, None).is_err(), "{address}");
        }
    }
}
