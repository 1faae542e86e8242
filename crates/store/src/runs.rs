//! Runs and their logs: starting a code run (status, quota and the one-active-run
//! rule in one transaction), recording its progress and result, reading it back.

use crate::areas::RunRecords;
use serde::Serialize;
use sqlx::Row as _;

use super::automatic_updates::{record_automatic_start, AutomaticStart};
use super::error::StoreError;
use super::feedback::change_status;
use super::quota::{quota_status_in, QuotaStatus};
use super::row_mapping::{log_chunk_from_row, run_columns, run_from_row};
use handoff_domain::feedback_status::next_status;
use handoff_domain::RunFailureCode;
use handoff_domain::{
    code_run_kind, CodeRunKind, FeedbackId, FeedbackStatus, FollowUpBody, LogChunk, LogStream, Run,
    RunId, RunStatus, SandboxBackend, StatusEvent,
};

/// A request to start a code run on a feedback item: first run, iterate or retry.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeRunRequest {
    pub feedback_id: FeedbackId,
    pub backend: SandboxBackend,
    pub agent_preset: String,
    /// New instructions from the owner; stored as a follow-up in the same transaction.
    pub instructions: Option<String>,
}

/// A code run that was allowed to start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartedCodeRun {
    pub run: Run,
    pub kind: CodeRunKind,
    /// The quota after this run took its unit.
    pub quota: QuotaStatus,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    Succeeded {
        exit_code: Option<i64>,
        end_sha: Option<String>,
        output: Option<String>,
    },
    Failed {
        failure_code: RunFailureCode,
        message: String,
        exit_code: Option<i64>,
    },
    Cancelled {
        reason: String,
    },
}

impl RunOutcome {
    fn run_status(&self) -> RunStatus {
        match self {
            RunOutcome::Succeeded { .. } => RunStatus::Succeeded,
            RunOutcome::Failed { .. } => RunStatus::Failed,
            RunOutcome::Cancelled { .. } => RunStatus::Cancelled,
        }
    }
}

/// Which runs a listing shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    pub feedback_id: Option<FeedbackId>,
    pub active_only: bool,
    pub limit: Option<u32>,
}

fn active_run_error(
    error: sqlx::Error,
    feedback_id: FeedbackId,
    pr_number: Option<u64>,
) -> StoreError {
    match &error {
        sqlx::Error::Database(database_error) if database_error.is_unique_violation() => {
            if database_error.message().contains("pr_number") {
                StoreError::PullRequestRunAlreadyActive {
                    pr_number: pr_number.unwrap_or_default(),
                }
            } else {
                StoreError::RunAlreadyActive { feedback_id }
            }
        }
        _ => StoreError::Database(error),
    }
}

