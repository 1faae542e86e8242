//! The domain: the product's words as types, and the rules that tie them together.
//!
//! Everything here is pure: no I/O, no database, and no reading of the time but through
//! [`clock`], the clock the store takes (the system's, or one a test sets). The store and the pipeline
//! call these rules so that a status transition, an iterate refusal or a branch name is
//! decided in exactly one place. Beside the product's words: [`error_code`], the codes
//! the front ends act on instead of message text; [`secret`], a secret's value and its
//! scrubbing out of text; [`service_address`], where a secret may be sent; and
//! [`dashboard`], the board's cards as both front ends show them.

pub mod address_reach;
pub mod agent_key;
pub mod agent_presets;
pub mod agent_step;
pub mod archive_state;
pub mod automatic_update;
pub mod budgets;
pub mod call_reservation;
pub mod ci_entry_points;
pub mod claude_plan;
pub mod clock;
pub mod code_prompt;
pub mod comment_version;
pub mod compose_dev_container;
pub mod dev_container;
pub mod dev_container_feature;
pub mod environment_key;
pub mod environment_recipe;
pub mod feedback;
pub mod feedback_status;
pub mod follow_up;
pub mod follow_ups_comment;
pub mod github_command;
pub mod head_branch;
pub mod head_commits;
pub mod ids;
pub mod iterate_rules;
pub mod jsonc;
pub mod lesson;
pub mod lessons_file;
pub mod managed_comment;
pub mod model_prices;
pub mod network_policy;
pub mod outbox_entry;
pub mod pull_request;
pub mod repo;
pub mod repo_name;
pub mod repository_path;
pub mod review_requests;
pub mod run;
pub mod run_driver;
pub mod run_event;
pub mod run_queue;
pub mod stage_prompts;
pub mod stored_text;
pub mod test_results;
pub mod test_services;
pub mod test_setting;
pub mod untrusted_text;

pub mod dashboard;
pub mod error_code;
pub mod fix;
pub mod secret;
pub mod service_address;

pub use address_reach::AddressReach;
pub use archive_state::{ArchiveActor, ArchiveChange, ArchiveState};
pub use automatic_update::{
    AutomaticDecision, AutomaticTrigger, AutomaticUpdate, AutomaticUpdateId,
};
pub use comment_version::{
    CommentVersion, CommentVersionId, ManagedComment, ManagedCommentId, VersionOrigin,
};
pub use feedback::{Feedback, FeedbackSource, PublicFeedbackId, PullRequestState};
pub use feedback_status::{FeedbackStatus, StatusChange, StatusEvent, TransitionError};
pub use follow_up::{
    BodyError, FollowUp, FollowUpBody, FollowUpId, FollowUpOrigin, FollowUpSource,
};
pub use github_command::{CommandAsk, CommandState, GithubCommand};
pub use head_branch::head_branch_for;
pub use ids::{FeedbackId, RepoId, RunId};
pub use iterate_rules::{code_run_kind, CodeRunKind, IterateRefusal};
pub use managed_comment::CommentKind;
pub use network_policy::{AllowedHost, NetworkMode, NetworkPolicy};
pub use outbox_entry::{OutboxEntry, OutboxEntryId, OutboxOperation, OutboxState};
pub use pull_request::{CheckStatus, MirroredPullRequest, PullRequest};
pub use repo::{NewRepo, Repo};
pub use repo_name::{RepoName, RepoNameError};
pub use run::{
    LogChunk, LogStream, PaidWith, Run, RunFailureCode, RunStatus, SandboxBackend, SpendSource,
    Stage,
};
pub use test_results::ScenarioResult;
