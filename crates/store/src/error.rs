//! What can go wrong in the store, as one enum. The messages say what happened; each
//! front end adds what to do about it, keyed on [`StoreError::code`].

use std::path::PathBuf;

use handoff_domain::error_code::{CodedError, ErrorCode};
use handoff_domain::feedback_status::TransitionError;
use handoff_domain::fix::Fix;
use handoff_domain::follow_up::{BodyError, FollowUpOnMergedItem};
use handoff_domain::lesson::LessonId;
use handoff_domain::repo::BadBranchName;
use handoff_domain::{FeedbackId, IterateRefusal, RepoNameError, RunId};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the data folder {path}: {source}")]
    DataFolder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the database {path} was written by a newer Handoff (schema version {found}, this build knows up to {supported}); \
         the file was left as it is"
    )]
    NewerVersion {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error(
        "the database {path} is damaged ({detail}); it was left as it is: move it away or restore a backup, \
         then start Handoff again"
    )]
    Damaged { path: PathBuf, detail: String },
    #[error(
        "the database is locked by another process (another Handoff, or a program with the file \
         open) that did not let go within {waited_seconds} s"
    )]
    Locked { waited_seconds: u64 },
    #[error("database error: {0}")]
    Database(sqlx::Error),
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("no repository {0} is connected")]
    RepoNotFound(String),
    #[error("repository {0} is already connected")]
    RepoAlreadyConnected(String),
    #[error("repository {0} has a run going: it can be disconnected once the run ends")]
    RepoBusy(String),
    #[error("no feedback {0}")]
    FeedbackNotFound(FeedbackId),
    #[error("no run {0}")]
    RunNotFound(RunId),
    #[error("no follow-up {0}")]
    FollowUpNotFound(i64),
    #[error("feedback {feedback_id} already has an active run; one run at a time")]
    RunAlreadyActive { feedback_id: FeedbackId },
    #[error("pull request #{pr_number} already has an active run; one run at a time")]
    PullRequestRunAlreadyActive { pr_number: u64 },
    #[error(
        "the monthly run quota of {repo} is used up ({used} of {quota}); it starts again next month"
    )]
    QuotaExhausted { repo: String, quota: u32, used: u32 },
    #[error("run {0} has already finished")]
    RunAlreadyFinished(RunId),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    #[error(transparent)]
    Iterate(#[from] IterateRefusal),
    #[error(transparent)]
    FollowUpOnMerged(#[from] FollowUpOnMergedItem),
    #[error(transparent)]
    Body(#[from] BodyError),
    #[error(transparent)]
    RepoName(#[from] RepoNameError),
    #[error(transparent)]
    BranchName(#[from] BadBranchName),
    #[error("no outbox entry {0}")]
    OutboxEntryNotFound(i64),
    #[error("outbox entry {id} was {how}: there is nothing left to send")]
    OutboxEntryDone { id: i64, how: &'static str },
    #[error("no pull request #{number} of {repo} is known here: sync first")]
    PullRequestNotFound { repo: String, number: u64 },
    #[error("stored data is not what this build expects: {0}")]
    Corrupt(String),
    #[error("the setting {key} = {value:?} does not read: {reason}")]
    BadSetting {
        key: String,
        value: String,
        reason: String,
    },
    #[error(transparent)]
    BudgetSpent(#[from] handoff_domain::budgets::BudgetRefusal),
    #[error("no lesson {0}")]
    LessonNotFound(LessonId),
    #[error("lesson {id} is {state}: only an accepted lesson can be turned on or off, or kept")]
    LessonNotAccepted { id: LessonId, state: String },
    #[error("{repo} already has a lessons run going; one at a time")]
    LessonsRunAlreadyActive { repo: String },
    #[error("feedback {0} has a run going: it stays on the board until the run ends")]
    ArchiveWhileRunning(FeedbackId),
    #[error("feedback {feedback_id} is {}: no run starts on an item off the board", state.label())]
    ItemArchived {
        feedback_id: FeedbackId,
        state: handoff_domain::ArchiveState,
    },
    #[error("automatic update {0} was already decided")]
    AutomaticUpdateDecided(handoff_domain::AutomaticUpdateId),
}

impl StoreError {
    /// The code the UI and `--json` output use for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::DataFolder { .. } => ErrorCode::DataFolder,
            StoreError::NewerVersion { .. } => ErrorCode::DatabaseFromNewerVersion,
            StoreError::Damaged { .. } | StoreError::Corrupt(_) => ErrorCode::DatabaseDamaged,
            StoreError::Database(_) | StoreError::Migration(_) => ErrorCode::Database,
            StoreError::Locked { .. } => ErrorCode::DatabaseLocked,
            StoreError::RepoNotFound(_)
            | StoreError::FeedbackNotFound(_)
            | StoreError::RunNotFound(_)
            | StoreError::FollowUpNotFound(_)
            | StoreError::LessonNotFound(_)
            | StoreError::OutboxEntryNotFound(_)
            | StoreError::PullRequestNotFound { .. } => ErrorCode::NotFound,
            StoreError::RepoAlreadyConnected(_) => ErrorCode::AlreadyExists,
            StoreError::RepoBusy(_) => ErrorCode::RunActive,
            StoreError::RunAlreadyActive { .. }
            | StoreError::LessonsRunAlreadyActive { .. }
            | StoreError::PullRequestRunAlreadyActive { .. }
            | StoreError::ArchiveWhileRunning(_)
            | StoreError::Iterate(IterateRefusal::Coding(_)) => ErrorCode::RunActive,
            StoreError::Iterate(IterateRefusal::Merged(_)) | StoreError::FollowUpOnMerged(_) => {
                ErrorCode::Merged
            }
            StoreError::QuotaExhausted { .. } => ErrorCode::QuotaExhausted,
            StoreError::RunAlreadyFinished(_)
            | StoreError::Transition(_)
            | StoreError::OutboxEntryDone { .. }
            | StoreError::LessonNotAccepted { .. }
            | StoreError::ItemArchived { .. }
            | StoreError::AutomaticUpdateDecided(_) => ErrorCode::IllegalTransition,
            StoreError::Body(_)
            | StoreError::RepoName(_)
            | StoreError::BranchName(_)
            | StoreError::BadSetting { .. } => ErrorCode::InvalidInput,
            StoreError::BudgetSpent(_) => ErrorCode::BudgetSpent,
        }
    }
}

impl StoreError {
    /// The step of the owner's that gets past it, if one does.
    pub fn fix(&self) -> Option<Fix> {
        use handoff_domain::budgets::BudgetRefusal;
        Some(match self {
            StoreError::RepoNotFound(repo) => Fix::ConnectRepository { repo: repo.clone() },
            StoreError::QuotaExhausted { repo, .. } => Fix::RaiseQuota { repo: repo.clone() },
            StoreError::BudgetSpent(BudgetRefusal::RepoMonthSpent { repo, .. }) => {
                Fix::RaiseMonthlyBudget { repo: repo.clone() }
            }
            StoreError::BudgetSpent(BudgetRefusal::ChainNeedsMore { repo, .. }) => {
                Fix::RunStagesOneAtATime { repo: repo.clone() }
            }
            StoreError::BudgetSpent(BudgetRefusal::DaySpent { .. }) => Fix::RaiseDayBudget,
            StoreError::NewerVersion { .. } => Fix::InstallNewerHandoff,
            StoreError::Damaged { .. } => Fix::SetDamagedDatabaseAside,
            StoreError::FeedbackNotFound(_) => Fix::LookUpItems,
            StoreError::Locked { .. } => Fix::TryAgainLater,
            StoreError::RunNotFound(_) => Fix::LookUpRuns,
            StoreError::LessonNotFound(_) => Fix::LookUpLessons,
            StoreError::LessonNotAccepted { id, .. } => Fix::AcceptLesson { id: id.0 },
            StoreError::PullRequestNotFound { .. } => Fix::SyncPullRequests,
            _ => return None,
        })
    }
}

/// What the front ends show of it: the code to act on, the message, the step past it.
impl From<StoreError> for CodedError {
    fn from(error: StoreError) -> Self {
        CodedError::new(error.code(), error.to_string()).with_fix(error.fix())
    }
}
