//! The local SQLite mirror: repositories, feedback, status history, follow-ups, runs and
//! their logs, managed comments and their versions, the outbox, quota use.
//!
//! One [`Store`] wraps a connection pool to one database file. Every rule that can be
//! guarded by the database is: one active run per feedback item (a partial unique
//! index), append-only follow-ups and histories (triggers), MERGED being final (a
//! trigger). The methods live in one file per table group.
//!
//! Beside the mirror, what else Handoff keeps: [`secrets`], the OS keyring (the only
//! place a secret is kept); [`data_dir`], where the data folder is; and [`file_lock`],
//! the exclusive locks across processes that the data folder's users take.

mod archive;
mod areas;

pub mod data_dir;
pub mod file_lock;
pub mod secrets;

mod automatic_updates;
mod change_watch;
mod dashboard_cards;
mod environment_builds;
mod error;
mod feedback;
mod follow_ups;
mod github_commands;
mod handoff_pushes;
mod held_pushes;
mod http_validators;
mod lessons;
mod lessons_file;
mod managed_comments;
mod month_spend;
mod opening;
mod outbox;
mod plan_credit;
mod pull_requests;
mod quota;
mod repos;
mod row_mapping;
mod run_drivers;
mod run_events;
mod run_queue;
mod runs;
mod settings;
pub mod spend;
pub mod spend_ledger;
mod stage_runs;
mod sync_cursors;
mod test_settings;
pub mod time_text;

use std::path::{Path, PathBuf};

use sqlx::SqlitePool;

pub use areas::{
    AutomaticUpdateRecords, CommentRecords, EnvironmentBuildRecords, FeedbackRecords,
    GithubCommandRecords, LessonRecords, OutboxRecords, PullRequestRecords, RepositoryRecords,
    RunQueueRecords, RunRecords, SettingRecords, SpendRecords, StageRunRecords, SyncStateRecords,
    TestSettingRecords,
};
pub use automatic_updates::{AutomaticStart, NewAutomaticUpdate};
pub use change_watch::{ChangeWatch, MirrorChanges};
pub use environment_builds::{
    EnvironmentBuildEnd, EnvironmentBuildRecord, EnvironmentBuildState, NewEnvironmentBuild,
};
pub use error::StoreError;
pub use feedback::{FeedbackFilter, NewFeedback};
pub use follow_ups::NewFollowUpCandidate;
pub use github_commands::NewGithubCommand;
pub use held_pushes::HeldPushApproval;
pub use http_validators::StoredAnswer;
pub use lessons::{LessonDecision, LessonEdit, LessonSettings};
pub use lessons_file::LessonsFileWrite;
pub use managed_comments::NewCommentVersion;
pub use opening::supported_schema_version;
pub use outbox::{OutboxClaim, OUTBOX_CLAIM_LEASE};
pub use pull_requests::PullRequestFilter;
pub use quota::QuotaStatus;
pub use repos::RepoSettingsChange;
pub use run_drivers::{this_machine, ActiveRun};
pub use run_queue::{parse_slot_count, QueueEntry, TakenTurn};
pub use runs::{CodeRunRequest, RunFilter, RunOutcome, RunTexts, StartedCodeRun};
pub use settings::SettingKey;
pub use stage_runs::{StageRunRequest, StageTestResult, StoredTestResult};
pub use sync_cursors::SyncCursor;
pub use test_settings::SetTestSettingError;

/// The file name of the database inside the data folder.
pub const DATABASE_FILE_NAME: &str = "handoff.sqlite3";

/// The local mirror. Cheap to clone: clones share one pool.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// This process as the driver of runs, once it drives one; shared by the clones.
    driver: std::sync::Arc<std::sync::OnceLock<Option<run_drivers::ThisDriver>>>,
    /// Set once this process is stopping: it starts no more runs.
    stopping: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// What time the store stamps and compares with: the system's, or a test's.
    clock: std::sync::Arc<dyn handoff_domain::clock::Clock>,
}

impl Store {
    /// Opens the mirror in `data_dir`, creating the folder and the database if needed.
    pub async fn open_in(data_dir: &Path) -> Result<Store, StoreError> {
        crate::data_dir::create_private_folder(data_dir).map_err(|source| {
            StoreError::DataFolder {
                path: data_dir.to_owned(),
                source,
            }
        })?;
        let database = data_dir.join(DATABASE_FILE_NAME);
        let store = Store::open_file(&database).await?;
        crate::data_dir::make_private(&database, 0o600).map_err(|source| {
            StoreError::DataFolder {
                path: database.clone(),
                source,
            }
        })?;
        Ok(store)
    }

    /// Opens the database file at `path` (see [`opening`] for what is checked first).
    pub async fn open_file(path: &Path) -> Result<Store, StoreError> {
        let pool = opening::open_database(path).await?;
        let store = Store {
            pool,
            path: path.to_owned(),
            driver: Default::default(),
            stopping: Default::default(),
            clock: handoff_domain::clock::system_clock(),
        };
        // The journal of changes is kept short; a busy database keeps it a while longer.
        if let Err(error) = store.forget_old_mirror_changes().await {
            tracing::debug!(%error, "the journal of mirror changes was not shortened this time");
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same mirror, stamping and comparing times with `clock` (a test's, which it
    /// moves forward by hand).
    pub fn with_clock(mut self, clock: std::sync::Arc<dyn handoff_domain::clock::Clock>) -> Store {
        self.clock = clock;
        self
    }

    /// What time it is, by the store's clock.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// Now as the store writes it.
    pub(crate) fn now_text(&self) -> String {
        time_text::time_text(self.now())
    }

    /// The pool, for tests and tools that look at the tables directly.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Closes every connection; the WAL is checkpointed into the database file.
    pub async fn close(self) {
        self.pool.close().await;
    }
}
