//! The outbox of GitHub writes. An owner's edit and its outbox entry are written in
//! one transaction, so a crash between "saved locally" and "sent" loses nothing; the
//! sender takes entries in id order and backs off when GitHub cannot be reached.

use crate::areas::OutboxRecords;
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::error::StoreError;
use super::managed_comments::{insert_version, NewCommentVersion};
use super::time_text::time_text;
use handoff_domain::{
    CommentVersion, CommentVersionId, ManagedCommentId, OutboxEntry, OutboxEntryId,
    OutboxOperation, OutboxState, RepoId,
};

macro_rules! outbox_columns {
    () => {
        "id, repo_id, operation, managed_comment_id, comment_version_id, state, attempts, \
         next_attempt_at, last_error, created_at, sent_at, discarded_at"
    };
}

fn outbox_entry_from_row(row: &SqliteRow) -> Result<OutboxEntry, StoreError> {
    let operation: String = row.try_get("operation")?;
    let state: String = row.try_get("state")?;
    let comment: Option<i64> = row.try_get("managed_comment_id")?;
    let version: Option<i64> = row.try_get("comment_version_id")?;
    let attempts: i64 = row.try_get("attempts")?;
    Ok(OutboxEntry {
        id: OutboxEntryId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        operation: OutboxOperation::parse(&operation)
            .ok_or_else(|| StoreError::Corrupt(format!("outbox operation {operation:?}")))?,
        managed_comment_id: comment.map(ManagedCommentId),
        comment_version_id: version.map(CommentVersionId),
        state: OutboxState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("outbox state {state:?}")))?,
        attempts: attempts as u32,
        next_attempt_at: row.try_get("next_attempt_at")?,
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        sent_at: row.try_get("sent_at")?,
        discarded_at: row.try_get("discarded_at")?,
    })
}

/// How long a claim on an outbox entry holds if its process never releases it.
pub const OUTBOX_CLAIM_LEASE: std::time::Duration = std::time::Duration::from_secs(120);

/// What claiming an outbox entry found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxClaim {
    /// This process may send it now.
    Claimed,
    /// Another process is sending it now.
    HeldElsewhere,
    /// It is no longer pending: sent, in conflict or given up meanwhile.
    Settled(OutboxState),
}

