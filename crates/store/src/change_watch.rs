//! Noticing that the mirror changed, whoever changed it (the app itself, the `handoff`
//! command line, a background sync), and what: SQLite's `data_version` on a connection
//! of its own moves whenever any other connection commits, and the `mirror_changes`
//! journal (written by triggers) says which items, runs and pull requests it touched. A
//! run's heartbeat and its log lines are commits that touch nothing shown.

use std::collections::BTreeSet;

use sqlx::sqlite::SqliteConnection;
use sqlx::{Connection as _, Row as _};

use super::error::StoreError;
use super::Store;
use handoff_domain::{FeedbackId, RepoId, RunId};

/// More journal rows than this since the last look: everything counts as changed.
const MOST_CHANGES_READ: i64 = 5_000;
/// How many journal rows are kept when a store is opened.
const JOURNAL_ROWS_KEPT: i64 = 10_000;

/// A connection that only watches `PRAGMA data_version` and reads the journal.
#[derive(Debug)]
pub struct ChangeWatch {
    connection: SqliteConnection,
    last_version: i64,
    last_seq: i64,
}

/// What changed in the mirror since the watch last looked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorChanges {
    /// Items whose card or detail may look different: the item, its thread, its runs.
    pub feedback_ids: BTreeSet<FeedbackId>,
    pub run_ids: BTreeSet<RunId>,
    /// Pull requests whose row, stage comments, results or runs changed.
    pub pull_requests: BTreeSet<(RepoId, u64)>,
    pub outbox: bool,
    /// A repository was added or changed, or too much changed to say: all of it.
    pub everything: bool,
}

impl MirrorChanges {
    /// Whether nothing the window shows changed (a heartbeat, a log line).
    pub fn is_empty(&self) -> bool {
        *self == MirrorChanges::default()
    }
}

impl ChangeWatch {
    /// True when some connection has committed since the last call (or since opening).
    pub async fn changed(&mut self) -> Result<bool, StoreError> {
        let version: i64 = sqlx::query_scalar("PRAGMA data_version")
            .fetch_one(&mut self.connection)
            .await?;
        let changed = version != self.last_version;
        self.last_version = version;
        Ok(changed)
    }

    /// What changed since the last call; `None` when no connection committed at all.
    pub async fn changes(&mut self) -> Result<Option<MirrorChanges>, StoreError> {
        if !self.changed().await? {
            return Ok(None);
        }
        let first_kept: Option<i64> = sqlx::query_scalar("SELECT min(seq) FROM mirror_changes")
            .fetch_one(&mut self.connection)
            .await?;
        let rows = sqlx::query(
            "SELECT seq, subject, repo_id, feedback_id, run_id, pr_number FROM mirror_changes \
             WHERE seq > ? ORDER BY seq LIMIT ?",
        )
        .bind(self.last_seq)
        .bind(MOST_CHANGES_READ + 1)
        .fetch_all(&mut self.connection)
        .await?;
        let mut changes = MirrorChanges::default();
        // Rows pruned before they were read, or too many of them: all of it.
        if first_kept.is_some_and(|first| first > self.last_seq + 1 && self.last_seq > 0)
            || rows.len() as i64 > MOST_CHANGES_READ
        {
            changes.everything = true;
        }
        for row in &rows {
            self.last_seq = self.last_seq.max(row.try_get("seq")?);
            let subject: String = row.try_get("subject")?;
            let repo: Option<i64> = row.try_get("repo_id")?;
            let feedback: Option<i64> = row.try_get("feedback_id")?;
            let run: Option<i64> = row.try_get("run_id")?;
            let number: Option<i64> = row.try_get("pr_number")?;
            if let Some(feedback) = feedback {
                changes.feedback_ids.insert(FeedbackId(feedback));
            }
            if let Some(run) = run {
                changes.run_ids.insert(RunId(run));
            }
            if let (Some(repo), Some(number)) = (repo, number) {
                changes
                    .pull_requests
                    .insert((RepoId(repo), u64::try_from(number).unwrap_or_default()));
            }
            match subject.as_str() {
                "outbox" => changes.outbox = true,
                "repo" => changes.everything = true,
                _ => {}
            }
        }
        if changes.everything {
            self.last_seq = self.newest_seq().await?;
        }
        Ok(Some(changes))
    }

    async fn newest_seq(&mut self) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM mirror_changes")
                .fetch_one(&mut self.connection)
                .await?,
        )
    }

    pub async fn close(self) {
        if let Err(error) = self.connection.close().await {
            tracing::debug!(%error, "the change watcher's connection did not close cleanly");
        }
    }
}

impl Store {
    /// A watch on this store's database file.
    pub async fn watch_changes(&self) -> Result<ChangeWatch, StoreError> {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&self.path)
            .read_only(true)
            .busy_timeout(super::opening::BUSY_TIMEOUT);
        let mut connection = SqliteConnection::connect_with(&options).await?;
        let last_version: i64 = sqlx::query_scalar("PRAGMA data_version")
            .fetch_one(&mut connection)
            .await?;
        let mut watch = ChangeWatch {
            connection,
            last_version,
            last_seq: 0,
        };
        watch.last_seq = watch.newest_seq().await?;
        Ok(watch)
    }

    /// Drops all but the newest journal rows (a watch that had not read the dropped
    /// ones counts everything as changed).
    pub(crate) async fn forget_old_mirror_changes(&self) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM mirror_changes WHERE seq <= (SELECT max(seq) FROM mirror_changes) - ?",
        )
        .bind(JOURNAL_ROWS_KEPT)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
