//! Identity and origin of a feedback item: its local row id, its public id (the one its
//! head branch is named after), where it came from, and how a title is derived.

use super::ids::FeedbackId;
use std::fmt;

use chrono::{DateTime, Utc};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::feedback_status::FeedbackStatus;
use super::ids::RepoId;
use super::repo_name::RepoName;

/// The id a feedback item is known by outside this machine, and the one its head branch
/// is named after. Unique within its repository, never reused.
///
/// Items made in the app or on the command line get a random id (`fb-` and twelve
/// lowercase letters and digits), so two machines mirroring one repository never pick
/// the same branch; items mirrored from a GitHub issue are `issue-<number>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PublicFeedbackId(pub String);

impl PublicFeedbackId {
    pub fn random() -> Self {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = rand::rng();
        let suffix: String = (0..12)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
            .collect();
        PublicFeedbackId(format!("fb-{suffix}"))
    }

    pub fn for_issue(issue_number: u64) -> Self {
        PublicFeedbackId(format!("issue-{issue_number}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PublicFeedbackId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

crate::stored_text_enum! {
    /// Where a feedback item came from.
    pub enum FeedbackSource as "feedback source" {
        /// The form in the desktop app.
        App => "app",
        /// `handoff feedback add`.
        Cli => "cli",
        /// A GitHub issue of a connected repository that carries the feedback label.
        GithubIssue => "github_issue",
    }
}

crate::stored_text_enum! {
    /// The state of a feedback item's pull request on GitHub, as last seen.
    pub enum PullRequestState as "pull request state" {
        Open => "open",
        Closed => "closed",
        Merged => "merged",
    }
}

/// One feedback item as the mirror holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feedback {
    pub id: FeedbackId,
    pub repo_id: RepoId,
    pub repo: RepoName,
    pub public_id: PublicFeedbackId,
    pub title: String,
    pub body: String,
    pub source: FeedbackSource,
    pub github_issue_number: Option<u64>,
    pub github_issue_author: Option<String>,
    pub status: FeedbackStatus,
    pub head_branch: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
    pub pr_state: Option<PullRequestState>,
    /// Someone other than the owner wrote it (an issue opened by a visitor): its title
    /// and body are untrusted text wherever they go.
    pub opened_by_visitor: bool,
    /// When the owner let the agent run on an item a visitor opened.
    pub approved_at: Option<DateTime<Utc>>,
    /// Why it is off the board (closed on GitHub, dismissed, archived); `None` while on it.
    pub archived_as: Option<super::ArchiveState>,
    pub archived_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Feedback {
    /// A visitor opened it and the owner has not approved it yet: no run may start.
    pub fn awaits_owner_approval(&self) -> bool {
        self.opened_by_visitor && self.approved_at.is_none()
    }
}

/// The longest title, in characters, that a derived title keeps.
pub const DERIVED_TITLE_MAX_CHARS: usize = 80;

/// A title for a feedback item that was given none: its first non-empty line, cut to
/// [`DERIVED_TITLE_MAX_CHARS`] characters with an ellipsis.
pub fn derive_title(body: &str) -> String {
    let first_line = body
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let first_line = first_line.trim_start_matches('#').trim();
    if first_line.chars().count() <= DERIVED_TITLE_MAX_CHARS {
        first_line.to_owned()
    } else {
        let cut: String = first_line
            .chars()
            .take(DERIVED_TITLE_MAX_CHARS - 1)
            .collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_public_ids_are_branch_safe_and_distinct() {
        let first = PublicFeedbackId::random();
        let second = PublicFeedbackId::random();
        assert_ne!(first, second);
        assert!(first.as_str().starts_with("fb-"));
        assert!(first
            .as_str()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }

    #[test]
    fn derived_title_is_the_first_line_cut_with_an_ellipsis() {
        assert_eq!(
            derive_title("\n\n## Button too small\nmore"),
            "Button too small"
        );
        let long = "x".repeat(200);
        let title = derive_title(&long);
        assert_eq!(title.chars().count(), DERIVED_TITLE_MAX_CHARS);
        assert!(title.ends_with('…'));
    }
}
