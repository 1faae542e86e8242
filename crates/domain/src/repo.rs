//! A connected repository and its settings: base branch, feedback label, custom agent
//! instructions, run quota, sandbox backend and agent preset.

use super::ids::RepoId;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::network_policy::{AllowedHost, NetworkMode};
use super::repo_name::RepoName;
use super::run::SandboxBackend;

/// The quota a new repository gets unless told otherwise: runs per calendar month.
pub const DEFAULT_MONTHLY_RUN_QUOTA: u32 = 50;

/// The label that makes a GitHub issue a feedback item unless told otherwise.
pub const DEFAULT_FEEDBACK_LABEL: &str = "feedback";

/// A connected repository.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Repo {
    pub id: RepoId,
    pub name: RepoName,
    pub default_branch: String,
    pub feedback_label: String,
    pub custom_instructions: String,
    /// Runs allowed per calendar month (UTC); `None` means no limit.
    pub monthly_run_quota: Option<u32>,
    /// Dollars its runs may spend per calendar month (UTC); `None` means no limit.
    pub monthly_budget_usd: Option<f64>,
    pub sandbox_backend: SandboxBackend,
    pub agent_preset: String,
    pub agent_command: Option<String>,
    pub docker_image: Option<String>,
    /// Wall-clock limit of one run.
    pub run_timeout_seconds: u32,
    /// The E2B template runs start from (`None`: E2B's base template).
    pub e2b_template: Option<String>,
    /// What its sandboxes may reach on the network.
    pub network_mode: NetworkMode,
    /// Hosts its sandboxes may reach besides the agent provider's API (allow-list mode).
    pub allowed_hosts: Vec<AllowedHost>,
    /// Whether the PRs Handoff opens for it are drafts (the default).
    pub draft_pull_requests: bool,
    /// Whether its test stage files an issue for each failing scenario (the default).
    pub file_test_issues: bool,
    /// Runs of its own that may go at once (`None`: only the installation's and the
    /// backend's slots hold it back).
    pub run_slots: Option<u32>,
    /// Whether its Docker runs may go to E2B when Docker's slots are full.
    pub overflow_to_e2b: bool,
    /// Whether a failing check of one of its feedback PRs, or a review of the owner's
    /// requesting changes, queues an Update PR by itself (off unless the owner turns it
    /// on).
    pub automatic_updates: bool,
    /// The most automatic updates one PR gets in 24 hours.
    pub automatic_attempts_per_day: u32,
    /// Labels put on the PRs Handoff opens for it.
    pub pull_request_labels: Vec<String>,
    /// Files (from its root) its environment image is keyed on besides the recipe's
    /// and the usual lockfiles.
    pub environment_key_files: Vec<String>,
    /// Who is asked to review the PRs Handoff opens for it.
    pub pull_request_reviewers: Vec<super::review_requests::Reviewer>,
    /// A fork the owner controls that its agent branches are pushed to, so that CI
    /// treats their PRs as a fork's; `None`: the repository itself.
    pub push_fork: Option<RepoName>,
    pub created_at: DateTime<Utc>,
    /// Since when the signed-in token cannot read its checks (it lacks that
    /// permission); `None` while they can be read.
    pub checks_unreadable_since: Option<DateTime<Utc>>,
    /// When the owner disconnected it (its history stays; no sync or run touches it).
    pub disconnected_at: Option<DateTime<Utc>>,
}

/// What `handoff repo add` and the app's "connect repository" form ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRepo {
    pub name: RepoName,
    pub default_branch: String,
    pub feedback_label: String,
    pub custom_instructions: String,
    pub monthly_run_quota: Option<u32>,
    pub sandbox_backend: SandboxBackend,
    pub agent_preset: String,
}

impl Repo {
    /// Where the agent's branches live: the fork the owner chose, or the repository.
    pub fn head_repository(&self) -> &RepoName {
        self.push_fork.as_ref().unwrap_or(&self.name)
    }
}

impl NewRepo {
    /// A repository with the defaults: base `main`, label `feedback`, 50 runs a month,
    /// Docker, the opencode preset.
    pub fn with_defaults(name: RepoName) -> Self {
        NewRepo {
            name,
            default_branch: "main".to_owned(),
            feedback_label: DEFAULT_FEEDBACK_LABEL.to_owned(),
            custom_instructions: String::new(),
            monthly_run_quota: Some(DEFAULT_MONTHLY_RUN_QUOTA),
            sandbox_backend: SandboxBackend::Docker,
            agent_preset: "opencode".to_owned(),
        }
    }
}

/// Why a branch name typed by a person cannot be a base branch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad branch name {0:?}: it must be a valid git branch name")]
pub struct BadBranchName(pub String);

/// A cheap check of a base branch name, before git itself is asked.
pub fn check_branch_name(name: &str) -> Result<(), BadBranchName> {
    let bad = name.is_empty()
        || name.starts_with('-')
        || name.starts_with('/')
        || name.ends_with('/')
        || name.ends_with('.')
        || name.ends_with(".lock")
        || name.contains("..")
        || name.contains("@{")
        || name.contains("//")
        || name == "@"
        || name
            .chars()
            .any(|c| c.is_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'));
    if bad {
        Err(BadBranchName(name.to_owned()))
    } else {
        Ok(())
    }
}
