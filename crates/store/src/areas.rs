//! The mirror by area: one small handle per group of tables, each borrowed from the
//! [`Store`] (`store.runs().finish_run(…)`), so no one type carries every query.
//!
//! A handle owns no state of its own: it is the store's pool and clock seen through one
//! area. The methods live beside their tables, in the files each handle names; what is
//! not about one area (opening, closing, the clock, this process as a run driver, the
//! change journal) stays on [`Store`].

use crate::Store;

/// The connected repositories and their settings (`repos`).
#[derive(Debug, Clone, Copy)]
pub struct RepositoryRecords<'store> {
    pub(crate) store: &'store Store,
}

/// This installation's own settings: a key and a text each (`settings`).
#[derive(Debug, Clone, Copy)]
pub struct SettingRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Feedback items with their status history, follow-ups, archive state and the board's cards (`feedback`, `follow_ups`, `archive`, `dashboard_cards`).
#[derive(Debug, Clone, Copy)]
pub struct FeedbackRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Agent runs: starting and finishing them, their logs, events, heartbeats, and the pushes they made or hold for approval (`runs`, `run_events`, `held_pushes`, `handoff_pushes`).
#[derive(Debug, Clone, Copy)]
pub struct RunRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The review, test-plan, test and fix stages of a pull request, their test results and QA issues, and each repository's stage prompts (`stage_runs`).
#[derive(Debug, Clone, Copy)]
pub struct StageRunRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Runs waiting for a slot, and the slots each sandbox and repository allows (`run_queue`).
#[derive(Debug, Clone, Copy)]
pub struct RunQueueRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The pull-request comments Handoff manages and their numbered versions (`managed_comments`).
#[derive(Debug, Clone, Copy)]
pub struct CommentRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The owner's edits waiting to be sent to GitHub, and what became of each (`outbox`).
#[derive(Debug, Clone, Copy)]
pub struct OutboxRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Commands read from GitHub comments and the runs they led to (`github_commands`).
#[derive(Debug, Clone, Copy)]
pub struct GithubCommandRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Money and runs: prices, budgets, the per-call ledger, quotas and plan credit (`spend`, `spend_ledger`, `month_spend`, `quota`, `plan_credit`).
#[derive(Debug, Clone, Copy)]
pub struct SpendRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The owner's corrections, the lessons proposed from them and the lessons file written to the repository (`lessons`, `lessons_file`).
#[derive(Debug, Clone, Copy)]
pub struct LessonRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The mirrored pull requests: their state, checks and conflicts (`pull_requests`).
#[derive(Debug, Clone, Copy)]
pub struct PullRequestRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Where each sync left off, and GitHub's validators for unchanged answers (`sync_cursors`, `http_validators`).
#[derive(Debug, Clone, Copy)]
pub struct SyncStateRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Updates Handoff starts by itself when a pull request's checks fail or it conflicts, and the decisions on them (`automatic_updates`).
#[derive(Debug, Clone, Copy)]
pub struct AutomaticUpdateRecords<'store> {
    pub(crate) store: &'store Store,
}

/// The builds of each repository's agent environment (`environment_builds`).
#[derive(Debug, Clone, Copy)]
pub struct EnvironmentBuildRecords<'store> {
    pub(crate) store: &'store Store,
}

/// Each repository's test-only settings (`test_settings`).
#[derive(Debug, Clone, Copy)]
pub struct TestSettingRecords<'store> {
    pub(crate) store: &'store Store,
}

impl Store {
    /// The connected repositories and their settings.
    pub fn repositories(&self) -> RepositoryRecords<'_> {
        RepositoryRecords { store: self }
    }

    /// This installation's own settings.
    pub fn settings(&self) -> SettingRecords<'_> {
        SettingRecords { store: self }
    }

    /// Feedback items with their status history, follow-ups, archive state and the board's cards.
    pub fn feedback(&self) -> FeedbackRecords<'_> {
        FeedbackRecords { store: self }
    }

    /// Agent runs.
    pub fn runs(&self) -> RunRecords<'_> {
        RunRecords { store: self }
    }

    /// The review, test-plan, test and fix stages of a pull request, their test results and QA issues, and each repository's stage prompts.
    pub fn stage_runs(&self) -> StageRunRecords<'_> {
        StageRunRecords { store: self }
    }

    /// Runs waiting for a slot, and the slots each sandbox and repository allows.
    pub fn run_queue(&self) -> RunQueueRecords<'_> {
        RunQueueRecords { store: self }
    }

    /// The pull-request comments Handoff manages and their numbered versions.
    pub fn comments(&self) -> CommentRecords<'_> {
        CommentRecords { store: self }
    }

    /// The owner's edits waiting to be sent to GitHub, and what became of each.
    pub fn outbox(&self) -> OutboxRecords<'_> {
        OutboxRecords { store: self }
    }

    /// Commands read from GitHub comments and the runs they led to.
    pub fn github_commands(&self) -> GithubCommandRecords<'_> {
        GithubCommandRecords { store: self }
    }

    /// Money and runs.
    pub fn spend(&self) -> SpendRecords<'_> {
        SpendRecords { store: self }
    }

    /// The owner's corrections, the lessons proposed from them and the lessons file written to the repository.
    pub fn lessons(&self) -> LessonRecords<'_> {
        LessonRecords { store: self }
    }

    /// The mirrored pull requests.
    pub fn pull_requests(&self) -> PullRequestRecords<'_> {
        PullRequestRecords { store: self }
    }

    /// Where each sync left off, and GitHub's validators for unchanged answers.
    pub fn sync_state(&self) -> SyncStateRecords<'_> {
        SyncStateRecords { store: self }
    }

    /// The builds of each repository's agent environment.
    pub fn environment_builds(&self) -> EnvironmentBuildRecords<'_> {
        EnvironmentBuildRecords { store: self }
    }

    /// Each repository's test-only settings, given to its tests in the sandbox.
    pub fn test_settings(&self) -> TestSettingRecords<'_> {
        TestSettingRecords { store: self }
    }

    /// Updates Handoff starts by itself when a pull request's checks fail or it conflicts, and the decisions on them.
    pub fn automatic_updates(&self) -> AutomaticUpdateRecords<'_> {
        AutomaticUpdateRecords { store: self }
    }
}
