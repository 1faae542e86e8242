//! Opening the database file: look before touching, then migrate.
//!
//! A file that is not a SQLite database, fails SQLite's own check, or carries schema
//! versions this build does not know is refused with a clear error and left exactly as
//! it was: nothing is deleted, rewritten or migrated. Only a file that passes the
//! read-only inspection is opened for writing, with WAL, a busy timeout and foreign
//! keys on, and brought up to date by the embedded migrations.

use std::io::Read as _;
use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Connection as _, Row as _};

use super::error::StoreError;

/// The migrations of this build, embedded at compile time.
pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// How long a writer waits for another writer before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The newest schema version this build knows.
pub fn supported_schema_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

/// Opens (creating if needed) the database at `path` and migrates it.
pub async fn open_database(path: &Path) -> Result<SqlitePool, StoreError> {
    if path.exists() {
        inspect_existing_file(path).await?;
    }
    let options = SqliteConnectOptions::from_str("sqlite:")
        .map_err(StoreError::Database)?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .map_err(|error| damaged_or_database_error(path, error))?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Reads the file without changing it: is it SQLite, is it whole, is its schema ours?
async fn inspect_existing_file(path: &Path) -> Result<(), StoreError> {
    let damaged = |detail: String| StoreError::Damaged {
        path: path.to_owned(),
        detail,
    };
    let mut header = [0u8; 16];
    let read = std::fs::File::open(path)
        .and_then(|mut file| file.read(&mut header))
        .map_err(|error| damaged(format!("cannot read it: {error}")))?;
    if read == 0 {
        // An empty file is what SQLite itself creates before the first write.
        return Ok(());
    }
    if read < header.len() || &header != SQLITE_HEADER {
        return Err(damaged("it is not a SQLite database".to_owned()));
    }

    let options = SqliteConnectOptions::from_str("sqlite:")
        .map_err(StoreError::Database)?
        .filename(path)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT);
    let mut connection = SqliteConnection::connect_with(&options)
        .await
        .map_err(|error| damaged_or_database_error(path, error))?;
    let verdict = inspect_schema(path, &mut connection).await;
    if let Err(error) = connection.close().await {
        tracing::debug!(path = %path.display(), %error, "the inspecting connection did not close cleanly");
    }
    verdict
}

async fn inspect_schema(path: &Path, connection: &mut SqliteConnection) -> Result<(), StoreError> {
    let check: String = sqlx::query_scalar("PRAGMA quick_check")
        .fetch_one(&mut *connection)
        .await
        .map_err(|error| damaged_or_database_error(path, error))?;
    if check != "ok" {
        return Err(StoreError::Damaged {
            path: path.to_owned(),
            detail: format!("SQLite's check says: {check}"),
        });
    }
    let has_migrations_table: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations')",
    )
    .fetch_one(&mut *connection)
    .await
    .map_err(|error| damaged_or_database_error(path, error))?;
    if !has_migrations_table {
        let table_count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master")
            .fetch_one(&mut *connection)
            .await
            .map_err(|error| damaged_or_database_error(path, error))?;
        return if table_count == 0 {
            Ok(())
        } else {
            Err(StoreError::Damaged {
                path: path.to_owned(),
                detail: "it is a SQLite database, but not one of Handoff's".to_owned(),
            })
        };
    }
    let rows = sqlx::query("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut *connection)
        .await
        .map_err(|error| damaged_or_database_error(path, error))?;
    let supported = supported_schema_version();
    for row in rows {
        let version: i64 = row.get("version");
        let success: bool = row.get("success");
        if version > supported || !MIGRATOR.iter().any(|m| m.version == version) {
            return Err(StoreError::NewerVersion {
                path: path.to_owned(),
                found: version,
                supported,
            });
        }
        if !success {
            return Err(StoreError::Damaged {
                path: path.to_owned(),
                detail: format!("schema migration {version} was left half done"),
            });
        }
    }
    Ok(())
}

/// SQLite's "not a database" and "malformed" answers mean a damaged file.
fn damaged_or_database_error(path: &Path, error: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(database_error) = &error {
        let message = database_error.message().to_owned();
        let code = database_error.code().unwrap_or_default();
        // SQLITE_CORRUPT = 11, SQLITE_NOTADB = 26 (and their extended codes).
        let primary = code.parse::<i64>().map(|c| c & 0xff).unwrap_or(-1);
        if primary == 11 || primary == 26 || message.contains("malformed") {
            return StoreError::Damaged {
                path: path.to_owned(),
                detail: message,
            };
        }
    }
    StoreError::Database(error)
}

impl From<sqlx::Error> for StoreError {
    /// A database that stayed busy or locked past the wait is said as such; anything else
    /// is passed on as the database said it.
    fn from(error: sqlx::Error) -> Self {
        let locked = matches!(
            &error,
            sqlx::Error::Database(database) if matches!(database.code().as_deref(), Some("5" | "6"))
        );
        if locked {
            StoreError::Locked {
                waited_seconds: BUSY_TIMEOUT.as_secs(),
            }
        } else {
            StoreError::Database(error)
        }
    }
}