impl RunRecords<'_> {
    /// Starts a code run: decides its kind by the iterate rules, takes a unit of quota,
    /// stores new instructions as a follow-up, and moves the item to CODING, all in one
    /// transaction. The database refuses a second active run for the item even if two
    /// callers get here at once.
    pub async fn start_code_run(
        &self,
        request: &CodeRunRequest,
    ) -> Result<StartedCodeRun, StoreError> {
        self.start_code_run_as(request, None).await
    }

    /// [`RunRecords::start_code_run`] for an automatic update when `automatic` says so: its
    /// instructions are Handoff's (marked as such), the candidates it names are let into
    /// prompts, the run says why it started, and the reason is decided as started, all in
    /// the run's one transaction.
    pub async fn start_code_run_as(
        &self,
        request: &CodeRunRequest,
        automatic: Option<&AutomaticStart>,
    ) -> Result<StartedCodeRun, StoreError> {
        let instructions = request
            .instructions
            .as_deref()
            .map(|text| FollowUpBody::parse("follow-up", text))
            .transpose()?;
        let feedback_id = request.feedback_id;
        let now = self.store.now();
        let now_text = super::time_text::time_text(now);
        let driver = self.store.driver_columns();

        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let (repo_id, status, pr_number) = item_to_start(&mut transaction, feedback_id).await?;
        let kind = code_run_kind(feedback_id, status)?;
        let quota = quota_left_to_start(&mut transaction, repo_id, now).await?;

        if let Some(body) = &instructions {
            let update = automatic.and_then(AutomaticStart::first_update);
            add_run_instructions(&mut transaction, feedback_id, body, &now_text, update).await?;
        }

        let run_id: i64 = sqlx::query_scalar(
            "INSERT INTO runs (repo_id, feedback_id, pr_number, stage, code_run_kind, backend, \
             agent_preset, status, instructions, created_at, started_because, \
             driver_pid, driver_machine, driver_started_at, driver_lock) \
             VALUES (?, ?, ?, 'code', ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(repo_id.0)
        .bind(feedback_id.0)
        .bind(pr_number)
        .bind(kind.as_str())
        .bind(request.backend.as_str())
        .bind(&request.agent_preset)
        .bind(instructions.as_ref().map(FollowUpBody::as_str))
        .bind(&now_text)
        .bind(automatic.map(|start| start.started_because.as_str()))
        .bind(driver.pid)
        .bind(driver.machine)
        .bind(driver.started_at)
        .bind(driver.lock)
        .fetch_one(&mut *transaction)
        .await
        .map_err(|error| active_run_error(error, feedback_id, pr_number.map(|n| n as u64)))?;
        let run_id = RunId(run_id);
        if let Some(start) = automatic {
            record_automatic_start(&mut transaction, feedback_id, run_id, start, &now_text).await?;
        }

        use_quota(&mut transaction, repo_id, run_id, &now_text).await?;
        let next = next_status(feedback_id, status, StatusEvent::RunStarted)?;
        change_status(
            &mut transaction,
            &self.store.now_text(),
            feedback_id,
            status,
            next,
            StatusEvent::RunStarted,
            Some(run_id),
        )
        .await?;
        transaction.commit().await?;

        let quota = QuotaStatus {
            used: quota.used + 1,
            left: quota.left.map(|left| left.saturating_sub(1)),
            ..quota
        };
        Ok(StartedCodeRun {
            run: self.run(run_id).await?,
            kind,
            quota,
        })
    }

    /// Marks a queued run as running, with where its sandbox lives (so a restart after a
    /// crash can find it).
    pub async fn mark_run_running(
        &self,
        id: RunId,
        sandbox_id: Option<&str>,
    ) -> Result<Run, StoreError> {
        let updated = sqlx::query(
            "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, ?), \
             sandbox_id = COALESCE(?, sandbox_id) WHERE id = ? AND status IN ('queued', 'running')",
        )
        .bind(self.store.now_text())
        .bind(sandbox_id)
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if updated.rows_affected() == 0 {
            self.run(id).await?;
            return Err(StoreError::RunAlreadyFinished(id));
        }
        self.run(id).await
    }

    /// Records the last commit a run left unfinished (kept in the cache, not pushed).
    pub async fn record_unfinished_commits(
        &self,
        id: RunId,
        end_sha: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET end_sha = ? WHERE id = ?")
            .bind(end_sha)
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Records how a run ended. For a code run the feedback item leaves CODING:
    /// WAITING_FOR_REVIEW on success, FAILED otherwise (unless the PR merged meanwhile:
    /// MERGED stays).
    pub async fn finish_run(&self, id: RunId, outcome: &RunOutcome) -> Result<Run, StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let row =
            sqlx::query("SELECT status, stage, feedback_id, parent_run_id FROM runs WHERE id = ?")
                .bind(id.0)
                .fetch_optional(&mut *transaction)
                .await?
                .ok_or(StoreError::RunNotFound(id))?;
        let status: String = row.try_get("status")?;
        if !RunStatus::parse(&status).is_some_and(RunStatus::is_active) {
            return Err(StoreError::RunAlreadyFinished(id));
        }
        let stage: String = row.try_get("stage")?;
        let feedback_id: Option<i64> = row.try_get("feedback_id")?;
        let parent_run_id: Option<i64> = row.try_get("parent_run_id")?;

        // What the run spent is recorded when its agent ends (`SpendRecords::record_run_spend`).
        let EndingColumns {
            exit_code,
            end_sha,
            output,
            failure_code,
            failure_message,
        } = ending_columns(outcome);
        sqlx::query(
            "UPDATE runs SET status = ?, finished_at = ?, started_at = COALESCE(started_at, ?), \
             exit_code = ?, end_sha = COALESCE(?, end_sha), output = COALESCE(?, output), \
             failure_code = ?, failure_message = ? WHERE id = ?",
        )
        .bind(outcome.run_status().as_str())
        .bind(&now)
        .bind(&now)
        .bind(exit_code)
        .bind(end_sha)
        .bind(output)
        .bind(failure_code)
        .bind(failure_message)
        .bind(id.0)
        .execute(&mut *transaction)
        .await?;

        if let (Some(feedback_id), "code", None) = (feedback_id, stage.as_str(), parent_run_id) {
            let feedback_id = FeedbackId(feedback_id);
            let status_text: String =
                sqlx::query_scalar("SELECT status FROM feedback WHERE id = ?")
                    .bind(feedback_id.0)
                    .fetch_one(&mut *transaction)
                    .await?;
            let status: FeedbackStatus = status_text
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("status {status_text:?}")))?;
            let event = match outcome {
                RunOutcome::Succeeded { .. } => StatusEvent::RunSucceeded,
                _ => StatusEvent::RunFailed,
            };
            if status == FeedbackStatus::Coding {
                let next = next_status(feedback_id, status, event)?;
                change_status(
                    &mut transaction,
                    &self.store.now_text(),
                    feedback_id,
                    status,
                    next,
                    event,
                    Some(id),
                )
                .await?;
            }
        }
        transaction.commit().await?;
        self.run(id).await
    }

    /// Adds a line the owner should read about a run (for example that an input comment
    /// was missing).
    pub async fn add_run_note(&self, id: RunId, note: &str) -> Result<(), StoreError> {
        let note = note.replace(['\n', '\r'], " ");
        let updated = sqlx::query(
            "UPDATE runs SET notes = CASE WHEN notes = '' THEN ? ELSE notes || char(10) || ? END WHERE id = ?",
        )
        .bind(&note)
        .bind(&note)
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::RunNotFound(id));
        }
        Ok(())
    }

    pub async fn run(&self, id: RunId) -> Result<Run, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or(StoreError::RunNotFound(id))?;
        run_from_row(&row)
    }

    /// Whether run `id` is in this mirror.
    pub async fn run_exists(&self, id: RunId) -> Result<bool, StoreError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&self.store.pool)
            .await?;
        Ok(found.is_some())
    }

    /// Runs matching `filter`, newest first.
    pub async fn runs(&self, filter: &RunFilter) -> Result<Vec<Run>, StoreError> {
        if let Some(feedback_id) = filter.feedback_id {
            self.store.feedback().feedback(feedback_id).await?;
        }
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE (?1 IS NULL OR feedback_id = ?1) \
              AND (?2 = 0 OR status IN ('queued', 'running')) \
              ORDER BY id DESC LIMIT ?3"
        ))
        .bind(filter.feedback_id.map(|id| id.0))
        .bind(filter.active_only)
        .bind(filter.limit.map(i64::from).unwrap_or(-1))
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// Appends a piece of a run's log and returns it with its sequence number.
    pub async fn append_run_log(
        &self,
        run_id: RunId,
        stream: LogStream,
        text: &str,
    ) -> Result<LogChunk, StoreError> {
        let row = sqlx::query(
            "INSERT INTO run_log_chunks (run_id, seq, stream, at, text) \
             VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_log_chunks WHERE run_id = ?1), ?2, ?3, ?4) \
             RETURNING run_id, seq, stream, at, text",
        )
        .bind(run_id.0)
        .bind(stream.as_str())
        .bind(self.store.now_text())
        .bind(text)
        .fetch_one(&self.store.pool)
        .await
        .map_err(|error| match &error {
            sqlx::Error::Database(database_error) if database_error.is_foreign_key_violation() => {
                StoreError::RunNotFound(run_id)
            }
            _ => StoreError::Database(error),
        })?;
        log_chunk_from_row(&row)
    }

    /// The log of a run after sequence number `after_seq` (all of it for 0).
    pub async fn run_log(
        &self,
        run_id: RunId,
        after_seq: i64,
    ) -> Result<Vec<LogChunk>, StoreError> {
        self.run(run_id).await?;
        let rows = sqlx::query(
            "SELECT run_id, seq, stream, at, text FROM run_log_chunks \
             WHERE run_id = ? AND seq > ? ORDER BY seq",
        )
        .bind(run_id.0)
        .bind(after_seq)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(log_chunk_from_row).collect()
    }
}

