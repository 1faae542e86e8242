//! Follow-ups (F4): appended, never edited; visitor ones enter prompts only once the
//! owner includes them.

use super::error::StoreError;
use super::row_mapping::{follow_up_columns, follow_up_from_row};
use super::time_text::now_text;
use super::Store;
use crate::domain::follow_up::check_owner_follow_up_allowed;
use crate::domain::{FeedbackId, FollowUp, FollowUpBody, FollowUpId, FollowUpSource};

impl Store {
    /// Appends the owner's follow-up to a feedback item. Refused on a MERGED item.
    pub async fn add_owner_follow_up(
        &self,
        feedback_id: FeedbackId,
        body: &str,
    ) -> Result<FollowUp, StoreError> {
        let body = FollowUpBody::parse("follow-up", body)?;
        let feedback = self.feedback(feedback_id).await?;
        check_owner_follow_up_allowed(feedback_id, feedback.status)?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO followups (feedback_id, body, source, created_at) \
             VALUES (?, ?, 'owner', ?) RETURNING id",
        )
        .bind(feedback_id.0)
        .bind(body.as_str())
        .bind(now_text())
        .fetch_one(&self.pool)
        .await?;
        self.follow_up(FollowUpId(id)).await
    }

    /// Appends a visitor's follow-up mirrored from GitHub comment `github_comment_id`.
    /// A comment already mirrored is not added again: the result is then `None`.
    pub async fn add_visitor_follow_up(
        &self,
        feedback_id: FeedbackId,
        body: &str,
        author_login: &str,
        github_comment_id: u64,
    ) -> Result<Option<FollowUp>, StoreError> {
        let body = FollowUpBody::parse("follow-up", body)?;
        self.feedback(feedback_id).await?;
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO followups (feedback_id, body, source, author_login, github_comment_id, created_at) \
             VALUES (?, ?, 'visitor', ?, ?, ?) ON CONFLICT (github_comment_id) DO NOTHING RETURNING id",
        )
        .bind(feedback_id.0)
        .bind(body.as_str())
        .bind(author_login)
        .bind(github_comment_id as i64)
        .bind(now_text())
        .fetch_optional(&self.pool)
        .await?;
        match id {
            Some(id) => Ok(Some(self.follow_up(FollowUpId(id)).await?)),
            None => Ok(None),
        }
    }

    /// The owner lets a visitor follow-up into prompts, marked as untrusted.
    pub async fn include_visitor_follow_up(&self, id: FollowUpId) -> Result<FollowUp, StoreError> {
        let follow_up = self.follow_up(id).await?;
        if follow_up.source == FollowUpSource::Visitor {
            sqlx::query(
                "INSERT INTO followup_inclusions (followup_id, included_at) VALUES (?, ?) \
                 ON CONFLICT (followup_id) DO NOTHING",
            )
            .bind(id.0)
            .bind(now_text())
            .execute(&self.pool)
            .await?;
        }
        self.follow_up(id).await
    }

    pub async fn follow_up(&self, id: FollowUpId) -> Result<FollowUp, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            follow_up_columns!(),
            " FROM followups u LEFT JOIN followup_inclusions i ON i.followup_id = u.id WHERE u.id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::FollowUpNotFound(id.0))?;
        follow_up_from_row(&row)
    }

    /// The thread of a feedback item, in the order it was written.
    pub async fn follow_ups(&self, feedback_id: FeedbackId) -> Result<Vec<FollowUp>, StoreError> {
        self.feedback(feedback_id).await?;
        let rows = sqlx::query(concat!(
            "SELECT ",
            follow_up_columns!(),
            " FROM followups u LEFT JOIN followup_inclusions i ON i.followup_id = u.id \
              WHERE u.feedback_id = ? ORDER BY u.id"
        ))
        .bind(feedback_id.0)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(follow_up_from_row).collect()
    }
}
