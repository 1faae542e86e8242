//! Pushes held for the owner: a code run whose commits change CI entry points for an
//! item a visitor opened ends without pushing, and its commits wait in the cache until
//! the owner approves exactly them. The approval and the push it led to are kept; the
//! held run stays as it ended.

use crate::areas::RunRecords;
use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::feedback::change_status;
use handoff_domain::feedback_status::next_status;
use handoff_domain::{FeedbackId, RunId, StatusEvent};

/// A held run's approved push, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldPushApproval {
    pub run_id: RunId,
    pub end_sha: String,
    pub approved_at: DateTime<Utc>,
    pub pushed_at: Option<DateTime<Utc>>,
    pub pr_number: Option<u64>,
}

impl RunRecords<'_> {
    /// Records that the owner approved run `run_id`'s commits (up to `end_sha`) before
    /// they are pushed. Approving twice keeps the first approval.
    pub async fn approve_held_push(&self, run_id: RunId, end_sha: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO held_push_approvals (run_id, end_sha, approved_at) VALUES (?, ?, ?) \
             ON CONFLICT (run_id) DO NOTHING",
        )
        .bind(run_id.0)
        .bind(end_sha)
        .bind(self.store.now_text())
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// The approval of run `run_id`'s held commits, if any.
    pub async fn held_push_approval(
        &self,
        run_id: RunId,
    ) -> Result<Option<HeldPushApproval>, StoreError> {
        let row: Option<(String, String, Option<String>, Option<i64>)> = sqlx::query_as(
            "SELECT end_sha, approved_at, pushed_at, pr_number FROM held_push_approvals \
             WHERE run_id = ?",
        )
        .bind(run_id.0)
        .fetch_optional(&self.store.pool)
        .await?;
        let Some((end_sha, approved_at, pushed_at, pr_number)) = row else {
            return Ok(None);
        };
        let time = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .map(|time| time.with_timezone(&Utc))
                .map_err(|error| StoreError::Corrupt(format!("a held push's time: {error}")))
        };
        Ok(Some(HeldPushApproval {
            run_id,
            end_sha,
            approved_at: time(&approved_at)?,
            pushed_at: pushed_at.as_deref().map(time).transpose()?,
            pr_number: pr_number.map(|number| number as u64),
        }))
    }

    /// Records that the held commits of `run_id` were pushed and PR `pr_number` (at
    /// `pr_url`) holds them: the item waits for review again, with the change in its
    /// history.
    pub async fn finish_held_push(
        &self,
        run_id: RunId,
        feedback_id: FeedbackId,
        pr_number: u64,
        pr_url: &str,
    ) -> Result<(), StoreError> {
        let mut transaction = self.store.pool.begin().await?;
        let status: String = sqlx::query_scalar("SELECT status FROM feedback WHERE id = ?")
            .bind(feedback_id.0)
            .fetch_one(&mut *transaction)
            .await?;
        let from: handoff_domain::FeedbackStatus = status
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("feedback status {status:?}")))?;
        let to = next_status(feedback_id, from, StatusEvent::HeldPushApproved)?;
        change_status(
            &mut transaction,
            &self.store.now_text(),
            feedback_id,
            from,
            to,
            StatusEvent::HeldPushApproved,
            Some(run_id),
        )
        .await?;
        sqlx::query("UPDATE feedback SET pr_number = ?, pr_url = ? WHERE id = ?")
            .bind(pr_number as i64)
            .bind(pr_url)
            .bind(feedback_id.0)
            .execute(&mut *transaction)
            .await?;
        sqlx::query("UPDATE held_push_approvals SET pushed_at = ?, pr_number = ? WHERE run_id = ?")
            .bind(self.store.now_text())
            .bind(pr_number as i64)
            .bind(run_id.0)
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        Ok(())
    }
}
