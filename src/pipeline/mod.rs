//! The sandbox pipeline: one pipeline over every backend. A run prepares a working
//! copy on the host, runs the agent in a sandbox with the prompt, brings back its
//! commits and stage output, pushes from the host, updates the PR and its comments, and
//! records the result — with the quota, the one-run-per-item rule and the iterate rules
//! checked before any sandbox starts.
//!
//! - `handles`: the pipeline by area (`pipeline.code_runs()`, `qa_runs()`, `lessons()`,
//!   `github_commands()`, `run_queue()`, `left_behind()`, `held_pushes()`,
//!   `kept_copies()`), through which the front ends reach each kind of work.
//! - [`code_run`]: first runs of feedback PRs, and iterates that add commits to the
//!   same PR.
//! - [`host_git`]: the repository cache, working copies, bundles and pushes;
//!   [`cache_lock`]: one run at a time in a repository's cache.
//! - [`kept_copy`]: each feedback item's working copy, kept between its runs.
//! - [`job_script`]: what every sandbox runs.
//! - [`run_log`], [`run_supervision`]: live logs, heartbeat and cancel.
//! - [`reconcile`]: runs nothing drives any more (a crash, a panic), ended.
//! - [`bulk_runs`]: several code runs asked for at once (selected items, all new).
//! - [`queue_wait`]: every run waits for a slot (installation, backend, repository);
//!   [`run_queue`]: the queued runs a gone process left behind, taken over;
//!   queued runs outlive their process.
//! - [`spawned_run`]: runs driven in the background, watched.
//! - [`sandbox_choice`]: which sandbox a run gets.
//! - [`crate::pipeline_settings`]: how the pipeline works on this installation.
//! - [`agent_job`]: one agent job in a sandbox, from workspace to outcome.
//! - [`qa_run`]: the QA stages (review, plan, test, fix, full auto) on a PR.
//! - [`lessons_run`]: lessons proposed from the owner's corrections on a repository;
//!   [`standing_lessons`]: the accepted ones every later run's prompt carries;
//!   [`lessons_file`]: the same lessons in a marked section of AGENTS.md, by a PR.

pub mod agent_events;
pub mod agent_failure;
pub mod agent_job;
pub mod agent_push;
pub mod agent_usage;
pub mod automatic_updates;
pub mod bulk_runs;
mod cache_fetched_for_run;
pub mod cache_lock;
pub mod code_run;
pub mod environment_build;
mod environment_inputs;
mod environment_template;
pub mod environments;
pub mod github_commands;
mod handles;
pub mod held_push;
pub mod host_git;
pub mod job_script;
pub mod kept_copy;
pub mod lessons_file;
pub mod lessons_run;
pub mod qa_run;
pub mod queue_wait;
pub mod reconcile;
pub mod reported_spend;
pub mod run_log;
pub mod run_queue;
pub mod run_supervision;
pub mod sandbox_choice;
pub mod spawned_run;
pub mod spend_ledger;
pub mod standing_lessons;
mod strangers_work;

use std::path::PathBuf;

use crate::error_code::{CodedError, ErrorCode};
use crate::github::{GithubClient, GithubError};
use crate::setup_check::Fix;

use crate::sandbox::SandboxError;
use crate::secrets::{SecretError, SecretStore};
use crate::store::{Store, StoreError};

pub use crate::pipeline_settings::PipelineSettings;
pub use code_run::{BegunCodeRun, CodeRunOptions, CodeRunReport, CodeRunResult};
pub use handles::{
    CodeRuns, Environments, GithubCommandWork, HeldPushes, KeptCopies, LeftBehindRuns, LessonWork,
    QaRuns, RunQueue,
};

/// Everything a run needs from its surroundings.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub store: Store,
    pub github: GithubClient,
    pub secrets: SecretStore,
    pub data_dir: PathBuf,
    pub settings: PipelineSettings,
}

