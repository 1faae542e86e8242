//! The mirror's records as the page receives them: feedback items, runs, repositories,
//! quotas, pull requests, log chunks and the board. Each is a camelCase copy of a domain or store type,
//! made by `From`, so that the page has one contract in one casing while the command
//! line's `--json` keeps the domain's own shapes.

use chrono::{DateTime, Utc};
use serde::Serialize;

use handoff::comment_diff::{DiffLine, LineChange};
use handoff::dashboard::{Dashboard, DashboardCard, DashboardGroup, LastRunSummary};
use handoff::domain::run_event::{RunEvent, RunEventKind};
use handoff::domain::{
    ArchiveState, CheckStatus, CodeRunKind, CommentVersion, Feedback, FeedbackSource,
    FeedbackStatus, LogChunk, LogStream, NetworkMode, PaidWith, PullRequest, PullRequestState,
    Repo, RepoName, Run, RunFailureCode, RunStatus, SandboxBackend, SpendSource, Stage,
    VersionOrigin,
};
use handoff::store::{MirrorChanges, QuotaStatus};

/// A feedback item.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRecord {
    pub id: i64,
    pub repo_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RepoNameShape")
    )]
    pub repo: RepoName,
    pub public_id: String,
    pub title: String,
    pub body: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FeedbackSourceWords")
    )]
    pub source: FeedbackSource,
    pub github_issue_number: Option<u64>,
    pub github_issue_author: Option<String>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FeedbackStatusWords")
    )]
    pub status: FeedbackStatus,
    pub head_branch: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::PullRequestStateWords>")
    )]
    pub pr_state: Option<PullRequestState>,
    pub opened_by_visitor: bool,
    pub approved_at: Option<DateTime<Utc>>,
    /// Why it is off the board (closed on GitHub, dismissed, archived); none while on it.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::ArchiveStateWords>")
    )]
    pub archived_as: Option<ArchiveState>,
    pub archived_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Feedback> for FeedbackRecord {
    fn from(feedback: Feedback) -> Self {
        FeedbackRecord {
            id: feedback.id.0,
            repo_id: feedback.repo_id.0,
            repo: feedback.repo,
            public_id: feedback.public_id.to_string(),
            title: feedback.title,
            body: feedback.body,
            source: feedback.source,
            github_issue_number: feedback.github_issue_number,
            github_issue_author: feedback.github_issue_author,
            status: feedback.status,
            head_branch: feedback.head_branch,
            pr_number: feedback.pr_number,
            pr_url: feedback.pr_url,
            pr_state: feedback.pr_state,
            opened_by_visitor: feedback.opened_by_visitor,
            approved_at: feedback.approved_at,
            archived_as: feedback.archived_as,
            archived_at: feedback.archived_at,
            created_at: feedback.created_at,
            updated_at: feedback.updated_at,
        }
    }
}

/// An agent run, without what only the pipeline needs (sandbox id, commit ids).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub id: i64,
    pub repo_id: i64,
    pub feedback_id: Option<i64>,
    pub pr_number: Option<u64>,
    pub parent_run_id: Option<i64>,
    #[cfg_attr(feature = "page-contract", ts(as = "crate::page_contract::StageWords"))]
    pub stage: Stage,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::CodeRunKindWords>")
    )]
    pub code_run_kind: Option<CodeRunKind>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::SandboxBackendWords")
    )]
    pub backend: SandboxBackend,
    pub agent_preset: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RunStatusWords")
    )]
    pub status: RunStatus,
    pub instructions: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::RunFailureCodeWords>")
    )]
    pub failure_code: Option<RunFailureCode>,
    pub failure_message: Option<String>,
    pub notes: Vec<String>,
    pub llm_cost_usd: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    /// Where the tokens and cost come from: measured at the key forwarder, or as the
    /// agent reported them.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::SpendSourceWords>")
    )]
    pub spend_source: Option<SpendSource>,
    /// What paid for its model calls: the API key, or the owner's Claude plan.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::PaidWithWords>")
    )]
    pub paid_with: Option<PaidWith>,
    /// Tokens of calls whose model has no price (the cost leaves them out).
    pub unpriced_tokens: Option<i64>,
    pub head_branch: Option<String>,
    /// Why it started by itself (an automatic update); `None` when the owner started it.
    pub started_because: Option<String>,
}

