//! The iterate rules: which kind of code run a feedback item may start now.
//!
//! | status               | run                                  |
//! |----------------------|--------------------------------------|
//! | NEW                  | first run: new branch, new PR        |
//! | WAITING_FOR_REVIEW   | iterate: same branch, same PR        |
//! | FAILED               | retry, with or without new text      |
//! | CODING               | refused: one run per item at a time  |
//! | MERGED               | refused: submit new feedback         |

use super::feedback_status::FeedbackStatus;
use super::ids::FeedbackId;

crate::stored_text_enum! {
    /// The kind of code run a feedback item gets.
    pub enum CodeRunKind as "code run kind" {
        /// The first run: branch from the base, open the PR.
        First => "first",
        /// Follow-up instructions on an open PR: more commits on the same branch.
        Iterate => "iterate",
        /// Again after a failure, from the head branch if it exists, else from the base.
        Retry => "retry",
    }
}

/// Why a code run may not start now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IterateRefusal {
    #[error("feedback {0} is CODING: one run at a time; wait for it to finish or cancel it")]
    Coding(FeedbackId),
    #[error("feedback {0} is MERGED: submit new feedback")]
    Merged(FeedbackId),
}

/// Decides the kind of code run for an item in `status`, or refuses it.
pub fn code_run_kind(
    feedback_id: FeedbackId,
    status: FeedbackStatus,
) -> Result<CodeRunKind, IterateRefusal> {
    match status {
        FeedbackStatus::New => Ok(CodeRunKind::First),
        FeedbackStatus::WaitingForReview => Ok(CodeRunKind::Iterate),
        FeedbackStatus::Failed => Ok(CodeRunKind::Retry),
        FeedbackStatus::Coding => Err(IterateRefusal::Coding(feedback_id)),
        FeedbackStatus::Merged => Err(IterateRefusal::Merged(feedback_id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterate_allowed_while_waiting_for_review_and_after_failure() {
        assert_eq!(
            code_run_kind(FeedbackId(1), FeedbackStatus::WaitingForReview),
            Ok(CodeRunKind::Iterate)
        );
        assert_eq!(
            code_run_kind(FeedbackId(1), FeedbackStatus::Failed),
            Ok(CodeRunKind::Retry)
        );
        assert_eq!(
            code_run_kind(FeedbackId(1), FeedbackStatus::New),
            Ok(CodeRunKind::First)
        );
    }

    #[test]
    fn iterate_refused_while_coding_and_when_merged() {
        assert_eq!(
            code_run_kind(FeedbackId(3), FeedbackStatus::Coding)
                .unwrap_err()
                .to_string(),
            "feedback 3 is CODING: one run at a time; wait for it to finish or cancel it"
        );
        assert_eq!(
            code_run_kind(FeedbackId(3), FeedbackStatus::Merged)
                .unwrap_err()
                .to_string(),
            "feedback 3 is MERGED: submit new feedback"
        );
    }
}
