//! Items off the board and back: the item's `archived_as` and the history of each
//! change (who, when), written together. Nothing of the item is deleted.

use sqlx::Row as _;

use super::error::StoreError;
use super::time_text::now_text;
use super::Store;
use crate::domain::{
    ArchiveActor, ArchiveChange, ArchiveState, Feedback, FeedbackId, FeedbackStatus,
};

impl Store {
    /// Puts item `id` off the board as `state`, or back on it with `None`, as `actor`
    /// did; a change to what it already is changes nothing. The owner cannot put away
    /// an item whose run is going (GitHub can: its issue was closed meanwhile).
    pub async fn set_archive_state(
        &self,
        id: FeedbackId,
        state: Option<ArchiveState>,
        actor: ArchiveActor,
    ) -> Result<Feedback, StoreError> {
        let item = self.feedback(id).await?;
        if item.archived_as == state {
            return Ok(item);
        }
        if state.is_some() && actor == ArchiveActor::Owner && item.status == FeedbackStatus::Coding
        {
            return Err(StoreError::ArchiveWhileRunning(id));
        }
        let now = now_text();
        let mut transaction = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "UPDATE feedback SET archived_as = ?, archived_at = ?, updated_at = ? WHERE id = ?",
        )
        .bind(state.map(ArchiveState::as_str))
        .bind(state.map(|_| now.clone()))
        .bind(&now)
        .bind(id.0)
        .execute(&mut *transaction)
        .await?;
        sqlx::query(
            "INSERT INTO archive_changes (feedback_id, archived_as, changed_by, changed_at) \
             VALUES (?, ?, ?, ?)",
        )
        .bind(id.0)
        .bind(state.map(ArchiveState::as_str))
        .bind(actor.as_str())
        .bind(&now)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        self.feedback(id).await
    }

    /// Every time item `id` left the board or came back, oldest first.
    pub async fn archive_history(&self, id: FeedbackId) -> Result<Vec<ArchiveChange>, StoreError> {
        self.feedback(id).await?;
        let rows = sqlx::query(
            "SELECT archived_as, changed_by, changed_at FROM archive_changes \
             WHERE feedback_id = ? ORDER BY id",
        )
        .bind(id.0)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let archived_as: Option<String> = row.try_get("archived_as")?;
                let changed_by: String = row.try_get("changed_by")?;
                Ok(ArchiveChange {
                    archived_as: match archived_as {
                        None => None,
                        Some(text) => Some(ArchiveState::parse(&text).ok_or_else(|| {
                            StoreError::Corrupt(format!("archive state {text:?}"))
                        })?),
                    },
                    changed_by: ArchiveActor::parse(&changed_by).ok_or_else(|| {
                        StoreError::Corrupt(format!("archive actor {changed_by:?}"))
                    })?,
                    changed_at: row.try_get("changed_at")?,
                })
            })
            .collect()
    }
}
