//! The status of a feedback item and the only place its transitions are decided.
//!
//! ```text
//! NEW ──run──► CODING ──► WAITING_FOR_REVIEW ──PR merged──► MERGED (final)
//!                 │  ▲            │
//!                 ▼  │ iterate    └──PR closed unmerged──► FAILED
//!               FAILED ◄──────────────────────────────────────┘
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ids::FeedbackId;

/// Where a feedback item stands. Stored and shown in SCREAMING_SNAKE_CASE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FeedbackStatus {
    New,
    Coding,
    WaitingForReview,
    Failed,
    Merged,
}

impl FeedbackStatus {
    /// Every status, in the order the dashboard shows its groups.
    pub const ALL: [FeedbackStatus; 5] = [
        FeedbackStatus::New,
        FeedbackStatus::Coding,
        FeedbackStatus::WaitingForReview,
        FeedbackStatus::Failed,
        FeedbackStatus::Merged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackStatus::New => "NEW",
            FeedbackStatus::Coding => "CODING",
            FeedbackStatus::WaitingForReview => "WAITING_FOR_REVIEW",
            FeedbackStatus::Failed => "FAILED",
            FeedbackStatus::Merged => "MERGED",
        }
    }

    /// The words a person reads on the dashboard.
    pub fn label(self) -> &'static str {
        match self {
            FeedbackStatus::New => "New",
            FeedbackStatus::Coding => "Coding",
            FeedbackStatus::WaitingForReview => "Waiting for review",
            FeedbackStatus::Failed => "Failed",
            FeedbackStatus::Merged => "Merged",
        }
    }

    pub fn is_final(self) -> bool {
        self == FeedbackStatus::Merged
    }
}

impl fmt::Display for FeedbackStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status text that is not one of the five statuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown feedback status {0:?}: expected one of NEW, CODING, WAITING_FOR_REVIEW, FAILED, MERGED")]
pub struct UnknownFeedbackStatus(pub String);

impl FromStr for FeedbackStatus {
    type Err = UnknownFeedbackStatus;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let normalized = text.trim().to_ascii_uppercase().replace(['-', ' '], "_");
        FeedbackStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == normalized)
            .ok_or_else(|| UnknownFeedbackStatus(text.to_owned()))
    }
}

crate::stored_text_enum! {
    /// What happened to a feedback item. Every stored status change names its event.
    pub enum StatusEvent as "status event" {
        /// The item was made (the first row of its history, into NEW).
        Created => "created",
        /// A code run (first run, iterate or retry) started.
        RunStarted => "run_started",
        /// The code run pushed its commits and the PR is open.
        RunSucceeded => "run_succeeded",
        /// The code run failed or was cancelled.
        RunFailed => "run_failed",
        /// GitHub says the PR merged.
        PullRequestMerged => "pull_request_merged",
        /// GitHub says the PR was closed without merging.
        PullRequestClosedUnmerged => "pull_request_closed_unmerged",
        /// GitHub says a closed PR is open again (reopened by someone).
        PullRequestReopened => "pull_request_reopened",
        /// The owner approved a held run's commits, and they were pushed.
        HeldPushApproved => "held_push_approved",
        /// The item's PR was found open on GitHub, opened by another installation of
        /// the owner's (the item of the same issue has the same head branch there).
        PullRequestFoundOpen => "pull_request_found_open",
    }
}

/// One stored status change of a feedback item, with its time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusChange {
    pub feedback_id: FeedbackId,
    pub from: Option<FeedbackStatus>,
    pub to: FeedbackStatus,
    pub event: StatusEvent,
    pub run_id: Option<super::ids::RunId>,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// An event that the status lifecycle does not allow in the item's current status. The
/// message says what the person can do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("feedback {feedback_id} is {from}: {instead}")]
pub struct TransitionError {
    pub feedback_id: FeedbackId,
    pub from: FeedbackStatus,
    pub event: StatusEvent,
    pub instead: &'static str,
}

