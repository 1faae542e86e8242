//! The dashboard: feedback cards grouped by status, as both the desktop app and
//! `handoff feedback list` show them.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::feedback::PullRequestState;
use crate::{
    ArchiveState, FeedbackId, FeedbackSource, FeedbackStatus, RunId, RunStatus, SandboxBackend,
    Stage,
};

/// The last run of a feedback item, as its card shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LastRunSummary {
    pub id: RunId,
    pub stage: Stage,
    pub status: RunStatus,
    /// Where it ran.
    pub backend: SandboxBackend,
    /// The repository's own backend, when the run went elsewhere (to E2B because
    /// Docker's slots were full, or one run sent elsewhere by hand).
    pub instead_of: Option<SandboxBackend>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// One feedback card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DashboardCard {
    pub feedback_id: FeedbackId,
    pub public_id: String,
    pub title: String,
    pub repo: String,
    pub status: FeedbackStatus,
    pub source: FeedbackSource,
    pub head_branch: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
    pub pr_state: Option<PullRequestState>,
    pub owner_follow_up_count: u32,
    pub visitor_follow_up_count: u32,
    pub run_count: u32,
    pub total_cost_usd: f64,
    pub last_run: Option<LastRunSummary>,
    /// Why it is off the board, when it is (the board's archive filter shows those).
    pub archived_as: Option<ArchiveState>,
    /// Its PR conflicts with its base branch (iterate never rebases: the owner must).
    pub conflicts_with_base: bool,
    /// Its open PR's branch is in the repository itself, so CI runs the agent's code
    /// with the repository's secrets (a fork's PR runs it without them).
    pub ci_runs_with_secrets: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl DashboardCard {
    pub fn follow_up_count(&self) -> u32 {
        self.owner_follow_up_count + self.visitor_follow_up_count
    }
}

/// The cards of one status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DashboardGroup {
    pub status: FeedbackStatus,
    pub label: &'static str,
    pub cards: Vec<DashboardCard>,
    /// How many items have this status: more than `cards` when the cards are limited.
    pub total: usize,
}

/// Every group, in the order of the status lifecycle (NEW, CODING, WAITING_FOR_REVIEW,
/// FAILED, MERGED), empty ones included so the layout stays put.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dashboard {
    pub groups: Vec<DashboardGroup>,
    pub total: usize,
}

impl Dashboard {
    /// Groups `cards` by status, keeping their order within a group; `totals` says how
    /// many items each status has (its cards are counted when it is not named).
    pub fn group(cards: Vec<DashboardCard>, totals: &[(FeedbackStatus, usize)]) -> Dashboard {
        let mut groups: Vec<DashboardGroup> = FeedbackStatus::ALL
            .iter()
            .map(|status| DashboardGroup {
                status: *status,
                label: status.label(),
                cards: Vec::new(),
                total: 0,
            })
            .collect();
        for card in cards {
            if let Some(group) = groups.iter_mut().find(|group| group.status == card.status) {
                group.cards.push(card);
            }
        }
        for group in &mut groups {
            group.total = totals
                .iter()
                .find(|(status, _)| *status == group.status)
                .map_or(group.cards.len(), |(_, total)| *total)
                .max(group.cards.len());
        }
        let total = groups.iter().map(|group| group.total).sum();
        Dashboard { groups, total }
    }
}
