//! What another process or a failing disk can do to a mirror under a running app, done
//! on purpose through plain SQL: a run whose process died long ago, and the table of
//! changes the window follows taken away and given back.

use chrono::{Duration, Utc};
use handoff::domain::RunId;
use handoff::Store;

/// Makes run `run_id` look as if its process last showed a sign of life `minutes` ago.
pub async fn make_run_silent_for(store: &Store, run_id: RunId, minutes: i64) {
    let then = (Utc::now() - Duration::minutes(minutes))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    sqlx::query("UPDATE runs SET heartbeat_at = ?1, created_at = ?1 WHERE id = ?2")
        .bind(then)
        .bind(run_id.0)
        .execute(store.pool())
        .await
        .expect("the run's heartbeat is set back");
}

/// Renames away the journal of changes an open window reads, so that reading it fails.
pub async fn hide_the_change_journal(store: &Store) {
    sqlx::query("ALTER TABLE mirror_changes RENAME TO mirror_changes_hidden")
        .execute(store.pool())
        .await
        .expect("the change journal is renamed away");
}

/// Gives the journal back its name.
pub async fn restore_the_change_journal(store: &Store) {
    sqlx::query("ALTER TABLE mirror_changes_hidden RENAME TO mirror_changes")
        .execute(store.pool())
        .await
        .expect("the change journal is given back");
}