/// Why a run could not start (once it has started, failures are recorded on the run).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Github(#[from] GithubError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Secrets(#[from] SecretError),
    #[error(transparent)]
    Agent(#[from] crate::domain::agent_presets::AgentChoiceError),
    #[error("{0}")]
    SetupIncomplete(crate::setup_check::CheckLine),
    #[error("cannot prepare the run's workspace: {0}")]
    Workspace(String),
    #[error(
        "the code stage is not a QA stage; the QA stages are review, plan, test, fix and full-auto"
    )]
    NotAQaStage,
    #[error("the {stage} stage runs on the item's PR, and this item has no PR yet")]
    CommandNeedsPullRequest { stage: crate::domain::Stage },
    #[error("PR #{number} is {state}: QA runs on open pull requests only")]
    PullRequestNotOpen { number: u64, state: String },
    #[error(
        "feedback {feedback_id} was opened on GitHub by @{author}, not by you: the agent runs on it \
         only once you approve it"
    )]
    FeedbackAwaitsApproval {
        feedback_id: crate::domain::FeedbackId,
        author: String,
    },
    #[error(
        "the {kind} comment that {stage} reads was last edited on GitHub by {editor}, not by you \
         (version {version}): it reaches no prompt until you approve that version"
    )]
    EditAwaitsApproval {
        stage: crate::domain::Stage,
        kind: crate::domain::CommentKind,
        version: u32,
        editor: String,
    },
    #[error(
        "{repo} is not set to run on the local backend, which has no isolation: a local run \
         needs the repository's own confirmed choice"
    )]
    LocalNotConfirmed { repo: String },
    #[error(
        "{what} would run code someone else wrote as you, with your files and keyring in \
         reach, on the local backend: it runs only in a sandbox (Docker or E2B)"
    )]
    StrangersCodeNeedsSandbox { what: String },
    #[error("run {run} cannot be pushed: {why}")]
    NotHeld {
        run: crate::domain::RunId,
        why: String,
    },
    #[error("fix cannot push to PR #{number}: {reason}")]
    FixCannotPush { number: u64, reason: String },
    #[error("{0} is disconnected: connect it again to run on it")]
    RepoDisconnected(String),
    #[error(
        "the {kind} comment carries your edits (version {version}); running {stage} again replaces it on GitHub \
         (your text stays in the history)"
    )]
    OwnerEdits {
        stage: crate::domain::Stage,
        kind: crate::domain::CommentKind,
        version: u32,
    },
    #[error(
        "{repo} has no correction of yours since lessons were last drawn: nothing to learn from"
    )]
    NoNewCorrections { repo: String },
    #[error(
        "the lessons section of {path} was edited on GitHub since Handoff wrote it; it was kept \
         (and is in the history)"
    )]
    LessonsFileEdited { path: String },
    #[error("{path} could not be brought in step with the lessons: {detail}")]
    LessonsFile { path: String, detail: String },
    #[error("the base branch of {repo} could not be read: {detail}")]
    BaseBranchUnread { repo: String, detail: String },
    #[error("{repo}'s environment cannot be built: {error}")]
    EnvironmentRecipe {
        repo: String,
        #[source]
        error: crate::domain::dev_container::DevContainerError,
    },
    #[error("{repo}'s environment was not built: {step} failed: {detail} (the build's log: {})", log.display())]
    EnvironmentBuild {
        repo: String,
        step: String,
        detail: String,
        log: std::path::PathBuf,
    },
    #[error("{repo}'s environment cannot be built here: {detail}")]
    EnvironmentEngine { repo: String, detail: String },
    #[error("{repo}'s environment cannot be built by Handoff yet: {what}")]
    EnvironmentNotYetBuilt { repo: String, what: String },
    #[error("{repo}'s test services cannot be started: {error}")]
    EnvironmentServices {
        repo: String,
        #[source]
        error: crate::domain::test_services::ServicesError,
    },
}