impl RunRecords<'_> {
    /// A run's full stage output and prompt, kept apart from [`Run`] because they can be
    /// long.
    pub async fn run_texts(&self, id: RunId) -> Result<RunTexts, StoreError> {
        let row = sqlx::query("SELECT prompt, output FROM runs WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&self.store.pool)
            .await?
            .ok_or(StoreError::RunNotFound(id))?;
        Ok(RunTexts {
            prompt: row.try_get("prompt")?,
            output: row.try_get("output")?,
        })
    }
}

/// The long texts of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunTexts {
    pub prompt: Option<String>,
    pub output: Option<String>,
}

impl RunRecords<'_> {
    /// Records where a run's sandbox lives, as soon as it exists, so a restart after a
    /// crash can find it.
    pub async fn set_run_sandbox(&self, id: RunId, sandbox_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET sandbox_id = ? WHERE id = ?")
            .bind(sandbox_id)
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Records what a run starts from: its branch, the commit, the prompt.
    pub async fn record_run_start(
        &self,
        id: RunId,
        head_branch: &str,
        start_sha: &str,
        prompt: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET head_branch = ?, start_sha = ?, prompt = ? WHERE id = ?")
            .bind(head_branch)
            .bind(start_sha)
            .bind(prompt)
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Marks the driving process as alive; returns whether a cancel was asked for.
    pub async fn heartbeat(&self, id: RunId) -> Result<bool, StoreError> {
        // Whoever beats drives it: a run taken over is the new driver's from here.
        let driver = self.store.driver_columns();
        let cancel: Option<Option<String>> = sqlx::query_scalar(
            "UPDATE runs SET heartbeat_at = ?, driver_pid = ?, driver_machine = ?, \
               driver_started_at = ?, driver_lock = ? \
             WHERE id = ? AND status IN ('queued', 'running') RETURNING cancel_requested_at",
        )
        .bind(self.store.now_text())
        .bind(driver.pid)
        .bind(driver.machine)
        .bind(driver.started_at)
        .bind(driver.lock)
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?;
        Ok(matches!(cancel, Some(Some(_))))
    }

    /// Asks the process driving an active run to cancel it. A run that has already
    /// ended is refused.
    pub async fn request_cancel(&self, id: RunId) -> Result<Run, StoreError> {
        let updated = sqlx::query(
            "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) \
             WHERE id = ? AND status IN ('queued', 'running')",
        )
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if updated.rows_affected() == 0 {
            self.run(id).await?;
            return Err(StoreError::RunAlreadyFinished(id));
        }
        self.run(id).await
    }

    /// The active runs among `top` and the stages it started (a full-auto chain's).
    pub async fn active_runs_of_chain(&self, top: RunId) -> Result<Vec<Run>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE (id = ?1 OR parent_run_id = ?1) \
              AND status IN ('queued', 'running') ORDER BY id DESC"
        ))
        .bind(top.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(run_from_row).collect()
    }
}

