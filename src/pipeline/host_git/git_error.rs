//! A git command that failed, and what GitHub said when it refused a push (a ruleset,
//! branch protection, a workflow change without the `workflow` scope, a file too large).

/// A git command that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("`{command}` failed: {detail}")]
    Failed { command: String, detail: String },
    #[error(
        "GitHub refused the push to {branch}: it moved on since the run started (someone pushed); nothing was overwritten"
    )]
    Rejected { branch: String, detail: String },
    #[error(
        "GitHub refused the push to {branch}: {reason}{}",
        said_by_github(remote)
    )]
    RefusedByGithub {
        branch: String,
        /// The reason on git's `[remote rejected]` line.
        reason: String,
        /// What GitHub's checks said (`remote:` lines), without the prefix.
        remote: Vec<String>,
    },
    #[error("refusing to push to {0}: runs never push to the base or default branch")]
    ProtectedBranch(String),
    #[error("the agent's commits do not build on the branch as it was (history was rewritten); nothing was pushed")]
    RewrittenHistory,
}

fn said_by_github(remote: &[String]) -> String {
    let said: Vec<&str> = remote
        .iter()
        .map(|line| line.trim())
        .filter(|line| !line.is_empty())
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" (GitHub said: {})", said.join(" "))
    }
}

/// Why a push failed, read from git's own words (git runs in the C locale, so they are
/// English whatever the user's language).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushFailure {
    /// The branch moved on: a non-fast-forward.
    MovedOn,
    /// GitHub's own checks refused it (`[remote rejected]`: a pre-receive check, a
    /// ruleset, branch protection, a workflow file without the `workflow` scope, a file
    /// over 100 MB).
    Refused { reason: String, remote: Vec<String> },
    /// Anything else (the network, authentication).
    Other,
}

/// Reads why `git push` failed from what it printed.
pub fn push_failure(stderr: &str) -> PushFailure {
    let remote: Vec<String> = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("remote:"))
        .map(|line| line.trim().trim_start_matches("error:").trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect();
    for line in stderr.lines().map(str::trim_start) {
        let Some(rest) = line.strip_prefix('!') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("[remote rejected]") {
            let reason = after
                .rsplit_once('(')
                .map(|(_, reason)| reason.trim_end().trim_end_matches(')').to_owned())
                .unwrap_or_else(|| after.trim().to_owned());
            return PushFailure::Refused { reason, remote };
        }
        if rest.starts_with("[rejected]") {
            return PushFailure::MovedOn;
        }
    }
    if stderr.contains("non-fast-forward") || stderr.contains("fetch first") {
        return PushFailure::MovedOn;
    }
    PushFailure::Other
}
