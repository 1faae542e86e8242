//! Reasons to update a feedback PR by itself (a failing check; before, the owner's
//! "changes requested" review), each recorded once by the sync that saw it, and what was decided
//! for it: a run started (written with the run, in `start_code_run`), skipped, or stopped.

use crate::areas::AutomaticUpdateRecords;
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::error::StoreError;
use super::time_text::time_text;
use handoff_domain::{
    AutomaticDecision, AutomaticTrigger, AutomaticUpdate, AutomaticUpdateId, FeedbackId,
    FollowUpId, RepoId, RunId,
};

/// A reason to update, as a sync finds it.
#[derive(Debug, Clone)]
pub struct NewAutomaticUpdate<'a> {
    pub feedback_id: FeedbackId,
    pub pr_number: u64,
    pub trigger: AutomaticTrigger,
    /// `check_run:ID` or `review:ID`: the same one is recorded once.
    pub github_source: &'a str,
    pub head_sha: &'a str,
    /// The check's name, or the reviewer's login.
    pub subject: &'a str,
    pub actions_job_id: Option<u64>,
    /// The candidates the run lets into its prompt.
    pub follow_up_ids: &'a [FollowUpId],
}

/// The columns [`automatic_update_from_row`] reads.
macro_rules! columns {
    () => {
        "id, repo_id, feedback_id, pr_number, trigger, github_source, head_sha, subject, \
         actions_job_id, follow_up_ids, decision, reason, error_signature, run_id, created_at, \
         decided_at"
    };
}

fn automatic_update_from_row(row: &SqliteRow) -> Result<AutomaticUpdate, StoreError> {
    let word = |column: &str| -> Result<String, StoreError> { Ok(row.try_get(column)?) };
    let follow_up_ids: String = row.try_get("follow_up_ids")?;
    let run_id: Option<i64> = row.try_get("run_id")?;
    let job: Option<i64> = row.try_get("actions_job_id")?;
    let number: i64 = row.try_get("pr_number")?;
    Ok(AutomaticUpdate {
        id: AutomaticUpdateId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        feedback_id: FeedbackId(row.try_get("feedback_id")?),
        pr_number: u64::try_from(number).unwrap_or_default(),
        trigger: {
            let text = word("trigger")?;
            AutomaticTrigger::parse(&text)
                .ok_or_else(|| StoreError::Corrupt(format!("automatic update trigger {text:?}")))?
        },
        github_source: word("github_source")?,
        head_sha: word("head_sha")?,
        subject: word("subject")?,
        actions_job_id: job.and_then(|job| u64::try_from(job).ok()),
        follow_up_ids: serde_json::from_str(&follow_up_ids)
            .map_err(|error| StoreError::Corrupt(format!("follow_up_ids: {error}")))?,
        decision: {
            let text = word("decision")?;
            AutomaticDecision::parse(&text)
                .ok_or_else(|| StoreError::Corrupt(format!("automatic update decision {text:?}")))?
        },
        reason: row.try_get("reason")?,
        error_signature: row.try_get("error_signature")?,
        run_id: run_id.map(RunId),
        created_at: row.try_get("created_at")?,
        decided_at: row.try_get("decided_at")?,
    })
}

