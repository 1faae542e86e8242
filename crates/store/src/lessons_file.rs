//! The history of the lessons file's marked section: each time Handoff wrote it (to which
//! pull request and commit), and each time it was found edited on GitHub.

use crate::areas::LessonRecords;
use chrono::{DateTime, Utc};
use sqlx::Row as _;

use super::time_text::time_text;
use super::StoreError;
use handoff_domain::RepoId;

/// One entry of the section's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LessonsFileWrite {
    pub path: String,
    pub section: String,
    /// Written by Handoff (`false`: found edited on GitHub).
    pub by_handoff: bool,
    pub pr_number: Option<u64>,
    pub branch: Option<String>,
    pub commit_sha: Option<String>,
    pub written_at: DateTime<Utc>,
}

impl LessonRecords<'_> {
    /// Records an entry of `repo_id`'s lessons file history.
    pub async fn record_lessons_file_write(
        &self,
        repo_id: RepoId,
        write: &LessonsFileWrite,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO lessons_file_writes (repo_id, path, section, origin, pr_number, branch, commit_sha, written_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(repo_id.0)
        .bind(&write.path)
        .bind(&write.section)
        .bind(if write.by_handoff { "handoff" } else { "edit_on_github" })
        .bind(write.pr_number.map(|number| number as i64))
        .bind(&write.branch)
        .bind(&write.commit_sha)
        .bind(time_text(write.written_at))
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// The newest entry of `repo_id`'s lessons file history, or of those Handoff wrote
    /// with `by_handoff`.
    pub async fn last_lessons_file_write(
        &self,
        repo_id: RepoId,
        by_handoff: bool,
    ) -> Result<Option<LessonsFileWrite>, StoreError> {
        let row = sqlx::query(
            "SELECT path, section, origin, pr_number, branch, commit_sha, written_at FROM lessons_file_writes \
             WHERE repo_id = ? AND (? = 0 OR origin = 'handoff') ORDER BY id DESC LIMIT 1",
        )
        .bind(repo_id.0)
        .bind(by_handoff)
        .fetch_optional(&self.store.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let origin: String = row.try_get("origin")?;
        let pr_number: Option<i64> = row.try_get("pr_number")?;
        Ok(Some(LessonsFileWrite {
            path: row.try_get("path")?,
            section: row.try_get("section")?,
            by_handoff: origin == "handoff",
            pr_number: pr_number.and_then(|number| u64::try_from(number).ok()),
            branch: row.try_get("branch")?,
            commit_sha: row.try_get("commit_sha")?,
            written_at: row.try_get("written_at")?,
        }))
    }
}
