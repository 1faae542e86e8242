//! What can go wrong talking to GitHub. Every message names the request (method and
//! path) and never carries a secret: errors from the HTTP library pass through
//! [`handoff_store::secrets::redact`] before they become text.

use chrono::{DateTime, Utc};

use handoff_domain::error_code::{CodedError, ErrorCode};
use handoff_domain::fix::Fix;
use handoff_store::secrets::SecretError;
use handoff_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error("not signed in to GitHub at {api_base}")]
    NotSignedIn { api_base: String },
    #[error("GitHub refused the token ({request}: 401): it has expired or was revoked")]
    Unauthorized { request: String },
    #[error("GitHub forbids {request}: {message}")]
    Forbidden { request: String, message: String },
    #[error("GitHub has no such thing: {request} answered 404")]
    NotFound { request: String },
    #[error("GitHub's rate limit is used up until {reset_at} ({request}); try again later")]
    RateLimited {
        request: String,
        reset_at: DateTime<Utc>,
    },
    #[error("GitHub refused {request}: {message}")]
    Unprocessable { request: String, message: String },
    #[error("GitHub failed on {request} with {status}; try again later")]
    Server { request: String, status: u16 },
    #[error("GitHub cannot be reached for {request}: {detail}")]
    Unreachable { request: String, detail: String },
    #[error("GitHub gave an answer Handoff cannot read for {request}: {detail}")]
    MalformedAnswer { request: String, detail: String },
    #[error("bad GitHub address {0:?}: expected an http(s) URL such as https://api.github.com")]
    BadAddress(String),
    #[error("refusing to send the GitHub token to {0}")]
    InsecureAddress(String),
    #[error("sign-in did not complete: {0}")]
    SignIn(String),
    #[error("{0}")]
    Secrets(#[from] SecretError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl GithubError {
    /// True for failures that may pass by themselves (network, 5xx, rate limit): the
    /// outbox keeps such writes and tries again later.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            GithubError::Unreachable { .. }
                | GithubError::Server { .. }
                | GithubError::RateLimited { .. }
        )
    }

    /// True when GitHub refuses because the token lacks a permission this request needs
    /// (a fine-grained token: "Resource not accessible by personal access token").
    pub fn is_permission_missing(&self) -> bool {
        matches!(self, GithubError::Forbidden { message, .. }
            if message.contains("Resource not accessible by"))
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            GithubError::NotSignedIn { .. } | GithubError::Unauthorized { .. } => {
                ErrorCode::GithubAuth
            }
            GithubError::Forbidden { .. } => ErrorCode::GithubForbidden,
            GithubError::NotFound { .. } => ErrorCode::NotFound,
            GithubError::RateLimited { .. } => ErrorCode::GithubRateLimited,
            GithubError::Unprocessable { .. } => ErrorCode::GithubRefused,
            GithubError::Server { .. } | GithubError::Unreachable { .. } => {
                ErrorCode::GithubUnreachable
            }
            GithubError::MalformedAnswer { .. } => ErrorCode::GithubMalformedAnswer,
            GithubError::BadAddress(_) | GithubError::InsecureAddress(_) => ErrorCode::InvalidInput,
            GithubError::SignIn(_) => ErrorCode::GithubAuth,
            GithubError::Secrets(_) => ErrorCode::Keyring,
            GithubError::Store(error) => error.code(),
        }
    }
}

impl GithubError {
    /// The step of the owner's that gets past it, if one does.
    pub fn fix(&self) -> Option<Fix> {
        match self {
            GithubError::NotSignedIn { .. } | GithubError::Unauthorized { .. } => Some(Fix::SignIn),
            GithubError::Store(error) => error.fix(),
            _ => None,
        }
    }
}

/// What the front ends show of it: the code to act on, the message, the step past it.
impl From<GithubError> for CodedError {
    fn from(error: GithubError) -> Self {
        CodedError::new(error.code(), error.to_string()).with_fix(error.fix())
    }
}