impl From<Run> for RunRecord {
    fn from(run: Run) -> Self {
        RunRecord {
            id: run.id.0,
            repo_id: run.repo_id.0,
            feedback_id: run.feedback_id.map(|id| id.0),
            pr_number: run.pr_number,
            parent_run_id: run.parent_run_id.map(|id| id.0),
            stage: run.stage,
            code_run_kind: run.code_run_kind,
            backend: run.backend,
            agent_preset: run.agent_preset,
            status: run.status,
            instructions: run.instructions,
            created_at: run.created_at,
            started_at: run.started_at,
            finished_at: run.finished_at,
            exit_code: run.exit_code,
            failure_code: run.failure_code,
            failure_message: run.failure_message,
            notes: run.notes,
            llm_cost_usd: run.llm_cost_usd,
            tokens_in: run.tokens_in,
            tokens_out: run.tokens_out,
            spend_source: run.spend_source,
            paid_with: run.paid_with,
            unpriced_tokens: run.unpriced_tokens,
            head_branch: run.head_branch,
            started_because: run.started_because,
        }
    }
}

/// A connected (or disconnected) repository and its settings.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RepoRecord {
    pub id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RepoNameShape")
    )]
    pub name: RepoName,
    pub default_branch: String,
    pub feedback_label: String,
    pub custom_instructions: String,
    pub monthly_run_quota: Option<u32>,
    /// Dollars its runs may spend per calendar month; `None`: no limit.
    pub monthly_budget_usd: Option<f64>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::SandboxBackendWords")
    )]
    pub sandbox_backend: SandboxBackend,
    pub agent_preset: String,
    pub agent_command: Option<String>,
    pub docker_image: Option<String>,
    pub run_timeout_seconds: u32,
    pub e2b_template: Option<String>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::NetworkModeWords")
    )]
    pub network_mode: NetworkMode,
    /// The owner's hosts, one entry each (`host`, `host:port`, `*.domain`).
    pub allowed_hosts: Vec<String>,
    /// Whether the PRs Handoff opens are drafts.
    pub draft_pull_requests: bool,
    /// Whether the test stage files an issue for each failing scenario.
    pub file_test_issues: bool,
    pub run_slots: Option<u32>,
    pub overflow_to_e2b: bool,
    /// Whether failing checks update its feedback PRs
    /// by themselves.
    pub automatic_updates: bool,
    /// The most automatic updates one PR gets in 24 hours.
    pub automatic_attempts_per_day: u32,
    /// Labels put on the PRs Handoff opens.
    pub pull_request_labels: Vec<String>,
    /// Who is asked to review them (`login`, or `org/team`).
    pub pull_request_reviewers: Vec<String>,
    /// Files its environment image is keyed on besides the recipe's and the lockfiles.
    pub environment_key_files: Vec<String>,
    /// The fork agent branches are pushed to (`owner/name`), if any.
    pub push_fork: Option<String>,
    pub created_at: DateTime<Utc>,
    pub disconnected_at: Option<DateTime<Utc>>,
}

impl From<Repo> for RepoRecord {
    fn from(repo: Repo) -> Self {
        RepoRecord {
            id: repo.id.0,
            name: repo.name,
            default_branch: repo.default_branch,
            feedback_label: repo.feedback_label,
            custom_instructions: repo.custom_instructions,
            monthly_run_quota: repo.monthly_run_quota,
            monthly_budget_usd: repo.monthly_budget_usd,
            sandbox_backend: repo.sandbox_backend,
            agent_preset: repo.agent_preset,
            agent_command: repo.agent_command,
            docker_image: repo.docker_image,
            run_timeout_seconds: repo.run_timeout_seconds,
            e2b_template: repo.e2b_template,
            network_mode: repo.network_mode,
            allowed_hosts: repo.allowed_hosts.iter().map(ToString::to_string).collect(),
            draft_pull_requests: repo.draft_pull_requests,
            file_test_issues: repo.file_test_issues,
            run_slots: repo.run_slots,
            overflow_to_e2b: repo.overflow_to_e2b,
            automatic_updates: repo.automatic_updates,
            automatic_attempts_per_day: repo.automatic_attempts_per_day,
            pull_request_labels: repo.pull_request_labels,
            pull_request_reviewers: repo
                .pull_request_reviewers
                .iter()
                .map(ToString::to_string)
                .collect(),
            environment_key_files: repo.environment_key_files,
            push_fork: repo.push_fork.map(|fork| fork.full_name()),
            created_at: repo.created_at,
            disconnected_at: repo.disconnected_at,
        }
    }
}

/// A repository's monthly run quota: `None` means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QuotaRecord {
    pub quota: Option<u32>,
    pub used: u32,
    pub left: Option<u32>,
    pub exhausted: bool,
}

impl From<QuotaStatus> for QuotaRecord {
    fn from(quota: QuotaStatus) -> Self {
        QuotaRecord {
            quota: quota.quota,
            used: quota.used,
            left: quota.left,
            exhausted: quota.is_exhausted(),
        }
    }
}

/// A piece of a run's live log.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogChunkRecord {
    pub run_id: i64,
    pub seq: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::LogStreamWords")
    )]
    pub stream: LogStream,
    pub at: DateTime<Utc>,
    pub text: String,
}

