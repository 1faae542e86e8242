//! How a command fails: a one-line message and an exit code that tells usage errors
//! (2) from failures and refusals (1).

use crate::error_code::ErrorCode;
use crate::store::StoreError;

/// Exit code of a command that was understood but failed or was refused.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of a command line that can never work as written.
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The input can never be right: fix the command line.
    #[error("{0}")]
    Usage(String),
    /// The command failed or was refused.
    #[error("{0}")]
    Failure(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Failure(_) => EXIT_FAILURE,
        }
    }
}

impl From<crate::github::GithubError> for CliError {
    fn from(error: crate::github::GithubError) -> Self {
        match error.code() {
            ErrorCode::InvalidInput => CliError::Usage(error.to_string()),
            _ => CliError::Failure(error.to_string()),
        }
    }
}

impl From<crate::secrets::SecretError> for CliError {
    fn from(error: crate::secrets::SecretError) -> Self {
        CliError::Failure(error.to_string())
    }
}

impl From<StoreError> for CliError {
    fn from(error: StoreError) -> Self {
        match error.code() {
            ErrorCode::InvalidInput => CliError::Usage(error.to_string()),
            _ => CliError::Failure(error.to_string()),
        }
    }
}
