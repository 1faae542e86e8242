//! Items off the board and back: the item's `archived_as` and the history of each
//! change (who, when), written together. Nothing of the item is deleted.

use super::error::StoreError;
use super::row_mapping::archive_change_from_row;
use crate::areas::FeedbackRecords;
use handoff_domain::{
    ArchiveActor, ArchiveChange, ArchiveState, Feedback, FeedbackId, FeedbackStatus,
};

impl FeedbackRecords<'_> {
    /// Puts item `id` off the board as `state`, or back on it with `None`, as `actor`
    /// did; a change to what it already is changes nothing. The owner cannot put away
    /// an item whose run is going (GitHub can: its issue was closed meanwhile). Returns
    /// the item and whether it changed.
    pub async fn set_archive_state(
        &self,
        id: FeedbackId,
        state: Option<ArchiveState>,
        actor: ArchiveActor,
    ) -> Result<(Feedback, bool), StoreError> {
        let item = self.feedback(id).await?;
        if item.archived_as == state {
            return Ok((item, false));
        }
        if state.is_some() && actor == ArchiveActor::Owner && item.status == FeedbackStatus::Coding
        {
            return Err(StoreError::ArchiveWhileRunning(id));
        }
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
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
        Ok((self.feedback(id).await?, true))
    }

    /// Every time item `id` left the board or came back, oldest first.
    pub async fn archive_history(&self, id: FeedbackId) -> Result<Vec<ArchiveChange>, StoreError> {
        self.feedback(id).await?;
        let rows = sqlx::query(
            "SELECT archived_as, changed_by, changed_at FROM archive_changes \
             WHERE feedback_id = ? ORDER BY id",
        )
        .bind(id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(archive_change_from_row).collect()
    }
}