impl OutboxRecords<'_> {
    /// Stores the owner's edit of a managed comment as a new version and queues it for
    /// GitHub, in one transaction.
    pub async fn save_owner_edit(
        &self,
        repo_id: RepoId,
        comment: ManagedCommentId,
        version: &NewCommentVersion,
    ) -> Result<(CommentVersion, OutboxEntry), StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let version_id =
            insert_version(&mut *transaction, &self.store.now_text(), comment, version).await?;
        let entry_id: i64 = sqlx::query_scalar(
            "INSERT INTO outbox (repo_id, operation, managed_comment_id, comment_version_id, state, \
             next_attempt_at, created_at) VALUES (?, 'update_comment', ?, ?, 'pending', ?, ?) RETURNING id",
        )
        .bind(repo_id.0)
        .bind(comment.0)
        .bind(version_id.0)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok((
            self.store.comments().comment_version(version_id).await?,
            self.outbox_entry(OutboxEntryId(entry_id)).await?,
        ))
    }

    pub async fn outbox_entry(&self, id: OutboxEntryId) -> Result<OutboxEntry, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            outbox_columns!(),
            " FROM outbox WHERE id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or(StoreError::OutboxEntryNotFound(id.0))?;
        outbox_entry_from_row(&row)
    }

    /// Pending entries, oldest first; with `due_by`, only those whose next attempt is due.
    pub async fn pending_outbox_entries(
        &self,
        due_by: Option<DateTime<Utc>>,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            outbox_columns!(),
            " FROM outbox WHERE state = 'pending' AND (?1 IS NULL OR next_attempt_at <= ?1) ORDER BY id"
        ))
        .bind(due_by.map(time_text))
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(outbox_entry_from_row).collect()
    }

    /// Entries that need the owner: pending, in conflict or refused by GitHub (not the
    /// ones the owner discarded); newest last.
    pub async fn unsent_outbox_entries(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            outbox_columns!(),
            " FROM outbox WHERE state <> 'sent' AND discarded_at IS NULL ORDER BY id"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(outbox_entry_from_row).collect()
    }

    /// Unsent entries of one comment, oldest first.
    pub async fn unsent_outbox_entries_of_comment(
        &self,
        comment: ManagedCommentId,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            outbox_columns!(),
            " FROM outbox WHERE managed_comment_id = ? AND state IN ('pending', 'conflict') ORDER BY id"
        ))
        .bind(comment.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(outbox_entry_from_row).collect()
    }

    /// The owner gives up an unsent entry: it is never sent, and leaves the outbox; the
    /// version it would have sent stays in the comment's history. An entry already sent
    /// is left as it is (the result is then `false`).
    pub async fn discard_outbox_entry(&self, id: OutboxEntryId) -> Result<bool, StoreError> {
        self.outbox_entry(id).await?;
        let discarded = sqlx::query(
            "UPDATE outbox SET state = 'failed', discarded_at = ?, \
             last_error = 'discarded by the owner' WHERE id = ? AND state <> 'sent' \
             AND discarded_at IS NULL",
        )
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(discarded.rows_affected() == 1)
    }

    /// The versions of a comment whose edit the owner discarded: never sent, kept in
    /// the history, never the comment's current text.
    pub async fn discarded_comment_versions(
        &self,
        comment: ManagedCommentId,
    ) -> Result<Vec<CommentVersionId>, StoreError> {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT comment_version_id FROM outbox WHERE managed_comment_id = ? \
             AND discarded_at IS NOT NULL AND comment_version_id IS NOT NULL ORDER BY id",
        )
        .bind(comment.0)
        .fetch_all(&self.store.pool)
        .await?;
        Ok(ids.into_iter().map(CommentVersionId).collect())
    }

    /// Puts an entry GitHub refused back in line, due now (the owner asked to try again).
    pub async fn retry_outbox_entry(&self, id: OutboxEntryId) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE outbox SET state = 'pending', next_attempt_at = ? \
             WHERE id = ? AND state = 'failed' AND discarded_at IS NULL",
        )
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Claims pending entry `id` for this process, for [`OUTBOX_CLAIM_LEASE`], unless
    /// another process holds it or it is no longer pending.
    pub async fn claim_outbox_entry(&self, id: OutboxEntryId) -> Result<OutboxClaim, StoreError> {
        let now = self.store.now();
        let until = now + chrono::Duration::from_std(OUTBOX_CLAIM_LEASE).unwrap_or_default();
        let claimed = sqlx::query(
            "UPDATE outbox SET claimed_until = ?1 WHERE id = ?2 AND state = 'pending' \
             AND (claimed_until IS NULL OR claimed_until < ?3)",
        )
        .bind(time_text(until))
        .bind(id.0)
        .bind(time_text(now))
        .execute(&self.store.pool)
        .await?
        .rows_affected()
            == 1;
        if claimed {
            return Ok(OutboxClaim::Claimed);
        }
        let entry = self.outbox_entry(id).await?;
        Ok(match entry.state {
            OutboxState::Pending => OutboxClaim::HeldElsewhere,
            settled => OutboxClaim::Settled(settled),
        })
    }

    /// Gives up this process's claim on entry `id` (sent or not).
    pub async fn release_outbox_claim(&self, id: OutboxEntryId) -> Result<(), StoreError> {
        sqlx::query("UPDATE outbox SET claimed_until = NULL WHERE id = ?")
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    pub async fn mark_outbox_sent(&self, id: OutboxEntryId) -> Result<(), StoreError> {
        self.set_outbox_state(id, OutboxState::Sent, None).await
    }

    /// Leaves an entry pending, to be tried again at `next_attempt_at`.
    pub async fn postpone_outbox_entry(
        &self,
        id: OutboxEntryId,
        error: &str,
        next_attempt_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? \
             WHERE id = ? AND state = 'pending'",
        )
        .bind(error)
        .bind(time_text(next_attempt_at))
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    pub async fn mark_outbox_conflict(
        &self,
        id: OutboxEntryId,
        message: &str,
    ) -> Result<(), StoreError> {
        self.set_outbox_state(id, OutboxState::Conflict, Some(message))
            .await
    }

    pub async fn mark_outbox_failed(
        &self,
        id: OutboxEntryId,
        message: &str,
    ) -> Result<(), StoreError> {
        self.set_outbox_state(id, OutboxState::Failed, Some(message))
            .await
    }

    async fn set_outbox_state(
        &self,
        id: OutboxEntryId,
        state: OutboxState,
        message: Option<&str>,
    ) -> Result<(), StoreError> {
        let sent_at = (state == OutboxState::Sent).then(|| self.store.now_text());
        sqlx::query(
            "UPDATE outbox SET state = ?, last_error = COALESCE(?, last_error), sent_at = COALESCE(?, sent_at), \
             attempts = attempts + 1 WHERE id = ?",
        )
        .bind(state.as_str())
        .bind(message)
        .bind(sent_at)
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }
}