/// The columns a run's ending writes.
struct EndingColumns {
    exit_code: Option<i64>,
    /// The commit it ended on.
    end_sha: Option<String>,
    output: Option<String>,
    failure_code: Option<String>,
    failure_message: Option<String>,
}

fn ending_columns(outcome: &RunOutcome) -> EndingColumns {
    let (exit_code, end_sha, output, failure_code, failure_message) = match outcome {
        RunOutcome::Succeeded {
            exit_code,
            end_sha,
            output,
        } => (*exit_code, end_sha.clone(), output.clone(), None, None),
        RunOutcome::Failed {
            failure_code,
            message,
            exit_code,
        } => (
            *exit_code,
            None,
            None,
            Some(failure_code.as_str().to_owned()),
            Some(message.clone()),
        ),
        RunOutcome::Cancelled { reason } => (
            None,
            None,
            None,
            Some(RunFailureCode::Cancelled.as_str().to_owned()),
            Some(reason.clone()),
        ),
    };
    EndingColumns {
        exit_code,
        end_sha,
        output,
        failure_code,
        failure_message,
    }
}

/// The repository, status and pull request of the item a code run is to start on.
async fn item_to_start(
    transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    feedback_id: FeedbackId,
) -> Result<(handoff_domain::RepoId, FeedbackStatus, Option<i64>), StoreError> {
    let row = sqlx::query("SELECT repo_id, status, pr_number FROM feedback WHERE id = ?")
        .bind(feedback_id.0)
        .fetch_optional(&mut **transaction)
        .await?
        .ok_or(StoreError::FeedbackNotFound(feedback_id))?;
    let repo_id = handoff_domain::RepoId(row.try_get("repo_id")?);
    let status_text: String = row.try_get("status")?;
    let status: FeedbackStatus = status_text
        .parse()
        .map_err(|_| StoreError::Corrupt(format!("status {status_text:?}")))?;
    Ok((repo_id, status, row.try_get("pr_number")?))
}

