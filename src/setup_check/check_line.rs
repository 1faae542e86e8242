//! One line of Check setup: how the check came out (ok, a warning, a failure), what was
//! found, and the one fix the window offers as a button and the command line as a
//! command; and the report of every line, as bad as its worst one.

use serde::{Deserialize, Serialize};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failure,
}

/// What fixes a check that is not ok: the front ends turn it into their own button or
/// command; [`std::fmt::Display`] says it in one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    SignIn,
    GetWriteAccess {
        repo: String,
    },
    TurnOnIssues {
        repo: String,
    },
    StartKeyring,
    StartDocker,
    BuildImage {
        preset: String,
        image: String,
    },
    LoadImage {
        image: String,
    },
    AddKey {
        provider: String,
    },
    AddE2bKey,
    ReplaceE2bKey,
    UseHttpsForE2b,
    UseHttpsForProvider {
        provider: String,
    },
    ChooseAnotherAgent {
        repo: String,
    },
    FreeDisk {
        path: String,
    },
    InstallEgressGate,
    /// The token lacks a permission (a fine-grained token): give it `permission` on
    /// `repo`, on GitHub, or sign in with one that has it.
    GrantTokenPermission {
        permission: String,
        repo: String,
    },
    /// Send `repo`'s agent branches to a fork (in `place` when the owner has one).
    MakeAgentFork {
        repo: String,
        place: Option<String>,
    },
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::SignIn => write!(f, "Sign in to GitHub again."),
            Fix::GetWriteAccess { repo } => write!(
                f,
                "Ask for write access to {repo}, or sign in with an account that has it."
            ),
            Fix::TurnOnIssues { repo } => {
                write!(f, "Turn issues on in {repo}'s settings on GitHub.")
            }
            Fix::StartKeyring => write!(
                f,
                "Start a Secret Service (gnome-keyring or KWallet) in your desktop session."
            ),
            Fix::StartDocker => write!(
                f,
                "Start the Docker engine (or point DOCKER_HOST at one) and check again."
            ),
            Fix::BuildImage { preset, image } => {
                write!(f, "Build the {preset} agent image ({image}).")
            }
            Fix::LoadImage { image } => write!(
                f,
                "Put the image {image} on this engine yourself (build it where its agent can \
                 be fetched, then `docker save` and `docker load`), or name another image in \
                 the repository's settings (empty: Handoff's own)."
            ),
            Fix::AddKey { provider } => write!(f, "Add an API key for {provider}."),
            Fix::AddE2bKey => write!(f, "Add the E2B API key."),
            Fix::ReplaceE2bKey => write!(f, "Replace the E2B API key with one E2B accepts."),
            Fix::UseHttpsForE2b => write!(
                f,
                "Set E2B's addresses (e2b.api_base, e2b.envd_url) to https ones, or remove them."
            ),
            Fix::UseHttpsForProvider { provider } => write!(
                f,
                "Set {provider}'s address (provider.{provider}.api_base) to an https one, or \
                 remove it."
            ),
            Fix::ChooseAnotherAgent { repo } => write!(
                f,
                "Choose claude, codex or opencode for {repo} to run the QA stages."
            ),
            Fix::FreeDisk { path } => write!(f, "Free some disk space where {path} is."),
            Fix::GrantTokenPermission { permission, repo } => write!(
                f,
                "Give the token the \"{permission}\" permission on {repo} (GitHub → Settings → \
                 Developer settings → Fine-grained tokens), or sign in with a token that has it."
            ),
            Fix::MakeAgentFork {
                repo,
                place: Some(place),
            } => write!(
                f,
                "Make a fork of {repo} in {place} for the agent's branches: its PRs run CI \
                 without the repository's secrets."
            ),
            Fix::MakeAgentFork { repo, place: None } => write!(
                f,
                "Make a fork of {repo} for the agent's branches, in an organization you belong \
                 to or a second account of yours (GitHub does not let an account fork its own \
                 repository into itself): its PRs run CI without the repository's secrets."
            ),
            Fix::InstallEgressGate => write!(
                f,
                "Install Handoff's egress gate, handoff-egress, beside Handoff (its package \
                 does), or name a Linux build of it for the engine's machine in \
                 HANDOFF_EGRESS_PROGRAM."
            ),
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// Stable, for the front ends: `github`, `repo:owner/name`, `image:owner/name`, …
    pub id: String,
    /// What was checked, in a few words.
    pub subject: String,
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
    pub fix: Option<Fix>,
    /// The fix in one sentence (the front ends add their button or command).
    pub fix_sentence: Option<String>,
}

impl CheckLine {
    pub(super) fn ok(
        id: impl Into<String>,
        subject: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status: CheckStatus::Ok,
            detail: detail.into(),
            fix: None,
            fix_sentence: None,
        }
    }

    pub(super) fn not_ok(
        status: CheckStatus,
        id: impl Into<String>,
        subject: impl Into<String>,
        detail: impl Into<String>,
        fix: Fix,
    ) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status,
            detail: detail.into(),
            fix_sentence: Some(fix.to_string()),
            fix: Some(fix),
        }
    }

    /// The line as one sentence or two: what was found, and the fix.
    pub fn sentence(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}: {}. {fix}", self.subject, self.detail),
            None => format!("{}: {}", self.subject, self.detail),
        }
    }
}

impl std::fmt::Display for CheckLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Every line of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupReport {
    pub lines: Vec<CheckLine>,
}

impl SetupReport {
    /// The worst status of any line.
    pub fn status(&self) -> CheckStatus {
        if self.lines.iter().any(|l| l.status == CheckStatus::Failure) {
            CheckStatus::Failure
        } else if self.lines.iter().any(|l| l.status == CheckStatus::Warning) {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        }
    }
}
