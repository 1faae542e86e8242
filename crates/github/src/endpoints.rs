//! Where GitHub is: the REST API base, and the web base (git over HTTPS, device-flow
//! sign-in) derived from it. Only the API base is a setting, so Handoff talks to
//! github.com, a GitHub Enterprise server, or the fake GitHub of the tests through the
//! same code — and the token (kept in the keyring per API host) can only ever go to the
//! host it was made for: the web base is never configured apart from the API base, and
//! both must be https (plain http only to this machine).

use serde::Serialize;

use super::error::GithubError;
use handoff_domain::service_address::{check_secret_address, AddressRefusal};
use handoff_store::{SettingKey, Store, StoreError};

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
    if trimmed.contains(char::is_whitespace) || trimmed.contains('@') {
        return Err(GithubError::BadAddress(address.to_owned()));
    }
    check_secret_address(trimmed).map_err(|refusal| match refusal {
        AddressRefusal::NotHttp(_) => GithubError::BadAddress(address.to_owned()),
        refusal @ AddressRefusal::PlainHttpElsewhere(_) => {
            GithubError::InsecureAddress(refusal.to_string())
        }
    })?;
    Ok(trimmed.to_owned())
}

impl GithubEndpoints {
    /// Endpoints from an API base; the web base follows from it the way GitHub lays them
    /// out (`https://api.github.com` → `https://github.com`, `https://HOST/api/v3` →
    /// `https://HOST`, anything else → the same address).
    pub fn new(api_base: &str) -> Result<Self, GithubError> {
        let api_base = normalized(api_base)?;
        let web_base = if api_base == GITHUB_COM_API {
            GITHUB_COM_WEB.to_owned()
        } else {
            api_base
                .strip_suffix("/api/v3")
                .unwrap_or(&api_base)
                .to_owned()
        };
        Ok(GithubEndpoints { api_base, web_base })
    }

    /// The root GraphQL's `/graphql` is under: the API base itself for github.com (and
    /// the fake), `https://HOST/api` for GitHub Enterprise (whose REST base is
    /// `https://HOST/api/v3`).
    pub fn graphql_root(&self) -> String {
        self.api_base
            .strip_suffix("/v3")
            .filter(|root| root.ends_with("/api"))
            .unwrap_or(&self.api_base)
            .to_owned()
    }

    /// The host (and port) of the API, which names the keyring entry of its token.
    pub fn api_host(&self) -> String {
        self.api_base
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    }

    /// The endpoints this installation is configured for (github.com if none). A web
    /// base stored by an older version is ignored: it always follows the API base.
    pub async fn configured(store: &Store) -> Result<Self, GithubError> {
        match store.settings().setting(SettingKey::GithubApiBase).await? {
            Some(api) => GithubEndpoints::new(&api),
            None => Ok(GithubEndpoints::default()),
        }
    }

    /// Remembers these endpoints as the installation's.
    pub async fn save(&self, store: &Store) -> Result<(), StoreError> {
        store
            .settings()
            .set_setting(SettingKey::GithubApiBase, &self.api_base)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_base_follows_the_api_base() {
        assert_eq!(
            GithubEndpoints::new("https://api.github.com/").unwrap(),
            GithubEndpoints::default()
        );
        assert_eq!(GithubEndpoints::default().graphql_root(), GITHUB_COM_API);
        let enterprise = GithubEndpoints::new("https://git.example.com/api/v3").unwrap();
        assert_eq!(enterprise.web_base, "https://git.example.com");
        assert_eq!(enterprise.api_host(), "git.example.com");
        assert_eq!(enterprise.graphql_root(), "https://git.example.com/api");
        let fake = GithubEndpoints::new("http://127.0.0.1:4000").unwrap();
        assert_eq!(fake.api_host(), "127.0.0.1:4000");
        assert_eq!(fake.web_base, "http://127.0.0.1:4000");
    }

    #[test]
    fn bad_addresses_are_refused() {
        for address in [
            "api.github.com",
            "ftp://x",
            "https://",
            "http://a b",
            "https://user@evil.example",
        ] {
            assert!(
                matches!(
                    GithubEndpoints::new(address),
                    Err(GithubError::BadAddress(_))
                ),
                "{address}"
            );
        }
        assert!(matches!(
            GithubEndpoints::new("http://git.example.com/api/v3"),
            Err(GithubError::InsecureAddress(_))
        ));
    }

    #[tokio::test]
    async fn a_web_base_written_into_the_database_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in(dir.path()).await.unwrap();
        store
            .settings()
            .set_setting(SettingKey::GithubApiBase, "https://git.example.com/api/v3")
            .await
            .unwrap();
        store
            .settings()
            .set_setting(SettingKey::GithubWebBase, "https://evil.example")
            .await
            .unwrap();
        let endpoints = GithubEndpoints::configured(&store).await.unwrap();
        assert_eq!(endpoints.web_base, "https://git.example.com");
        store
            .settings()
            .set_setting(SettingKey::GithubApiBase, "http://git.example.com/api/v3")
            .await
            .unwrap();
        assert!(matches!(
            GithubEndpoints::configured(&store).await,
            Err(GithubError::InsecureAddress(_))
        ));
    }
}
