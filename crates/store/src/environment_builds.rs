//! Each build of a repository's agent environment (`environment_builds`): begun under
//! the repository's build lock, ended ready (with the image's size) or failed (with the
//! step that failed), the latest one read for Check setup, `handoff env` and the window.

use chrono::{DateTime, Utc};
use sqlx::Row as _;

use crate::areas::EnvironmentBuildRecords;
use crate::error::StoreError;
use handoff_domain::{RepoId, RunId};

/// Where a build stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvironmentBuildState {
    Building,
    Ready,
    Failed,
}

impl EnvironmentBuildState {
    fn parse(text: &str) -> Result<Self, StoreError> {
        match text {
            "building" => Ok(Self::Building),
            "ready" => Ok(Self::Ready),
            "failed" => Ok(Self::Failed),
            other => Err(StoreError::Corrupt(format!(
                "an environment build is in the unknown state {other:?}"
            ))),
        }
    }
}

/// One build of an environment, as recorded.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EnvironmentBuildRecord {
    pub id: i64,
    pub repo_id: RepoId,
    pub key: String,
    pub image: String,
    /// The file the recipe was found in (`.devcontainer/devcontainer.json`).
    pub recipe_file: String,
    pub commit_sha: String,
    pub state: EnvironmentBuildState,
    pub failed_step: Option<String>,
    pub failure: Option<String>,
    pub image_bytes: Option<u64>,
    pub run_id: Option<RunId>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A build about to begin.
#[derive(Debug, Clone)]
pub struct NewEnvironmentBuild<'a> {
    pub repo_id: RepoId,
    pub key: &'a str,
    pub image: &'a str,
    pub recipe_file: &'a str,
    pub commit_sha: &'a str,
    pub run_id: Option<RunId>,
}

/// How a build ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvironmentBuildEnd {
    Ready { image_bytes: u64 },
    Failed { step: String, failure: String },
}

macro_rules! environment_build_columns {
    () => {
        "id, repo_id, key, image, recipe_file, commit_sha, state, failed_step, failure, \
         image_bytes, run_id, started_at, finished_at"
    };
}

fn record_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<EnvironmentBuildRecord, StoreError> {
    let bytes: Option<i64> = row.try_get("image_bytes")?;
    let run_id: Option<i64> = row.try_get("run_id")?;
    Ok(EnvironmentBuildRecord {
        id: row.try_get("id")?,
        repo_id: RepoId(row.try_get("repo_id")?),
        key: row.try_get("key")?,
        image: row.try_get("image")?,
        recipe_file: row.try_get("recipe_file")?,
        commit_sha: row.try_get("commit_sha")?,
        state: EnvironmentBuildState::parse(&row.try_get::<String, _>("state")?)?,
        failed_step: row.try_get("failed_step")?,
        failure: row.try_get("failure")?,
        image_bytes: bytes.and_then(|bytes| u64::try_from(bytes).ok()),
        run_id: run_id.map(RunId),
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
    })
}

impl EnvironmentBuildRecords<'_> {
    /// Records a build of `build.repo_id` as begun; one of the repository's still marked
    /// building is ended as stopped with its process (the caller holds the
    /// repository's build lock, so no other build is going).
    pub async fn begin_environment_build(
        &self,
        build: &NewEnvironmentBuild<'_>,
    ) -> Result<i64, StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin().await?;
        sqlx::query(
            "UPDATE environment_builds SET state = 'failed', failed_step = 'the build', \
             failure = 'its process stopped before it ended', finished_at = ? \
             WHERE repo_id = ? AND state = 'building'",
        )
        .bind(&now)
        .bind(build.repo_id.0)
        .execute(&mut *transaction)
        .await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO environment_builds (repo_id, key, image, recipe_file, commit_sha, state, \
             run_id, started_at) VALUES (?, ?, ?, ?, ?, 'building', ?, ?) RETURNING id",
        )
        .bind(build.repo_id.0)
        .bind(build.key)
        .bind(build.image)
        .bind(build.recipe_file)
        .bind(build.commit_sha)
        .bind(build.run_id.map(|run| run.0))
        .bind(&now)
        .fetch_one(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(id)
    }

    /// Ends build `id` as `end` says.
    pub async fn end_environment_build(
        &self,
        id: i64,
        end: &EnvironmentBuildEnd,
    ) -> Result<(), StoreError> {
        let now = self.store.now_text();
        let (state, bytes, step, failure) = match end {
            EnvironmentBuildEnd::Ready { image_bytes } => {
                ("ready", i64::try_from(*image_bytes).ok(), None, None)
            }
            EnvironmentBuildEnd::Failed { step, failure } => {
                ("failed", None, Some(step.as_str()), Some(failure.as_str()))
            }
        };
        sqlx::query(
            "UPDATE environment_builds SET state = ?, image_bytes = ?, failed_step = ?, \
             failure = ?, finished_at = ? WHERE id = ?",
        )
        .bind(state)
        .bind(bytes)
        .bind(step)
        .bind(failure)
        .bind(&now)
        .bind(id)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// `repo_id`'s latest build, if it had one.
    pub async fn latest_environment_build(
        &self,
        repo_id: RepoId,
    ) -> Result<Option<EnvironmentBuildRecord>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            environment_build_columns!(),
            " FROM environment_builds WHERE repo_id = ? ORDER BY id DESC LIMIT 1"
        ))
        .bind(repo_id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .as_ref()
        .map(record_from_row)
        .transpose()
    }

    /// How many builds of `repo_id` there were for key `key`.
    pub async fn environment_builds_for_key(
        &self,
        repo_id: RepoId,
        key: &str,
    ) -> Result<u32, StoreError> {
        let count: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM environment_builds WHERE repo_id = ? AND key = ?",
        )
        .bind(repo_id.0)
        .bind(key)
        .fetch_one(&self.store.pool)
        .await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }
}
