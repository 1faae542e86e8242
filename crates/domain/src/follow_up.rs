//! Follow-ups: append-only messages on a feedback item, from the owner or from a
//! visitor. Visitor text is untrusted: it never starts a run and enters a prompt only
//! when the owner includes it.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::feedback_status::FeedbackStatus;
use super::ids::FeedbackId;

/// The row id of a follow-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct FollowUpId(pub i64);

/// One message in a feedback item's thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FollowUp {
    pub id: FollowUpId,
    pub feedback_id: FeedbackId,
    pub body: String,
    pub source: FollowUpSource,
    pub author_login: Option<String>,
    /// Where it was written: the thread, or on the PR itself (taken from there).
    pub origin: FollowUpOrigin,
    /// Taken from the PR (a review, an inline comment, a failing check): in no prompt
    /// until the owner includes it, even when the owner wrote it.
    pub candidate: bool,
    /// The owner chose to let it into prompts (always true for what the owner wrote in
    /// the thread).
    pub included_in_prompts: bool,
    /// Handoff wrote it for an automatic update, on the owner's standing order (the
    /// repository lets failing checks and requested changes come back as work).
    pub automatic: bool,
    pub created_at: DateTime<Utc>,
}

crate::stored_text_enum! {
    /// Who wrote a follow-up.
    pub enum FollowUpSource as "follow-up source" {
        /// The repository owner, in the app or on the command line. Trusted.
        Owner => "owner",
        /// Anybody else, for example a comment on the feedback issue. Untrusted.
        Visitor => "visitor",
    }
}

crate::stored_text_enum! {
    /// Where a follow-up was written.
    pub enum FollowUpOrigin as "follow-up origin" {
        /// In the item's thread: the app, the command line, or a comment on its issue.
        Thread => "thread",
        /// The body of a review of the item's PR.
        Review => "review",
        /// An inline review comment on a line of the PR's diff.
        ReviewComment => "review_comment",
        /// A check run that failed on the PR's head commit.
        CheckRun => "check_run",
    }
}

/// The longest body, in characters, of a feedback item or a follow-up.
pub const BODY_MAX_CHARS: usize = 50_000;

/// A body that is fit to store: not blank, not too long, no NUL bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUpBody(String);

/// Why a body of text cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("{what} is empty: write what should change")]
    Empty { what: &'static str },
    #[error("{what} is {chars} characters long; the limit is {BODY_MAX_CHARS}")]
    TooLong { what: &'static str, chars: usize },
    #[error("{what} contains a NUL byte; is it a binary file?")]
    Binary { what: &'static str },
}

impl FollowUpBody {
    /// Checks `text` as the body of `what` ("feedback body", "follow-up").
    pub fn parse(what: &'static str, text: &str) -> Result<Self, BodyError> {
        if text.contains('\0') {
            return Err(BodyError::Binary { what });
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(BodyError::Empty { what });
        }
        let chars = trimmed.chars().count();
        if chars > BODY_MAX_CHARS {
            return Err(BodyError::TooLong { what, chars });
        }
        Ok(FollowUpBody(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// Text from GitHub (an issue body, a visitor's comment) made fit to store, so that one
/// odd comment never stops a sync: NUL bytes dropped, and text over
/// [`BODY_MAX_CHARS`] cut with a notice that says so. `None` when nothing is left.
pub fn fit_mirrored_text(text: &str) -> Option<String> {
    let text = text.replace('\0', "");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    let chars = trimmed.chars().count();
    if chars <= BODY_MAX_CHARS {
        return Some(trimmed.to_owned());
    }
    let notice = format!(
        "\n\n[…cut by Handoff: the text on GitHub is {chars} characters long; the first \
         part is kept here]"
    );
    let keep = BODY_MAX_CHARS - notice.chars().count();
    let cut: String = trimmed.chars().take(keep).collect();
    Some(format!("{}{notice}", cut.trim_end()))
}

/// The owner may add a follow-up in every status but MERGED: a merged item is final,
/// and a new request belongs in new feedback. (Visitor comments mirrored from GitHub
/// are kept whatever the status: the mirror records what was said.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("feedback {feedback_id} is MERGED: submit new feedback")]
pub struct FollowUpOnMergedItem {
    pub feedback_id: FeedbackId,
}

pub fn check_owner_follow_up_allowed(
    feedback_id: FeedbackId,
    status: FeedbackStatus,
) -> Result<(), FollowUpOnMergedItem> {
    if status.is_final() {
        Err(FollowUpOnMergedItem { feedback_id })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_binary_and_huge_bodies_are_refused() {
        assert!(matches!(
            FollowUpBody::parse("follow-up", " \n\t "),
            Err(BodyError::Empty { .. })
        ));
        assert!(matches!(
            FollowUpBody::parse("follow-up", "a\0b"),
            Err(BodyError::Binary { .. })
        ));
        assert!(matches!(
            FollowUpBody::parse("follow-up", &"y".repeat(BODY_MAX_CHARS + 1)),
            Err(BodyError::TooLong { .. })
        ));
        assert_eq!(
            FollowUpBody::parse("follow-up", "  make it blue \n")
                .unwrap()
                .as_str(),
            "make it blue"
        );
    }

    #[test]
    fn mirrored_text_is_cut_with_a_notice_never_refused() {
        let huge = format!("start {}", "z".repeat(BODY_MAX_CHARS * 2));
        let kept = fit_mirrored_text(&huge).unwrap();
        assert!(kept.starts_with("start zzz"));
        assert!(
            kept.ends_with("the first part is kept here]"),
            "{}",
            &kept[kept.len() - 120..]
        );
        assert!(FollowUpBody::parse("follow-up", &kept).is_ok());
        assert_eq!(fit_mirrored_text("a\0b").as_deref(), Some("ab"));
        assert_eq!(fit_mirrored_text(" \0 \n"), None);
        assert_eq!(fit_mirrored_text(" fine ").as_deref(), Some("fine"));
    }

    #[test]
    fn follow_up_on_merged_item_says_submit_new_feedback() {
        let error =
            check_owner_follow_up_allowed(FeedbackId(7), FeedbackStatus::Merged).unwrap_err();
        assert_eq!(
            error.to_string(),
            "feedback 7 is MERGED: submit new feedback"
        );
        assert!(check_owner_follow_up_allowed(FeedbackId(7), FeedbackStatus::Coding).is_ok());
    }
}