impl AutomaticUpdateRecords<'_> {
    /// Records a reason to update, pending; `None` when the same one was recorded before.
    pub async fn record_automatic_update(
        &self,
        new: &NewAutomaticUpdate<'_>,
    ) -> Result<Option<AutomaticUpdate>, StoreError> {
        let ids =
            serde_json::to_string(&new.follow_up_ids.iter().map(|id| id.0).collect::<Vec<_>>())
                .map_err(|error| StoreError::Corrupt(error.to_string()))?;
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO automatic_updates (repo_id, feedback_id, pr_number, trigger, \
             github_source, head_sha, subject, actions_job_id, follow_up_ids, created_at) \
             SELECT repo_id, id, ?, ?, ?, ?, ?, ?, ?, ? FROM feedback WHERE id = ? \
             ON CONFLICT (feedback_id, github_source) DO NOTHING RETURNING id",
        )
        .bind(i64::try_from(new.pr_number).unwrap_or(i64::MAX))
        .bind(new.trigger.as_str())
        .bind(new.github_source)
        .bind(new.head_sha)
        .bind(new.subject)
        .bind(new.actions_job_id.and_then(|job| i64::try_from(job).ok()))
        .bind(ids)
        .bind(self.store.now_text())
        .bind(new.feedback_id.0)
        .fetch_optional(&self.store.pool)
        .await?;
        match id {
            Some(id) => Ok(Some(self.automatic_update(AutomaticUpdateId(id)).await?)),
            None => Ok(None),
        }
    }

    pub async fn automatic_update(
        &self,
        id: AutomaticUpdateId,
    ) -> Result<AutomaticUpdate, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM automatic_updates WHERE id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("automatic update {id} vanished")))?;
        automatic_update_from_row(&row)
    }

    /// The reasons not yet decided, oldest first.
    pub async fn pending_automatic_updates(&self) -> Result<Vec<AutomaticUpdate>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM automatic_updates WHERE decision = 'pending' ORDER BY id"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(automatic_update_from_row).collect()
    }

    /// Every reason to update item `feedback_id`, oldest first.
    pub async fn automatic_updates_of(
        &self,
        feedback_id: FeedbackId,
    ) -> Result<Vec<AutomaticUpdate>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM automatic_updates WHERE feedback_id = ? ORDER BY id"
        ))
        .bind(feedback_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(automatic_update_from_row).collect()
    }

    /// How many automatic runs PR `pr_number` got since `since`.
    pub async fn automatic_runs_since(
        &self,
        repo_id: RepoId,
        pr_number: u64,
        since: DateTime<Utc>,
    ) -> Result<u32, StoreError> {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(DISTINCT run_id) FROM automatic_updates WHERE repo_id = ? AND pr_number = ? \
             AND decision = 'started' AND decided_at >= ?",
        )
        .bind(repo_id.0)
        .bind(i64::try_from(pr_number).unwrap_or(i64::MAX))
        .bind(time_text(since))
        .fetch_one(&self.store.pool)
        .await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// The newest decided reason for check `check_name` on PR `pr_number` before `before`
    /// that ran or stopped (what "twice in a row" compares with).
    pub async fn previous_check_update(
        &self,
        repo_id: RepoId,
        pr_number: u64,
        check_name: &str,
        before: AutomaticUpdateId,
    ) -> Result<Option<AutomaticUpdate>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM automatic_updates WHERE repo_id = ? AND pr_number = ? \
             AND trigger = 'check_failed' AND subject = ? AND id < ? \
             AND decision IN ('started', 'stopped') ORDER BY id DESC LIMIT 1"
        ))
        .bind(repo_id.0)
        .bind(i64::try_from(pr_number).unwrap_or(i64::MAX))
        .bind(check_name)
        .bind(before.0)
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(automatic_update_from_row).transpose()
    }

    /// Decides a pending reason without a run: `Skipped` or `Stopped`, and why.
    pub async fn decide_automatic_update(
        &self,
        id: AutomaticUpdateId,
        decision: AutomaticDecision,
        reason: &str,
        error_signature: Option<&str>,
    ) -> Result<AutomaticUpdate, StoreError> {
        let changed = sqlx::query(
            "UPDATE automatic_updates SET decision = ?, reason = ?, error_signature = ?, \
             decided_at = ? WHERE id = ? AND decision = 'pending'",
        )
        .bind(decision.as_str())
        .bind(reason)
        .bind(error_signature)
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if changed.rows_affected() == 0 {
            return Err(StoreError::AutomaticUpdateDecided(id));
        }
        self.automatic_update(id).await
    }
}

/// What `start_code_run` writes besides the run when the run is an automatic update
/// (one run for every reason its item has at once: two checks that failed together).
#[derive(Debug, Clone, PartialEq)]
pub struct AutomaticStart {
    /// The reasons it answers, each with what its check's failure looked like.
    pub updates: Vec<(AutomaticUpdateId, Option<String>)>,
    /// In words, for the run's record, the window and the notification.
    pub started_because: String,
    /// The candidates let into the prompt.
    pub include: Vec<FollowUpId>,
}

impl AutomaticStart {
    /// The reason Handoff's follow-up is written for (the first).
    pub fn first_update(&self) -> Option<AutomaticUpdateId> {
        self.updates.first().map(|(id, _)| *id)
    }
}

/// Writes, in the run's own transaction, that the reasons of `start` started `run_id`:
/// their candidates let into prompts and each reason decided. A reason already decided
/// (another process took it) undoes the run.
pub(super) async fn record_automatic_start(
    connection: &mut sqlx::SqliteConnection,
    feedback_id: FeedbackId,
    run_id: RunId,
    start: &AutomaticStart,
    now: &str,
) -> Result<(), StoreError> {
    for follow_up in &start.include {
        sqlx::query(
            "INSERT INTO followup_inclusions (followup_id, included_at) \
             SELECT id, ? FROM followups WHERE id = ? AND feedback_id = ? \
             ON CONFLICT (followup_id) DO NOTHING",
        )
        .bind(now)
        .bind(follow_up.0)
        .bind(feedback_id.0)
        .execute(&mut *connection)
        .await?;
    }
    for (update_id, error_signature) in &start.updates {
        let changed = sqlx::query(
            "UPDATE automatic_updates SET decision = 'started', reason = ?, \
             error_signature = ?, run_id = ?, decided_at = ? WHERE id = ? AND decision = 'pending'",
        )
        .bind(&start.started_because)
        .bind(error_signature)
        .bind(run_id.0)
        .bind(now)
        .bind(update_id.0)
        .execute(&mut *connection)
        .await?;
        if changed.rows_affected() == 0 {
            return Err(StoreError::AutomaticUpdateDecided(*update_id));
        }
    }
    Ok(())
}
