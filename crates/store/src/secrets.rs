//! Secrets in the OS keyring: the GitHub token, the E2B key, agents' API keys, each
//! under its own name; nothing else in Handoff keeps one. The value's type and its
//! scrubbing out of text are the domain's ([`handoff_domain::secret`]).

pub use handoff_domain::secret::*;

/// The keyring service name every Handoff secret is stored under.
pub const KEYRING_SERVICE: &str = "dev.handoff.desktop";

/// Which secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretName {
    /// The GitHub token for one API host (github.com, an Enterprise host, a test fake).
    GithubToken { api_host: String },
    /// The E2B API key for one E2B API host (so that a changed `e2b.api_base` finds no
    /// key to send elsewhere).
    E2bApiKey { api_host: String },
    /// The API key an agent preset needs (for example `anthropic` for claude), for one
    /// API host of that provider (so that a changed `provider.*.api_base` finds no key
    /// to send elsewhere).
    AgentApiKey { provider: String, api_host: String },
    /// A provider's key as Handoff kept it before keys were kept per API host; read only
    /// for the provider's own API host.
    AgentApiKeyOfOldVersions { provider: String },
    /// The token of a Claude Pro or Max plan (`claude setup-token`), for one API host of
    /// Anthropic's; only Claude Code's preset is ever given it.
    ClaudePlanToken { api_host: String },
}

impl SecretName {
    /// The keyring account name.
    pub fn account(&self) -> String {
        match self {
            SecretName::GithubToken { api_host } => format!("github-token@{api_host}"),
            SecretName::E2bApiKey { api_host } => format!("e2b-api-key@{api_host}"),
            SecretName::AgentApiKey { provider, api_host } => {
                format!("agent-api-key@{provider}@{api_host}")
            }
            SecretName::AgentApiKeyOfOldVersions { provider } => {
                format!("agent-api-key@{provider}")
            }
            SecretName::ClaudePlanToken { api_host } => format!("claude-plan-token@{api_host}"),
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
        // The process's keyring could not be opened when it was first used; why is kept.
        keyring::Error::NoDefaultStore => {
            SecretError::Unavailable(match keyring::Entry::store_status() {
                Err(why) => why.to_string(),
                Ok(()) => "no keyring is open".to_owned(),
            })
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
            Ok(value) => Ok(Some(Secret::new(value))),
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

/// What the front ends show of it: the keyring's code, the message, and the step past
/// it where the keyring cannot be reached.
impl From<SecretError> for handoff_domain::error_code::CodedError {
    fn from(error: SecretError) -> Self {
        let fix = matches!(error, SecretError::Unavailable(_))
            .then_some(handoff_domain::fix::Fix::StartKeyring);
        handoff_domain::error_code::CodedError::new(
            handoff_domain::error_code::ErrorCode::Keyring,
            error.to_string(),
        )
        .with_fix(fix)
    }
}