impl From<LogChunk> for LogChunkRecord {
    fn from(chunk: LogChunk) -> Self {
        LogChunkRecord {
            run_id: chunk.run_id.0,
            seq: chunk.seq,
            stream: chunk.stream,
            at: chunk.at,
            text: chunk.text,
        }
    }
}

/// The board: feedback cards grouped by status.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BoardView {
    pub groups: Vec<BoardGroup>,
    pub total: usize,
}

/// One status column of the board.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BoardGroup {
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FeedbackStatusWords")
    )]
    pub status: FeedbackStatus,
    pub label: &'static str,
    pub cards: Vec<BoardCard>,
    /// How many items the column holds (its cards may be the first of them).
    pub total: usize,
}

/// One feedback card.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BoardCard {
    pub feedback_id: i64,
    pub public_id: String,
    pub title: String,
    pub repo: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FeedbackStatusWords")
    )]
    pub status: FeedbackStatus,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FeedbackSourceWords")
    )]
    pub source: FeedbackSource,
    pub head_branch: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::PullRequestStateWords>")
    )]
    pub pr_state: Option<PullRequestState>,
    pub owner_follow_up_count: u32,
    pub visitor_follow_up_count: u32,
    pub run_count: u32,
    pub total_cost_usd: f64,
    pub last_run: Option<LastRunRecord>,
    /// Why it is off the board, when the board shows those.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::ArchiveStateWords>")
    )]
    pub archived_as: Option<ArchiveState>,
    /// Its PR conflicts with its base branch (an Update PR does not rebase).
    pub conflicts_with_base: bool,
    /// Its open PR's branch is in the repository itself: CI runs the agent's code with
    /// the repository's secrets.
    pub ci_runs_with_secrets: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The latest run of a card.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LastRunRecord {
    pub id: i64,
    #[cfg_attr(feature = "page-contract", ts(as = "crate::page_contract::StageWords"))]
    pub stage: Stage,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RunStatusWords")
    )]
    pub status: RunStatus,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// A queued run's place in the run queue (0: its turn came, it is starting).
    pub queue_place: Option<u32>,
    /// Where it ran.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::SandboxBackendWords")
    )]
    pub backend: SandboxBackend,
    /// The repository's own backend, when the run went elsewhere (to E2B because
    /// Docker's slots were full, or sent elsewhere by hand).
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::SandboxBackendWords>")
    )]
    pub instead_of: Option<SandboxBackend>,
}

impl From<Dashboard> for BoardView {
    fn from(dashboard: Dashboard) -> Self {
        BoardView {
            groups: dashboard.groups.into_iter().map(BoardGroup::from).collect(),
            total: dashboard.total,
        }
    }
}

impl From<DashboardGroup> for BoardGroup {
    fn from(group: DashboardGroup) -> Self {
        BoardGroup {
            status: group.status,
            label: group.label,
            cards: group.cards.into_iter().map(BoardCard::from).collect(),
            total: group.total,
        }
    }
}

impl From<DashboardCard> for BoardCard {
    fn from(card: DashboardCard) -> Self {
        BoardCard {
            feedback_id: card.feedback_id.0,
            public_id: card.public_id,
            title: card.title,
            repo: card.repo,
            status: card.status,
            source: card.source,
            head_branch: card.head_branch,
            pr_number: card.pr_number,
            pr_url: card.pr_url,
            pr_state: card.pr_state,
            owner_follow_up_count: card.owner_follow_up_count,
            visitor_follow_up_count: card.visitor_follow_up_count,
            run_count: card.run_count,
            total_cost_usd: card.total_cost_usd,
            last_run: card.last_run.map(LastRunRecord::from),
            archived_as: card.archived_as,
            conflicts_with_base: card.conflicts_with_base,
            ci_runs_with_secrets: card.ci_runs_with_secrets,
            created_at: card.created_at,
            updated_at: card.updated_at,
        }
    }
}

impl From<LastRunSummary> for LastRunRecord {
    fn from(run: LastRunSummary) -> Self {
        LastRunRecord {
            id: run.id.0,
            stage: run.stage,
            status: run.status,
            started_at: run.started_at,
            finished_at: run.finished_at,
            queue_place: None,
            backend: run.backend,
            instead_of: run.instead_of,
        }
    }
}

/// A pull request as the last sync mirrored it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PullRequestRecord {
    pub repo_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RepoNameShape")
    )]
    pub repo: RepoName,
    pub number: u64,
    pub title: String,
    pub author_login: Option<String>,
    pub head_ref: String,
    pub head_repo: Option<String>,
    pub head_sha: String,
    pub base_ref: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::PullRequestStateWords")
    )]
    pub state: PullRequestState,
    pub draft: bool,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::CheckStatusWords")
    )]
    pub checks: CheckStatus,
    pub github_updated_at: DateTime<Utc>,
    pub synced_at: DateTime<Utc>,
    pub feedback_id: Option<i64>,
}

