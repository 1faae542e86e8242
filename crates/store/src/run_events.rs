//! Run events: what the app turns into notifications. The database keeps "PR
//! opened" to one per feedback item.

use crate::areas::RunRecords;
use sqlx::Row as _;

use super::error::StoreError;
use handoff_domain::run_event::{RunEvent, RunEventKind};
use handoff_domain::{FeedbackId, RunId};

fn event_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<RunEvent, StoreError> {
    let kind: String = row.try_get("kind")?;
    let feedback_id: Option<i64> = row.try_get("feedback_id")?;
    Ok(RunEvent {
        id: row.try_get("id")?,
        run_id: RunId(row.try_get("run_id")?),
        feedback_id: feedback_id.map(FeedbackId),
        kind: RunEventKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("run event {kind:?}")))?,
        message: row.try_get("message")?,
        created_at: row.try_get("created_at")?,
        seen_at: row.try_get("seen_at")?,
    })
}

impl RunRecords<'_> {
    /// Records an event; `None` when it would announce a PR opened a second time.
    pub async fn record_run_event(
        &self,
        run_id: RunId,
        feedback_id: Option<FeedbackId>,
        kind: RunEventKind,
        message: &str,
    ) -> Result<Option<RunEvent>, StoreError> {
        let row = sqlx::query(
            "INSERT INTO run_events (run_id, feedback_id, kind, message, created_at) VALUES (?, ?, ?, ?, ?) \
             ON CONFLICT DO NOTHING RETURNING id, run_id, feedback_id, kind, message, created_at, seen_at",
        )
        .bind(run_id.0)
        .bind(feedback_id.map(|id| id.0))
        .bind(kind.as_str())
        .bind(message)
        .bind(self.store.now_text())
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(event_from_row).transpose()
    }

    /// Events of one run, oldest first.
    pub async fn run_events(&self, run_id: RunId) -> Result<Vec<RunEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, run_id, feedback_id, kind, message, created_at, seen_at FROM run_events \
             WHERE run_id = ? ORDER BY id",
        )
        .bind(run_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(event_from_row).collect()
    }

    /// Events not yet shown, oldest first, marked shown as they are handed out.
    pub async fn take_unseen_run_events(&self) -> Result<Vec<RunEvent>, StoreError> {
        let rows = sqlx::query(
            "UPDATE run_events SET seen_at = ? WHERE seen_at IS NULL \
             RETURNING id, run_id, feedback_id, kind, message, created_at, seen_at",
        )
        .bind(self.store.now_text())
        .fetch_all(&self.store.pool)
        .await?;
        let mut events: Vec<RunEvent> =
            rows.iter().map(event_from_row).collect::<Result<_, _>>()?;
        events.sort_by_key(|event| event.id);
        Ok(events)
    }

    /// Every event of a feedback item, oldest first.
    pub async fn feedback_events(
        &self,
        feedback_id: FeedbackId,
    ) -> Result<Vec<RunEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, run_id, feedback_id, kind, message, created_at, seen_at FROM run_events \
             WHERE feedback_id = ? ORDER BY id",
        )
        .bind(feedback_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(event_from_row).collect()
    }
}
