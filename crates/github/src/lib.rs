//! GitHub: the REST client and everything Handoff does with it — managed comments
//! (publish, read back, safe owner edits through the outbox), sync, and sign-in.
//!
//! Works against github.com, GitHub Enterprise, or the fake GitHub of the tests: the API
//! base is a setting ([`endpoints`]), and the code path is the same for all three.

pub mod agent_forks;
mod base_conflicts;
pub mod branch_protection;
pub mod check_runs;
pub mod client;
pub mod command_claims;
pub mod comment_authorship;
pub mod comment_publishing;
pub mod endpoints;
pub mod error;
pub mod feedback_pull_request;
pub mod issue_comments;
pub mod issues;
pub mod job_logs;
pub mod lessons_pull_request;
pub mod link_header;
pub mod owner_edits;
pub mod pull_request_candidates;
pub mod pull_request_commits;
pub mod pull_reviews;
pub mod pulls;
pub mod qa_issues;
pub mod review_requests;
pub mod sign_in;
pub mod sync;
mod sync_changes;
mod sync_steps;
pub mod token_scopes;
pub mod user_repositories;
pub mod wire;

pub use client::{GithubClient, RequestCount, RequestPolicy};
pub use comment_publishing::{CommentPlace, Published, ReadBack};
pub use endpoints::GithubEndpoints;
pub use error::GithubError;
pub use owner_edits::{ConflictChoice, EditConflict, EditOutcome, OutboxPass, OutboxReport};
pub use sync::SyncReport;