/// Decides the status after `event`, or says why the event is not allowed now.
pub fn next_status(
    feedback_id: FeedbackId,
    from: FeedbackStatus,
    event: StatusEvent,
) -> Result<FeedbackStatus, TransitionError> {
    use FeedbackStatus::*;
    use StatusEvent::*;

    let refuse = |instead: &'static str| TransitionError {
        feedback_id,
        from,
        event,
        instead,
    };
    match (from, event) {
        (Merged, _) => Err(refuse("submit new feedback")),
        (_, Created) => Err(refuse("an item is created only once")),
        (New | WaitingForReview | Failed, RunStarted) => Ok(Coding),
        (Coding, RunStarted) => Err(refuse(
            "one run at a time; wait for the current run to finish or cancel it",
        )),
        (Coding, RunSucceeded) => Ok(WaitingForReview),
        (Coding, RunFailed) => Ok(Failed),
        (_, RunSucceeded | RunFailed) => Err(refuse("only a CODING item can finish a run")),
        // The merge is a fact on GitHub; the mirror follows it from any open state.
        (WaitingForReview | Failed | Coding, PullRequestMerged) => Ok(Merged),
        (WaitingForReview, PullRequestClosedUnmerged) => Ok(Failed),
        (Failed, PullRequestClosedUnmerged) => Ok(Failed),
        (Coding, PullRequestClosedUnmerged) => Err(refuse(
            "the running iterate reopens the PR when it finishes",
        )),
        (Failed, PullRequestReopened) => Ok(WaitingForReview),
        (WaitingForReview | Coding, PullRequestReopened) => Ok(from),
        (New, PullRequestMerged | PullRequestClosedUnmerged | PullRequestReopened) => {
            Err(refuse("it has no pull request yet; run it first"))
        }
        (Failed, HeldPushApproved) => Ok(WaitingForReview),
        (New | Failed, PullRequestFoundOpen) => Ok(WaitingForReview),
        (_, PullRequestFoundOpen) => Err(refuse(
            "only an item without a PR of its own (NEW or FAILED) takes one found on GitHub",
        )),
        (_, HeldPushApproved) => Err(refuse(
            "only an item whose run is held (FAILED) has commits waiting for approval",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: FeedbackId = FeedbackId(12);

    #[test]
    fn a_run_moves_new_to_coding_then_to_waiting_or_failed() {
        let coding = next_status(ID, FeedbackStatus::New, StatusEvent::RunStarted).unwrap();
        assert_eq!(coding, FeedbackStatus::Coding);
        assert_eq!(
            next_status(ID, coding, StatusEvent::RunSucceeded).unwrap(),
            FeedbackStatus::WaitingForReview
        );
        assert_eq!(
            next_status(ID, coding, StatusEvent::RunFailed).unwrap(),
            FeedbackStatus::Failed
        );
    }

    #[test]
    fn merged_is_final_and_says_submit_new_feedback() {
        for event in [
            StatusEvent::RunStarted,
            StatusEvent::RunSucceeded,
            StatusEvent::PullRequestReopened,
            StatusEvent::PullRequestClosedUnmerged,
        ] {
            let error = next_status(ID, FeedbackStatus::Merged, event).unwrap_err();
            assert_eq!(
                error.to_string(),
                "feedback 12 is MERGED: submit new feedback"
            );
        }
    }

    #[test]
    fn a_pr_closed_unmerged_puts_the_item_back_to_failed() {
        assert_eq!(
            next_status(
                ID,
                FeedbackStatus::WaitingForReview,
                StatusEvent::PullRequestClosedUnmerged
            )
            .unwrap(),
            FeedbackStatus::Failed
        );
    }

    #[test]
    fn a_second_run_while_coding_is_refused() {
        let error = next_status(ID, FeedbackStatus::Coding, StatusEvent::RunStarted).unwrap_err();
        assert!(error
            .to_string()
            .starts_with("feedback 12 is CODING: one run at a time"));
    }

    #[test]
    fn status_text_round_trips_and_accepts_loose_spelling() {
        for status in FeedbackStatus::ALL {
            assert_eq!(status.as_str().parse::<FeedbackStatus>().unwrap(), status);
        }
        assert_eq!(
            "waiting-for-review".parse::<FeedbackStatus>().unwrap(),
            FeedbackStatus::WaitingForReview
        );
        assert!("DONE".parse::<FeedbackStatus>().is_err());
    }
}
