//! Rows to domain records: the SELECT lists and the functions that read them, so each
//! record is read the same way by every query.

use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::error::StoreError;
use handoff_domain::feedback::PullRequestState;
use handoff_domain::review_requests::{parse_labels, parse_reviewers};
use handoff_domain::{
    ArchiveActor, ArchiveChange, ArchiveState, PaidWith, RunFailureCode, SpendSource,
};
use handoff_domain::{
    CheckStatus, CodeRunKind, Feedback, FeedbackId, FeedbackSource, FeedbackStatus, FollowUp,
    FollowUpId, FollowUpOrigin, FollowUpSource, LogChunk, LogStream, NetworkMode, PublicFeedbackId,
    PullRequest, Repo, RepoId, RepoName, Run, RunId, RunStatus, SandboxBackend, Stage,
    StatusChange, StatusEvent,
};

/// The columns [`repo_from_row`] reads, from `repos r`.
macro_rules! repo_columns {
    () => {
        "r.id, r.owner, r.name, r.default_branch, r.feedback_label, r.custom_instructions, \
         r.monthly_run_quota, r.sandbox_backend, r.agent_preset, r.agent_command, r.docker_image, \
         r.run_timeout_seconds, r.e2b_template, r.network_mode, r.allowed_hosts, r.draft_pull_requests, r.file_test_issues, \
         r.run_slots, r.overflow_to_e2b, r.automatic_updates, r.automatic_attempts_per_day, \
         r.pull_request_labels, r.pull_request_reviewers, r.environment_key_files, \
         r.push_fork, r.monthly_budget_usd, r.checks_unreadable_since, r.created_at, \
         r.disconnected_at"
    };
}

/// The columns [`feedback_from_row`] reads, from `feedback f JOIN repos r`.
macro_rules! feedback_columns {
    () => {
        "f.id, f.repo_id, r.owner AS repo_owner, r.name AS repo_name, f.public_id, f.title, f.body, \
         f.source, f.github_issue_number, f.github_issue_author, f.status, f.head_branch, \
         f.pr_number, f.pr_url, f.pr_state, f.opened_by_visitor, f.approved_at, f.archived_as, \
         f.archived_at, f.created_at, f.updated_at"
    };
}

/// The columns [`run_from_row`] reads, from `runs`.
macro_rules! run_columns {
    () => {
        "id, repo_id, feedback_id, pr_number, parent_run_id, stage, code_run_kind, backend, \
         agent_preset, status, instructions, created_at, started_at, finished_at, exit_code, \
         failure_code, failure_message, notes, llm_cost_usd, tokens_in, tokens_out, spend_source, \
         paid_with, unpriced_tokens, sandbox_id, head_branch, start_sha, end_sha, heartbeat_at, cancel_requested_at, \
         started_because"
    };
}

/// The columns [`follow_up_from_row`] reads, from `followups u LEFT JOIN followup_inclusions i`.
/// The owner's own words are in prompts from the start; a candidate taken from the PR,
/// and anything someone else wrote, only once the owner includes it.
macro_rules! follow_up_columns {
    () => {
        "u.id, u.feedback_id, u.body, u.source, u.author_login, u.origin, u.candidate, u.created_at, \
         u.automatic_update_id IS NOT NULL AS automatic, \
         ((u.source = 'owner' AND u.candidate = 0) OR i.followup_id IS NOT NULL) AS included_in_prompts"
    };
}

/// The columns [`pull_request_from_row`] reads, from `pull_requests p JOIN repos r`
/// with the feedback item of the PR, if any, as `feedback_id`.
macro_rules! pull_request_columns {
    () => {
        "p.repo_id, r.owner AS repo_owner, r.name AS repo_name, p.number, p.title, p.author_login, \
         p.head_ref, p.head_repo, p.head_sha, p.base_ref, p.state, p.draft, \
         p.marked_draft_at IS NOT NULL AS marked_draft, p.conflicts_with_base, p.checks, \
         p.github_updated_at, p.synced_at, \
         (SELECT f.id FROM feedback f WHERE f.repo_id = p.repo_id AND f.pr_number = p.number \
          ORDER BY f.id DESC LIMIT 1) AS feedback_id"
    };
}

pub(crate) use {
    feedback_columns, follow_up_columns, pull_request_columns, repo_columns, run_columns,
};

fn corrupt(what: &str, text: &str) -> StoreError {
    StoreError::Corrupt(format!("unexpected {what} {text:?} in the database"))
}

fn word<T>(row: &SqliteRow, column: &str, parse: fn(&str) -> Option<T>) -> Result<T, StoreError> {
    let text: String = row.try_get(column)?;
    parse(&text).ok_or_else(|| corrupt(column, &text))
}