impl PipelineError {
    pub fn code(&self) -> ErrorCode {
        match self {
            PipelineError::Store(error) => error.code(),
            PipelineError::Github(error) => error.code(),
            PipelineError::Sandbox(error) => error.code(),
            PipelineError::Secrets(_) => ErrorCode::Keyring,
            PipelineError::Agent(_) => ErrorCode::InvalidInput,
            PipelineError::SetupIncomplete(_) => ErrorCode::SetupIncomplete,
            PipelineError::Workspace(_) => ErrorCode::SandboxFailed,
            PipelineError::NotAQaStage => ErrorCode::InvalidInput,
            PipelineError::CommandNeedsPullRequest { .. } => ErrorCode::IllegalTransition,
            PipelineError::PullRequestNotOpen { .. } => ErrorCode::IllegalTransition,
            PipelineError::OwnerEdits { .. } => ErrorCode::OwnerEdits,
            PipelineError::FeedbackAwaitsApproval { .. }
            | PipelineError::EditAwaitsApproval { .. } => ErrorCode::AwaitsApproval,
            PipelineError::FixCannotPush { .. } => ErrorCode::IllegalTransition,
            PipelineError::RepoDisconnected(_) => ErrorCode::IllegalTransition,
            PipelineError::LocalNotConfirmed { .. } => ErrorCode::NeedsConfirmation,
            PipelineError::StrangersCodeNeedsSandbox { .. } => ErrorCode::NeedsSandbox,
            PipelineError::NotHeld { .. } => ErrorCode::IllegalTransition,
            PipelineError::NoNewCorrections { .. } => ErrorCode::NothingToLearn,
            PipelineError::LessonsFileEdited { .. } => ErrorCode::OwnerEdits,
            PipelineError::LessonsFile { .. } => ErrorCode::GithubRefused,
            PipelineError::BaseBranchUnread { .. } => ErrorCode::GithubRefused,
            PipelineError::EnvironmentRecipe { .. } => ErrorCode::InvalidInput,
            PipelineError::EnvironmentBuild { .. } => ErrorCode::SandboxFailed,
            PipelineError::EnvironmentEngine { .. } => ErrorCode::SandboxUnavailable,
            PipelineError::EnvironmentNotYetBuilt { .. } => ErrorCode::InvalidInput,
            PipelineError::EnvironmentServices { .. } => ErrorCode::InvalidInput,
        }
    }
}

impl PipelineError {
    /// The step of the owner's that gets past it, if one does.
    pub fn fix(&self) -> Option<Fix> {
        Some(match self {
            PipelineError::Store(error) => return error.fix(),
            PipelineError::Github(error) => return error.fix(),
            PipelineError::SetupIncomplete(line) => return line.fix.clone(),
            PipelineError::FeedbackAwaitsApproval { feedback_id, .. } => Fix::ApproveFeedback {
                feedback_id: feedback_id.0,
            },
            PipelineError::EditAwaitsApproval { kind, .. } => Fix::ApproveCommentVersion {
                comment: kind.to_string(),
            },
            PipelineError::OwnerEdits { kind, .. } => Fix::ReplaceOwnerEdit {
                comment: kind.to_string(),
            },
            PipelineError::NotAQaStage => Fix::RunAsCodeRun,
            PipelineError::LessonsFileEdited { .. } => Fix::ReplaceLessonsFileEdits,
            PipelineError::NoNewCorrections { .. } => Fix::CorrectTheAgentFirst,
            PipelineError::LocalNotConfirmed { repo } => {
                Fix::ConfirmLocalBackend { repo: repo.clone() }
            }
            PipelineError::StrangersCodeNeedsSandbox { .. } => Fix::UseASandbox,
            PipelineError::NotHeld { run, .. } => Fix::ShowRun { run: run.0 },
            PipelineError::RepoDisconnected(repo) => Fix::ConnectRepository { repo: repo.clone() },
            _ => return None,
        })
    }
}

/// What the front ends show of it: the code to act on, the message, the step past it.
impl From<PipelineError> for CodedError {
    fn from(error: PipelineError) -> Self {
        CodedError::new(error.code(), error.to_string()).with_fix(error.fix())
    }
}
