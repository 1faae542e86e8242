//! Where each repository's last sync got to: the times from which the next sync asks
//! GitHub for changed issues, pull requests and comments, and when the last complete
//! pass ran.

use crate::areas::SyncStateRecords;
use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::time_text::time_text;
use handoff_domain::RepoId;

/// A repository's sync cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncCursor {
    /// Issues and pull requests updated at or after this (GitHub's clock) are asked for.
    pub issues_since: DateTime<Utc>,
    /// Issue comments updated at or after this (GitHub's clock) are asked for.
    pub comments_since: DateTime<Utc>,
    /// When the last complete pass ended (this machine's clock).
    pub complete_pass_at: DateTime<Utc>,
}

impl SyncStateRecords<'_> {
    /// `repo_id`'s cursor; `None` before its first complete sync.
    pub async fn sync_cursor(&self, repo_id: RepoId) -> Result<Option<SyncCursor>, StoreError> {
        let row: Option<(DateTime<Utc>, DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(
            "SELECT issues_since, comments_since, complete_pass_at FROM sync_cursors \
             WHERE repo_id = ?",
        )
        .bind(repo_id.0)
        .fetch_optional(&self.store.pool)
        .await?;
        Ok(row.map(
            |(issues_since, comments_since, complete_pass_at)| SyncCursor {
                issues_since,
                comments_since,
                complete_pass_at,
            },
        ))
    }

    pub async fn set_sync_cursor(
        &self,
        repo_id: RepoId,
        cursor: &SyncCursor,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO sync_cursors (repo_id, issues_since, comments_since, complete_pass_at) \
             VALUES (?, ?, ?, ?) ON CONFLICT (repo_id) DO UPDATE SET \
             issues_since = excluded.issues_since, comments_since = excluded.comments_since, \
             complete_pass_at = excluded.complete_pass_at",
        )
        .bind(repo_id.0)
        .bind(time_text(cursor.issues_since))
        .bind(time_text(cursor.comments_since))
        .bind(time_text(cursor.complete_pass_at))
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }
}