fn optional_word<T>(
    row: &SqliteRow,
    column: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, StoreError> {
    let text: Option<String> = row.try_get(column)?;
    text.map(|text| parse(&text).ok_or_else(|| corrupt(column, &text)))
        .transpose()
}

fn unsigned(row: &SqliteRow, column: &str) -> Result<Option<u64>, StoreError> {
    let value: Option<i64> = row.try_get(column)?;
    Ok(value.and_then(|v| u64::try_from(v).ok()))
}

fn time(row: &SqliteRow, column: &str) -> Result<DateTime<Utc>, StoreError> {
    Ok(row.try_get(column)?)
}

fn optional_time(row: &SqliteRow, column: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(row.try_get(column)?)
}

pub fn repo_from_row(row: &SqliteRow) -> Result<Repo, StoreError> {
    let quota: Option<i64> = row.try_get("monthly_run_quota")?;
    Ok(Repo {
        id: RepoId(row.try_get("id")?),
        name: RepoName {
            owner: row.try_get("owner")?,
            name: row.try_get("name")?,
        },
        default_branch: row.try_get("default_branch")?,
        feedback_label: row.try_get("feedback_label")?,
        custom_instructions: row.try_get("custom_instructions")?,
        monthly_run_quota: quota.map(|q| u32::try_from(q).unwrap_or(u32::MAX)),
        monthly_budget_usd: row.try_get("monthly_budget_usd")?,
        checks_unreadable_since: optional_time(row, "checks_unreadable_since")?,
        sandbox_backend: word(row, "sandbox_backend", SandboxBackend::parse)?,
        agent_preset: row.try_get("agent_preset")?,
        agent_command: row.try_get("agent_command")?,
        docker_image: row.try_get("docker_image")?,
        run_timeout_seconds: {
            let seconds: i64 = row.try_get("run_timeout_seconds")?;
            u32::try_from(seconds).unwrap_or(u32::MAX)
        },
        e2b_template: row.try_get("e2b_template")?,
        network_mode: word(row, "network_mode", NetworkMode::parse)?,
        allowed_hosts: {
            let text: String = row.try_get("allowed_hosts")?;
            // Entries were checked when they were set; one that no longer parses allows
            // nothing and is left out.
            text.lines().filter_map(|line| line.parse().ok()).collect()
        },
        draft_pull_requests: row.try_get::<i64, _>("draft_pull_requests")? != 0,
        file_test_issues: row.try_get::<i64, _>("file_test_issues")? != 0,
        run_slots: row
            .try_get::<Option<i64>, _>("run_slots")?
            .and_then(|slots| u32::try_from(slots).ok()),
        overflow_to_e2b: row.try_get::<i64, _>("overflow_to_e2b")? != 0,
        automatic_updates: row.try_get::<i64, _>("automatic_updates")? != 0,
        automatic_attempts_per_day: unsigned(row, "automatic_attempts_per_day")?
            .map_or(1, |attempts| u32::try_from(attempts).unwrap_or(u32::MAX)),
        pull_request_labels: parse_labels(&row.try_get::<String, _>("pull_request_labels")?)
            .map_err(StoreError::Corrupt)?,
        environment_key_files: handoff_domain::environment_key::parse_key_files(
            &row.try_get::<String, _>("environment_key_files")?,
        )
        .map_err(StoreError::Corrupt)?,
        pull_request_reviewers: parse_reviewers(
            &row.try_get::<String, _>("pull_request_reviewers")?,
        )
        .map_err(StoreError::Corrupt)?,
        push_fork: row
            .try_get::<Option<String>, _>("push_fork")?
            .and_then(|text| text.parse().ok()),
        created_at: time(row, "created_at")?,
        disconnected_at: optional_time(row, "disconnected_at")?,
    })
}

pub fn feedback_from_row(row: &SqliteRow) -> Result<Feedback, StoreError> {
    Ok(Feedback {
        id: FeedbackId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        repo: RepoName {
            owner: row.try_get("repo_owner")?,
            name: row.try_get("repo_name")?,
        },
        public_id: PublicFeedbackId(row.try_get("public_id")?),
        title: row.try_get("title")?,
        body: row.try_get("body")?,
        source: word(row, "source", FeedbackSource::parse)?,
        github_issue_number: unsigned(row, "github_issue_number")?,
        github_issue_author: row.try_get("github_issue_author")?,
        status: word(row, "status", |text| text.parse::<FeedbackStatus>().ok())?,
        head_branch: row.try_get("head_branch")?,
        pr_number: unsigned(row, "pr_number")?,
        pr_url: row.try_get("pr_url")?,
        pr_state: optional_word(row, "pr_state", PullRequestState::parse)?,
        opened_by_visitor: row.try_get("opened_by_visitor")?,
        approved_at: optional_time(row, "approved_at")?,
        archived_as: optional_word(row, "archived_as", ArchiveState::parse)?,
        archived_at: optional_time(row, "archived_at")?,
        created_at: time(row, "created_at")?,
        updated_at: time(row, "updated_at")?,
    })
}

pub fn archive_change_from_row(row: &SqliteRow) -> Result<ArchiveChange, StoreError> {
    Ok(ArchiveChange {
        archived_as: optional_word(row, "archived_as", ArchiveState::parse)?,
        changed_by: word(row, "changed_by", ArchiveActor::parse)?,
        changed_at: time(row, "changed_at")?,
    })
}

pub fn follow_up_from_row(row: &SqliteRow) -> Result<FollowUp, StoreError> {
    Ok(FollowUp {
        id: FollowUpId(row.try_get("id")?),
        feedback_id: FeedbackId(row.try_get("feedback_id")?),
        body: row.try_get("body")?,
        source: word(row, "source", FollowUpSource::parse)?,
        author_login: row.try_get("author_login")?,
        origin: word(row, "origin", FollowUpOrigin::parse)?,
        candidate: row.try_get("candidate")?,
        included_in_prompts: row.try_get("included_in_prompts")?,
        automatic: row.try_get("automatic")?,
        created_at: time(row, "created_at")?,
    })
}

pub fn run_from_row(row: &SqliteRow) -> Result<Run, StoreError> {
    let feedback_id: Option<i64> = row.try_get("feedback_id")?;
    let parent_run_id: Option<i64> = row.try_get("parent_run_id")?;
    let notes: String = row.try_get("notes")?;
    Ok(Run {
        id: RunId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        feedback_id: feedback_id.map(FeedbackId),
        pr_number: unsigned(row, "pr_number")?,
        parent_run_id: parent_run_id.map(RunId),
        stage: word(row, "stage", Stage::parse)?,
        code_run_kind: optional_word(row, "code_run_kind", CodeRunKind::parse)?,
        backend: word(row, "backend", SandboxBackend::parse)?,
        agent_preset: row.try_get("agent_preset")?,
        status: word(row, "status", RunStatus::parse)?,
        instructions: row.try_get("instructions")?,
        created_at: time(row, "created_at")?,
        started_at: optional_time(row, "started_at")?,
        finished_at: optional_time(row, "finished_at")?,
        exit_code: row.try_get("exit_code")?,
        failure_code: optional_word(row, "failure_code", RunFailureCode::parse)?,
        failure_message: row.try_get("failure_message")?,
        notes: notes
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect(),
        llm_cost_usd: row.try_get("llm_cost_usd")?,
        tokens_in: row.try_get("tokens_in")?,
        tokens_out: row.try_get("tokens_out")?,
        spend_source: optional_word(row, "spend_source", SpendSource::parse)?,
        paid_with: optional_word(row, "paid_with", PaidWith::parse)?,
        unpriced_tokens: row.try_get("unpriced_tokens")?,
        sandbox_id: row.try_get("sandbox_id")?,
        head_branch: row.try_get("head_branch")?,
        start_sha: row.try_get("start_sha")?,
        end_sha: row.try_get("end_sha")?,
        heartbeat_at: optional_time(row, "heartbeat_at")?,
        cancel_requested_at: optional_time(row, "cancel_requested_at")?,
        started_because: row.try_get("started_because")?,
    })
}

pub fn status_change_from_row(row: &SqliteRow) -> Result<StatusChange, StoreError> {
    let run_id: Option<i64> = row.try_get("run_id")?;
    Ok(StatusChange {
        feedback_id: FeedbackId(row.try_get("feedback_id")?),
        from: optional_word(row, "from_status", |text| text.parse().ok())?,
        to: word(row, "to_status", |text| text.parse().ok())?,
        event: word(row, "event", StatusEvent::parse)?,
        run_id: run_id.map(RunId),
        at: time(row, "at")?,
    })
}

pub fn log_chunk_from_row(row: &SqliteRow) -> Result<LogChunk, StoreError> {
    Ok(LogChunk {
        run_id: RunId(row.try_get("run_id")?),
        seq: row.try_get("seq")?,
        stream: word(row, "stream", LogStream::parse)?,
        at: time(row, "at")?,
        text: row.try_get("text")?,
    })
}

pub fn pull_request_from_row(row: &SqliteRow) -> Result<PullRequest, StoreError> {
    let feedback_id: Option<i64> = row.try_get("feedback_id")?;
    Ok(PullRequest {
        repo_id: RepoId(row.try_get("repo_id")?),
        repo: RepoName {
            owner: row.try_get("repo_owner")?,
            name: row.try_get("repo_name")?,
        },
        number: unsigned(row, "number")?.unwrap_or_default(),
        title: row.try_get("title")?,
        author_login: row.try_get("author_login")?,
        head_ref: row.try_get("head_ref")?,
        head_repo: row.try_get("head_repo")?,
        head_sha: row.try_get("head_sha")?,
        base_ref: row.try_get("base_ref")?,
        state: word(row, "state", PullRequestState::parse)?,
        draft: row.try_get("draft")?,
        marked_draft: row.try_get("marked_draft")?,
        conflicts_with_base: row.try_get("conflicts_with_base")?,
        checks: word(row, "checks", CheckStatus::parse)?,
        github_updated_at: time(row, "github_updated_at")?,
        synced_at: time(row, "synced_at")?,
        feedback_id: feedback_id.map(FeedbackId),
    })
}
