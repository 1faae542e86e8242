//! The local history of managed comments: every body a comment has had, who wrote it
//! and when, and what an owner's edit was based on, so that a sync never overwrites a
//! newer edit silently.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::ids::RepoId;
use super::ids::RunId;
use super::managed_comment::CommentKind;
use super::repo_name::RepoName;

/// The row id of a managed comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ManagedCommentId(pub i64);

/// The row id of a comment version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct CommentVersionId(pub i64);

impl fmt::Display for CommentVersionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

crate::stored_text_enum! {
    /// Who wrote a version.
    pub enum VersionOrigin as "version origin" {
        /// The agent's output, posted by a run.
        Agent => "agent",
        /// The owner, in Handoff (the app or `handoff comment edit`).
        OwnerInHandoff => "owner_in_handoff",
        /// Someone on GitHub, found by a sync or a read-back.
        EditOnGithub => "edit_on_github",
    }
}

/// A PR comment Handoff owns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManagedComment {
    pub id: ManagedCommentId,
    pub repo_id: RepoId,
    pub repo: RepoName,
    pub pr_number: u64,
    pub kind: CommentKind,
    pub github_comment_id: Option<u64>,
    /// `updated_at` of the comment on GitHub when Handoff last saw it.
    pub remote_updated_at: Option<DateTime<Utc>>,
    /// When the comment was found gone from GitHub.
    pub missing_since: Option<DateTime<Utc>>,
}

/// One stored body of a managed comment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommentVersion {
    pub id: CommentVersionId,
    pub managed_comment_id: ManagedCommentId,
    /// 1 for the first version of this comment, 2 for the next, …
    pub number: u32,
    /// The whole body as it is (or was) on GitHub.
    pub body: String,
    /// The content alone, as the next stage reads it.
    pub content: String,
    /// The untruncated content, when the body had to be cut.
    pub full_content: Option<String>,
    pub origin: VersionOrigin,
    pub author_login: Option<String>,
    pub run_id: Option<RunId>,
    /// For an owner's edit: the version the owner was looking at.
    pub based_on: Option<CommentVersionId>,
    pub created_at: DateTime<Utc>,
    /// Last edited on GitHub by someone other than the owner (`author_login` says who,
    /// when GitHub could tell).
    pub edited_by_other: bool,
    /// When the owner let this version into prompts, if it needed that.
    pub approved_at: Option<DateTime<Utc>>,
}

impl CommentVersion {
    /// Someone else's edit the owner has not approved: it must not reach a prompt.
    pub fn awaits_owner_approval(&self) -> bool {
        self.edited_by_other && self.approved_at.is_none()
    }

    /// Who wrote this version, in words: "the agent", "you", or "@login".
    pub fn written_by(&self) -> String {
        match (
            self.origin,
            self.edited_by_other,
            self.author_login.as_deref(),
        ) {
            (VersionOrigin::Agent, _, _) => "the agent".to_owned(),
            (_, true, Some(login)) => format!("@{login}"),
            (_, true, None) => "someone GitHub could not name".to_owned(),
            (_, false, _) => "you".to_owned(),
        }
    }

    /// The text the history shows and diffs: the whole content, uncut.
    pub fn whole_content(&self) -> &str {
        self.full_content.as_deref().unwrap_or(&self.content)
    }
}
