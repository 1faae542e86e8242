//! Error codes: what the desktop UI and `--json` output receive instead of messages to
//! match. Each error enum of the core maps its variants onto these beside its own
//! definition (and turns into a [`CodedError`] there), so this module depends on none
//! of them.

use serde::Serialize;

use crate::fix::Fix;

crate::stored_text_enum! {
    /// A stable, machine-readable name for a kind of failure.
    pub enum ErrorCode as "error code" {
        InvalidInput => "invalid_input",
        NotFound => "not_found",
        AlreadyExists => "already_exists",
        IllegalTransition => "illegal_transition",
        RunActive => "run_active",
        Merged => "merged",
        QuotaExhausted => "quota_exhausted",
        /// No correction of the owner's since lessons were last drawn: nothing to learn.
        NothingToLearn => "nothing_to_learn",
        /// A repository's monthly budget or the installation's daily one is spent.
        BudgetSpent => "budget_spent",
        DataFolder => "data_folder",
        DatabaseFromNewerVersion => "database_from_newer_version",
        DatabaseDamaged => "database_damaged",
        Database => "database",
        DatabaseLocked => "database_locked",
        Keyring => "keyring",
        GithubAuth => "github_auth",
        GithubForbidden => "github_forbidden",
        GithubRateLimited => "github_rate_limited",
        GithubRefused => "github_refused",
        GithubUnreachable => "github_unreachable",
        GithubMalformedAnswer => "github_malformed_answer",
        /// A stage would replace the owner's edit of its comment: ask, then run with force.
        OwnerEdits => "owner_edits",
        AwaitsApproval => "awaits_approval",
        SandboxUnavailable => "sandbox_unavailable",
        SandboxFailed => "sandbox_failed",
        SetupIncomplete => "setup_incomplete",
        NeedsConfirmation => "needs_confirmation",
        /// Someone else's code would run with no isolation: only a sandbox runs it.
        NeedsSandbox => "needs_sandbox",
        NeedsClientId => "needs_client_id",
        /// No fork for the agent's branches could be made or found where the owner
        /// asked (their own account, an organization they may not make repositories in,
        /// a second account with no fork they may push to).
        AgentForkRefused => "agent_fork_refused",
        Cancelled => "cancelled",
        /// No update feed is set, or it could not be read.
        UpdateUnavailable => "update_unavailable",
        /// The update's signature is not one of the key built into the app, or its
        /// package is not one this installation can take: nothing was installed.
        UpdateRefused => "update_refused",
    }
}

/// An error as the front ends receive it: a code to act on, a message to show, and,
/// where a step of the owner's gets past it, that step ([`Fix`]): the command line says
/// it as a command, the window offers it as a button.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodedError {
    pub code: ErrorCode,
    pub message: String,
    pub fix: Option<Fix>,
}

impl CodedError {
    /// An error with no step to get past it.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> CodedError {
        CodedError {
            code,
            message: message.into(),
            fix: None,
        }
    }

    /// The same error, with the step that gets past it.
    pub fn with_fix(mut self, fix: Option<Fix>) -> CodedError {
        self.fix = fix;
        self
    }
}
