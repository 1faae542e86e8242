//! The core's types the front ends name: ids and names, the mirror's records, the options
//! a run takes and the reports it gives back, and the errors as codes. They are
//! re-exported here so that neither the command line nor the window depends on the core
//! itself: what they can do is what this crate's use cases do, and what they can name
//! is this list. Handles that do something (the store, the GitHub client, the keyring,
//! the pipeline) are not on it.

pub use handoff::agent_image::ImageState;
pub use handoff::domain::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET, PRESETS};
pub use handoff::domain::agent_step::AgentStep;
pub use handoff::domain::budgets::dollars;
pub use handoff::domain::run_driver::RunDriver;
pub use handoff::domain::{
    ArchiveState, AutomaticUpdate, CheckStatus, CommentKind, CommentVersion, CommentVersionId,
    FeedbackId, FeedbackSource, FeedbackStatus, FollowUp, FollowUpOrigin, FollowUpSource,
    GithubCommand, LogChunk, LogStream, ManagedComment, NetworkMode, OutboxEntry, OutboxState,
    PaidWith, Repo, RepoName, Run, RunId, RunStatus, SandboxBackend, SpendSource, Stage,
};
pub use handoff::error_code::{CodedError, ErrorCode};
pub use handoff::github::feedback_pull_request::PullRequestAction;
pub use handoff::github::owner_edits::EditOutcome;
pub use handoff::github::sign_in::AuthStatus;
pub use handoff::github::sync::SyncReport;
pub use handoff::log_file::{LogHandle, LogLevel};
pub use handoff::pipeline::code_run::CodeRunReport;
pub use handoff::pipeline::lessons_file::LessonsFileAction;
pub use handoff::pipeline::lessons_run::{LessonsOptions, LessonsReport};
pub use handoff::pipeline::qa_run::{QaOptions, QaResult};
pub use handoff::pipeline::reconcile::{Reconciled, WaitingOnDriver};
pub use handoff::pipeline::{CodeRunOptions, CodeRunResult};
pub use handoff::setup_check::{CheckLine, CheckStatus as SetupCheckStatus, Fix, SetupReport};
pub use handoff::store::spend::MonthSpend;
pub use handoff::store::{
    FeedbackFilter, NewFeedback, PullRequestFilter, QueueEntry, QuotaStatus, RunFilter, RunTexts,
};
