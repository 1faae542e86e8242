//! Events of runs that become notifications: "PR opened" for a first run (never
//! twice for one item), "PR updated" for an iterate, "run failed" with its reason.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::ids::FeedbackId;
use super::ids::RunId;

crate::stored_text_enum! {
    /// What happened.
    pub enum RunEventKind as "run event" {
        PullRequestOpened => "pr_opened",
        PullRequestUpdated => "pr_updated",
        RunFailed => "run_failed",
        RunSucceeded => "run_succeeded",
    }
}

/// One event, as the app shows it in a notification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEvent {
    pub id: i64,
    pub run_id: RunId,
    pub feedback_id: Option<FeedbackId>,
    pub kind: RunEventKind,
    pub message: String,
    pub created_at: DateTime<Utc>,
    pub seen_at: Option<DateTime<Utc>>,
}
