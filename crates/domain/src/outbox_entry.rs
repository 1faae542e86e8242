//! The outbox: GitHub writes saved locally first and sent later, in order, so that
//! an edit made offline, or interrupted by a crash, is never lost.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::comment_version::{CommentVersionId, ManagedCommentId};
use super::ids::RepoId;

/// The row id of an outbox entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct OutboxEntryId(pub i64);

crate::stored_text_enum! {
    /// What an outbox entry asks GitHub to do.
    pub enum OutboxOperation as "outbox operation" {
        /// Put an owner's edit of a managed comment on GitHub.
        UpdateComment => "update_comment",
    }
}

crate::stored_text_enum! {
    /// Where an outbox entry stands.
    pub enum OutboxState as "outbox state" {
        /// Waiting to be sent (again, after `next_attempt_at`).
        Pending => "pending",
        /// Done.
        Sent => "sent",
        /// GitHub's text changed since the edit was made: the owner must choose.
        Conflict => "conflict",
        /// Given up: GitHub refused it (it waits for the owner to try again or discard
        /// it), or the owner discarded it (`discarded_at` is set).
        Failed => "failed",
    }
}

/// One GitHub write waiting in (or done with) the outbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutboxEntry {
    pub id: OutboxEntryId,
    pub repo_id: RepoId,
    pub operation: OutboxOperation,
    pub managed_comment_id: Option<ManagedCommentId>,
    pub comment_version_id: Option<CommentVersionId>,
    pub state: OutboxState,
    pub attempts: u32,
    pub next_attempt_at: DateTime<Utc>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// When the owner discarded it (never sent; its text stays in the history).
    pub discarded_at: Option<DateTime<Utc>>,
}
