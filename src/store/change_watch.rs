//! Noticing that the mirror changed, whoever changed it (the app itself, the `handoff`
//! command line, a background sync): SQLite's `data_version` on a connection of its own
//! moves whenever any other connection commits.

use sqlx::sqlite::SqliteConnection;
use sqlx::Connection as _;

use super::error::StoreError;
use super::Store;

/// A connection that only watches `PRAGMA data_version`.
#[derive(Debug)]
pub struct ChangeWatch {
    connection: SqliteConnection,
    last_version: i64,
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
        Ok(ChangeWatch {
            connection,
            last_version,
        })
    }
}
