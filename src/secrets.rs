//! Secrets in the OS keyring (D7, S2): the GitHub token, the E2B key, agents' API keys.
//!
//! Nothing else in Handoff stores a secret: not the database, not a log, not an error
//! message. A [`Secret`] prints as `[redacted]` in `Debug` and has no `Display`, so it
//! cannot slip into text by accident; [`redact`] scrubs one out of text that came from
//! elsewhere (an HTTP library's error, a process's output).

use std::fmt;

/// The keyring service name every Handoff secret is stored under.
pub const KEYRING_SERVICE: &str = "dev.handoff.desktop";

/// A secret value. Read it with [`Secret::expose`], only where it is sent.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Replaces every occurrence of `secret` in `text` with `[redacted]`.
pub fn redact(text: &str, secret: &Secret) -> String {
    if secret.0.len() < 4 {
        return text.to_owned();
    }
    text.replace(&secret.0, "[redacted]")
}

/// Which secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretName {
    /// The GitHub token for one API host (github.com, an Enterprise host, a test fake).
    GithubToken { api_host: String },
    /// The E2B API key.
    E2bApiKey,
    /// The API key an agent preset needs (for example `anthropic` for claude).
    AgentApiKey { provider: String },
}

impl SecretName {
    /// The keyring account name.
    pub fn account(&self) -> String {
        match self {
            SecretName::GithubToken { api_host } => format!("github-token@{api_host}"),
            SecretName::E2bApiKey => "e2b-api-key".to_owned(),
            SecretName::AgentApiKey { provider } => format!("agent-api-key@{provider}"),
        }
    }
}

/// Why the keyring could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "the OS keyring is not reachable ({0}); on Linux, Handoff needs a Secret Service \
         (gnome-keyring or KWallet) on the D-Bus session"
    )]
    Unavailable(String),
    #[error("the OS keyring refused the secret: {0}")]
    Refused(String),
}

/// The OS keyring.
#[derive(Debug, Clone)]
pub struct SecretStore {
    service: String,
}

impl Default for SecretStore {
    fn default() -> Self {
        SecretStore::os()
    }
}

fn keyring_error(error: keyring::Error) -> SecretError {
    match error {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            SecretError::Unavailable(inner.to_string())
        }
        other => SecretError::Refused(other.to_string()),
    }
}

impl SecretStore {
    /// The OS keyring, under Handoff's service name.
    pub fn os() -> Self {
        SecretStore {
            service: KEYRING_SERVICE.to_owned(),
        }
    }

    fn entry(&self, name: &SecretName) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, &name.account()).map_err(keyring_error)
    }

    /// The secret, or `None` when none is stored.
    pub async fn get(&self, name: &SecretName) -> Result<Option<Secret>, SecretError> {
        let entry = self.entry(name)?;
        tokio::task::spawn_blocking(move || match entry.get_password() {
            Ok(value) => Ok(Some(Secret(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(keyring_error(error)),
        })
        .await
        .map_err(|error| SecretError::Unavailable(error.to_string()))?
    }

    pub async fn set(&self, name: &SecretName, secret: &Secret) -> Result<(), SecretError> {
        let entry = self.entry(name)?;
        let value = secret.clone();
        tokio::task::spawn_blocking(move || {
            entry.set_password(value.expose()).map_err(keyring_error)
        })
        .await
        .map_err(|error| SecretError::Unavailable(error.to_string()))?
    }

    /// Removes the secret; true if there was one.
    pub async fn delete(&self, name: &SecretName) -> Result<bool, SecretError> {
        let entry = self.entry(name)?;
        tokio::task::spawn_blocking(move || match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(error) => Err(keyring_error(error)),
        })
        .await
        .map_err(|error| SecretError::Unavailable(error.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints() {
        let token = Secret::new("ghp_abcdefghijklmnop");
        assert_eq!(format!("{token:?}"), "[redacted]");
        assert_eq!(
            redact("Authorization: token ghp_abcdefghijklmnop failed", &token),
            "Authorization: token [redacted] failed"
        );
    }
}
