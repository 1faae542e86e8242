//! Follow-ups: appended, never edited. What a visitor wrote, and every candidate taken
//! from a PR (a review, an inline comment, a failing check — the owner's own included),
//! enters prompts only once the owner includes it.

use super::error::StoreError;
use super::row_mapping::{follow_up_columns, follow_up_from_row};
use super::time_text::time_text;
use crate::areas::FeedbackRecords;
use handoff_domain::follow_up::check_owner_follow_up_allowed;
use handoff_domain::{
    FeedbackId, FollowUp, FollowUpBody, FollowUpId, FollowUpOrigin, FollowUpSource,
};

/// A follow-up candidate taken from a PR.
#[derive(Debug, Clone, Copy)]
pub struct NewFollowUpCandidate<'a> {
    pub body: &'a str,
    /// The owner, or anyone else (a reviewer, a check).
    pub source: FollowUpSource,
    pub author_login: Option<&'a str>,
    pub origin: FollowUpOrigin,
    /// What it was taken from on GitHub (`review:123`), so it is never taken twice.
    pub github_source: &'a str,
    /// When it was written on GitHub: the thread stays in the order things were said.
    pub written_at: chrono::DateTime<chrono::Utc>,
}

impl FeedbackRecords<'_> {
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
        .bind(self.store.now_text())
        .fetch_one(&self.store.pool)
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
        .bind(self.store.now_text())
        .fetch_optional(&self.store.pool)
        .await?;
        match id {
            Some(id) => Ok(Some(self.follow_up(FollowUpId(id)).await?)),
            None => Ok(None),
        }
    }

    /// Appends a candidate taken from the item's PR, unless `candidate.github_source`
    /// was taken before (the result is then `None`).
    pub async fn add_follow_up_candidate(
        &self,
        feedback_id: FeedbackId,
        candidate: &NewFollowUpCandidate<'_>,
    ) -> Result<Option<FollowUp>, StoreError> {
        let body = FollowUpBody::parse("follow-up", candidate.body)?;
        self.feedback(feedback_id).await?;
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO followups (feedback_id, body, source, author_login, origin, candidate, \
             github_source, created_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?) \
             ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(feedback_id.0)
        .bind(body.as_str())
        .bind(candidate.source.as_str())
        .bind(candidate.author_login)
        .bind(candidate.origin.as_str())
        .bind(candidate.github_source)
        .bind(time_text(candidate.written_at))
        .fetch_optional(&self.store.pool)
        .await?;
        match id {
            Some(id) => Ok(Some(self.follow_up(FollowUpId(id)).await?)),
            None => Ok(None),
        }
    }

    /// The owner lets a visitor's follow-up or a candidate from the PR into prompts
    /// (someone else's text marked as untrusted there). Including twice changes nothing.
    pub async fn include_follow_up(&self, id: FollowUpId) -> Result<FollowUp, StoreError> {
        let follow_up = self.follow_up(id).await?;
        if follow_up.source == FollowUpSource::Visitor || follow_up.candidate {
            sqlx::query(
                "INSERT INTO followup_inclusions (followup_id, included_at) VALUES (?, ?) \
                 ON CONFLICT (followup_id) DO NOTHING",
            )
            .bind(id.0)
            .bind(self.store.now_text())
            .execute(&self.store.pool)
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
        .fetch_optional(&self.store.pool)
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
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(follow_up_from_row).collect()
    }
}