impl From<PullRequest> for PullRequestRecord {
    fn from(pull: PullRequest) -> Self {
        PullRequestRecord {
            repo_id: pull.repo_id.0,
            repo: pull.repo,
            number: pull.number,
            title: pull.title,
            author_login: pull.author_login,
            head_ref: pull.head_ref,
            head_repo: pull.head_repo,
            head_sha: pull.head_sha,
            base_ref: pull.base_ref,
            state: pull.state,
            draft: pull.draft,
            checks: pull.checks,
            github_updated_at: pull.github_updated_at,
            synced_at: pull.synced_at,
            feedback_id: pull.feedback_id.map(|id| id.0),
        }
    }
}

/// One version of a managed comment.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CommentVersionRecord {
    pub id: i64,
    pub managed_comment_id: i64,
    pub number: u32,
    pub body: String,
    pub content: String,
    pub full_content: Option<String>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::VersionOriginWords")
    )]
    pub origin: VersionOrigin,
    pub author_login: Option<String>,
    pub run_id: Option<i64>,
    pub based_on: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub edited_by_other: bool,
    pub approved_at: Option<DateTime<Utc>>,
}

impl From<CommentVersion> for CommentVersionRecord {
    fn from(version: CommentVersion) -> Self {
        CommentVersionRecord {
            id: version.id.0,
            managed_comment_id: version.managed_comment_id.0,
            number: version.number,
            body: version.body,
            content: version.content,
            full_content: version.full_content,
            origin: version.origin,
            author_login: version.author_login,
            run_id: version.run_id.map(|id| id.0),
            based_on: version.based_on.map(|id| id.0),
            created_at: version.created_at,
            edited_by_other: version.edited_by_other,
            approved_at: version.approved_at,
        }
    }
}

/// Something that happened to a run, as a notification shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunEventRecord {
    pub id: i64,
    pub run_id: i64,
    pub feedback_id: Option<i64>,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RunEventKindWords")
    )]
    pub kind: RunEventKind,
    pub message: String,
    pub created_at: DateTime<Utc>,
}

impl From<RunEvent> for RunEventRecord {
    fn from(event: RunEvent) -> Self {
        RunEventRecord {
            id: event.id,
            run_id: event.run_id.0,
            feedback_id: event.feedback_id.map(|id| id.0),
            kind: event.kind,
            message: event.message,
            created_at: event.created_at,
        }
    }
}

/// One line of a comparison between two texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChangedLineRecord {
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::LineChangeWords")
    )]
    pub change: LineChange,
    pub text: String,
}

/// A comparison's lines as the page receives them.
pub fn changed_lines(lines: Vec<DiffLine>) -> Vec<ChangedLineRecord> {
    lines
        .into_iter()
        .map(|line| ChangedLineRecord {
            change: line.change,
            text: line.text,
        })
        .collect()
}

/// What changed in the mirror, sent with the window's "mirror changed" event so that the
/// page draws again only the cards, panel and lists it touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MirrorChangesRecord {
    /// Items whose card or detail may look different (the item, its thread, its runs).
    pub feedback_ids: Vec<i64>,
    pub run_ids: Vec<i64>,
    /// Pull requests whose row, stage comments, results or runs changed.
    pub pull_requests: Vec<PullRequestKeyRecord>,
    pub outbox: bool,
    /// A repository changed, or too much to say: everything is drawn again.
    pub everything: bool,
}

/// A pull request named by its repository's id and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PullRequestKeyRecord {
    pub repo_id: i64,
    pub number: u64,
}

impl MirrorChangesRecord {
    /// Everything may have changed: the page draws everything again.
    pub fn everything() -> Self {
        MirrorChangesRecord {
            feedback_ids: Vec::new(),
            run_ids: Vec::new(),
            pull_requests: Vec::new(),
            outbox: true,
            everything: true,
        }
    }
}

impl From<MirrorChanges> for MirrorChangesRecord {
    fn from(changes: MirrorChanges) -> Self {
        MirrorChangesRecord {
            feedback_ids: changes.feedback_ids.iter().map(|id| id.0).collect(),
            run_ids: changes.run_ids.iter().map(|id| id.0).collect(),
            pull_requests: changes
                .pull_requests
                .iter()
                .map(|(repo, number)| PullRequestKeyRecord {
                    repo_id: repo.0,
                    number: *number,
                })
                .collect(),
            outbox: changes.outbox,
            everything: changes.everything,
        }
    }
}
