//! Secrets in the OS keyring: the GitHub token, the E2B key, agents' API keys.
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

/// The openings of the tokens and keys Handoff handles: GitHub's token kinds, the agent
/// providers' API keys and E2B's keys.
const TOKEN_OPENINGS: &[&str] = &[
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "sk-ant-",
    "sk-proj-",
    "sk-",
    "e2b_",
];

/// The fewest characters after an opening for a word to count as a token.
const TOKEN_BODY_MIN: usize = 16;

/// Replaces every word that looks like a token or key (one of the known openings,
/// then at least 16 letters, digits, `_` or `-`) with its opening and `[redacted]`.
/// For text whose secrets are not known one by one, like the log file.
pub fn redact_token_shapes(text: &str) -> std::borrow::Cow<'_, str> {
    let is_body =
        |character: char| character.is_ascii_alphanumeric() || matches!(character, '_' | '-');
    let mut out: Option<String> = None;
    let mut copied_up_to = 0;
    let mut position = 0;
    while position < text.len() {
        let rest = &text[position..];
        let starts_a_word = text[..position]
            .chars()
            .next_back()
            .is_none_or(|before| !is_body(before));
        let opening = starts_a_word
            .then(|| {
                TOKEN_OPENINGS
                    .iter()
                    .find(|opening| rest.starts_with(**opening))
            })
            .flatten();
        if let Some(opening) = opening {
            let body_length = rest[opening.len()..]
                .find(|character: char| !is_body(character))
                .unwrap_or(rest.len() - opening.len());
            if body_length >= TOKEN_BODY_MIN {
                let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
                buffer.push_str(&text[copied_up_to..position]);
                buffer.push_str(opening);
                buffer.push_str(REDACTED);
                position += opening.len() + body_length;
                copied_up_to = position;
                continue;
            }
        }
        position += rest.chars().next().map_or(1, char::len_utf8);
    }
    match out {
        Some(mut buffer) => {
            buffer.push_str(&text[copied_up_to..]);
            std::borrow::Cow::Owned(buffer)
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// Every secret a run knows (the GitHub token, the agent's key, the E2B key) and the
/// encoded forms they travel in, scrubbed out of whatever a run stores or shows: its
/// log, its output, its failure message. An agent that prints its environment leaves
/// `[redacted]` in the log, not its key.
#[derive(Clone, Default)]
pub struct Redactor {
    /// The secret texts, longest first (so a secret inside another goes with it).
    texts: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.texts.len())
    }
}

/// What takes a secret's place.
pub const REDACTED: &str = "[redacted]";

impl Redactor {
    /// A redactor for `secrets`, each with the forms it may take on the way: as is, and
    /// as the base64 of git's `x-access-token:` basic authorization.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        use base64::Engine as _;
        let mut texts = Vec::new();
        for secret in secrets {
            let value = secret.expose();
            if value.len() < 4 {
                continue;
            }
            texts.push(value.to_owned());
            texts.push(
                base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{value}")),
            );
            texts.push(base64::engine::general_purpose::STANDARD.encode(value));
        }
        texts.sort_by_key(|text| std::cmp::Reverse(text.len()));
        texts.dedup();
        Redactor { texts }
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.texts {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }

    /// [`Redactor::redact`] over bytes (output that may not be UTF-8).
    pub fn redact_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut bytes = bytes.to_vec();
        for secret in &self.texts {
            bytes = replace_bytes(&bytes, secret.as_bytes(), REDACTED.as_bytes());
        }
        bytes
    }

    /// How many bytes at the end of `bytes` could be the start of a secret that the
    /// next piece of output completes: output to hold back, so that a secret split
    /// between two pieces of output is still found (and nothing else waits).
    pub fn possible_secret_start(&self, bytes: &[u8]) -> usize {
        self.texts
            .iter()
            .filter_map(|secret| {
                let secret = secret.as_bytes();
                (1..secret.len())
                    .rev()
                    .find(|length| bytes.ends_with(&secret[..*length]))
            })
            .max()
            .unwrap_or(0)
    }
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut index = 0;
    while index < haystack.len() {
        if haystack[index..].starts_with(needle) {
            out.extend_from_slice(with);
            index += needle.len();
        } else {
            out.push(haystack[index]);
            index += 1;
        }
    }
    out
}

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

/// What the front ends show of it: the keyring's code and the message.
impl From<SecretError> for crate::error_code::CodedError {
    fn from(error: SecretError) -> Self {
        crate::error_code::CodedError {
            code: crate::error_code::ErrorCode::Keyring,
            message: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shaped_words_are_scrubbed_and_ordinary_words_kept() {
        let text = "token=ghp_0123456789abcdefABCDEF, key sk-ant-api03-abcdefghijklmnopqrstu \
                    and e2b_0123456789abcdef0123; but ghp_short, task-ant-x, desk-0123456789abcdefghij";
        let clean = redact_token_shapes(text);
        assert_eq!(
            clean,
            "token=ghp_[redacted], key sk-ant-[redacted] \
                    and e2b_[redacted]; but ghp_short, task-ant-x, desk-0123456789abcdefghij"
        );
        assert!(matches!(
            redact_token_shapes("nothing here"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn every_form_of_a_secret_is_scrubbed() {
        use base64::Engine as _;
        let token = Secret::new("ghp_abcdefghijklmnop");
        let key = Secret::new("sk-ant-0123456789");
        let redactor = Redactor::new([&token, &key]);
        let header =
            base64::engine::general_purpose::STANDARD.encode("x-access-token:ghp_abcdefghijklmnop");
        let text = format!(
            "ANTHROPIC_API_KEY=sk-ant-0123456789\nAuthorization: Basic {header}\nghp_abcdefghijklmnop"
        );
        let clean = redactor.redact(&text);
        assert_eq!(
            clean,
            "ANTHROPIC_API_KEY=[redacted]\nAuthorization: Basic [redacted]\n[redacted]"
        );
        assert_eq!(
            redactor.redact_bytes(b"\xff key=sk-ant-0123456789 \x00"),
            b"\xff key=[redacted] \x00".to_vec()
        );
        assert_eq!(Redactor::default().redact("nothing"), "nothing");
    }

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