/// The repository's quota as a run is about to start; refused when none is left.
async fn quota_left_to_start(
    transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    repo_id: handoff_domain::RepoId,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<QuotaStatus, StoreError> {
    let quota = quota_status_in(&mut **transaction, repo_id, now).await?;
    if let (true, Some(limit)) = (quota.is_exhausted(), quota.quota) {
        let repo: (String, String) = sqlx::query_as("SELECT owner, name FROM repos WHERE id = ?")
            .bind(repo_id.0)
            .fetch_one(&mut **transaction)
            .await?;
        return Err(StoreError::QuotaExhausted {
            repo: format!("{}/{}", repo.0, repo.1),
            quota: limit,
            used: quota.used,
        });
    }
    Ok(quota)
}

/// The owner's instructions for a run on `feedback_id`, kept as a follow-up of the item
/// (of the automatic update `update`, when one asked).
async fn add_run_instructions(
    transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    feedback_id: FeedbackId,
    body: &FollowUpBody,
    now_text: &str,
    update: Option<handoff_domain::AutomaticUpdateId>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO followups (feedback_id, body, source, created_at, automatic_update_id) \
         VALUES (?, ?, 'owner', ?, ?)",
    )
    .bind(feedback_id.0)
    .bind(body.as_str())
    .bind(now_text)
    .bind(update.map(|id| id.0))
    .execute(&mut **transaction)
    .await?;
    Ok(())
}

/// One unit of the repository's monthly quota, used by `run_id`.
async fn use_quota(
    transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    repo_id: handoff_domain::RepoId,
    run_id: RunId,
    now_text: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO quota_uses (repo_id, run_id, used_at) VALUES (?, ?, ?)")
        .bind(repo_id.0)
        .bind(run_id.0)
        .bind(now_text)
        .execute(&mut **transaction)
        .await?;
    Ok(())
}
