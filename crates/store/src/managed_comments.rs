//! Managed comments and their versions: where each comment lives on GitHub and
//! every body it has had.

use crate::areas::CommentRecords;
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::error::StoreError;
use super::time_text::time_text;
use handoff_domain::{
    CommentKind, CommentVersion, CommentVersionId, ManagedComment, ManagedCommentId, RepoId,
    RepoName, RunId, VersionOrigin,
};

/// A body to add to a comment's history.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCommentVersion {
    pub body: String,
    pub content: String,
    pub full_content: Option<String>,
    pub origin: VersionOrigin,
    pub author_login: Option<String>,
    pub run_id: Option<RunId>,
    pub based_on: Option<CommentVersionId>,
    /// Last edited on GitHub by someone other than the owner: kept out of prompts until
    /// the owner approves it.
    pub edited_by_other: bool,
}

macro_rules! managed_comment_columns {
    () => {
        "m.id, m.repo_id, r.owner, r.name, m.pr_number, m.kind, m.github_comment_id, \
         m.remote_updated_at, m.missing_since"
    };
}

macro_rules! version_columns {
    () => {
        "v.id, v.managed_comment_id, \
         (SELECT COUNT(*) FROM comment_versions w WHERE w.managed_comment_id = v.managed_comment_id AND w.id <= v.id) AS number, \
         v.body, v.content, v.full_content, v.origin, v.author_login, v.run_id, v.based_on_version_id, v.created_at, \
         v.edited_by_other, \
         (SELECT a.approved_at FROM comment_version_approvals a WHERE a.comment_version_id = v.id) AS approved_at"
    };
}

fn managed_comment_from_row(row: &SqliteRow) -> Result<ManagedComment, StoreError> {
    let kind: String = row.try_get("kind")?;
    let pr_number: i64 = row.try_get("pr_number")?;
    let github_comment_id: Option<i64> = row.try_get("github_comment_id")?;
    Ok(ManagedComment {
        id: ManagedCommentId(row.try_get("id")?),
        repo_id: RepoId(row.try_get("repo_id")?),
        repo: RepoName {
            owner: row.try_get("owner")?,
            name: row.try_get("name")?,
        },
        pr_number: pr_number as u64,
        kind: CommentKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("comment kind {kind:?}")))?,
        github_comment_id: github_comment_id.map(|id| id as u64),
        remote_updated_at: row.try_get("remote_updated_at")?,
        missing_since: row.try_get("missing_since")?,
    })
}

fn version_from_row(row: &SqliteRow) -> Result<CommentVersion, StoreError> {
    let origin: String = row.try_get("origin")?;
    let run_id: Option<i64> = row.try_get("run_id")?;
    let based_on: Option<i64> = row.try_get("based_on_version_id")?;
    let number: i64 = row.try_get("number")?;
    Ok(CommentVersion {
        id: CommentVersionId(row.try_get("id")?),
        managed_comment_id: ManagedCommentId(row.try_get("managed_comment_id")?),
        number: number as u32,
        body: row.try_get("body")?,
        content: row.try_get("content")?,
        full_content: row.try_get("full_content")?,
        origin: VersionOrigin::parse(&origin)
            .ok_or_else(|| StoreError::Corrupt(format!("version origin {origin:?}")))?,
        author_login: row.try_get("author_login")?,
        run_id: run_id.map(RunId),
        based_on: based_on.map(CommentVersionId),
        created_at: row.try_get("created_at")?,
        edited_by_other: row.try_get("edited_by_other")?,
        approved_at: row.try_get("approved_at")?,
    })
}

pub(super) async fn insert_version<'c, E>(
    executor: E,
    now: &str,
    comment: ManagedCommentId,
    version: &NewCommentVersion,
) -> Result<CommentVersionId, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Sqlite>,
{
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO comment_versions (managed_comment_id, body, content, full_content, origin, \
         author_login, run_id, based_on_version_id, created_at, edited_by_other) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(comment.0)
    .bind(&version.body)
    .bind(&version.content)
    .bind(&version.full_content)
    .bind(version.origin.as_str())
    .bind(&version.author_login)
    .bind(version.run_id.map(|run| run.0))
    .bind(version.based_on.map(|based| based.0))
    .bind(now)
    .bind(version.edited_by_other)
    .fetch_one(executor)
    .await?;
    Ok(CommentVersionId(id))
}

impl CommentRecords<'_> {
    /// The managed comment of `kind` on PR `pr_number`, made (with no GitHub id and no
    /// versions) if Handoff has not tracked it before.
    pub async fn ensure_managed_comment(
        &self,
        repo_id: RepoId,
        pr_number: u64,
        kind: CommentKind,
    ) -> Result<ManagedComment, StoreError> {
        sqlx::query(
            "INSERT INTO managed_comments (repo_id, pr_number, kind) VALUES (?, ?, ?) \
             ON CONFLICT (repo_id, pr_number, kind) DO NOTHING",
        )
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .bind(kind.as_str())
        .execute(&self.store.pool)
        .await?;
        self.managed_comment(repo_id, pr_number, kind)
            .await?
            .ok_or_else(|| StoreError::Corrupt("managed comment vanished".to_owned()))
    }

    pub async fn managed_comment(
        &self,
        repo_id: RepoId,
        pr_number: u64,
        kind: CommentKind,
    ) -> Result<Option<ManagedComment>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            managed_comment_columns!(),
            " FROM managed_comments m JOIN repos r ON r.id = m.repo_id \
              WHERE m.repo_id = ? AND m.pr_number = ? AND m.kind = ?"
        ))
        .bind(repo_id.0)
        .bind(pr_number as i64)
        .bind(kind.as_str())
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(managed_comment_from_row).transpose()
    }

    pub async fn managed_comment_by_id(
        &self,
        id: ManagedCommentId,
    ) -> Result<ManagedComment, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            managed_comment_columns!(),
            " FROM managed_comments m JOIN repos r ON r.id = m.repo_id WHERE m.id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("managed comment {} vanished", id.0)))?;
        managed_comment_from_row(&row)
    }

    /// Every managed comment of a repository, by PR then kind.
    pub async fn managed_comments_of_repo(
        &self,
        repo_id: RepoId,
    ) -> Result<Vec<ManagedComment>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            managed_comment_columns!(),
            " FROM managed_comments m JOIN repos r ON r.id = m.repo_id \
              WHERE m.repo_id = ? ORDER BY m.pr_number, m.kind"
        ))
        .bind(repo_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(managed_comment_from_row).collect()
    }

    /// Records where the comment lives on GitHub now (it was found, created, or moved).
    pub async fn set_github_comment(
        &self,
        id: ManagedCommentId,
        github_comment_id: u64,
        remote_updated_at: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE managed_comments SET github_comment_id = ?, remote_updated_at = ?, missing_since = NULL \
             WHERE id = ?",
        )
        .bind(github_comment_id as i64)
        .bind(remote_updated_at.map(time_text))
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Records that the comment is gone from GitHub (deleted, or never found).
    pub async fn mark_comment_missing(&self, id: ManagedCommentId) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE managed_comments SET github_comment_id = NULL, \
             missing_since = COALESCE(missing_since, ?) WHERE id = ?",
        )
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Adds a version to a comment's history.
    pub async fn add_comment_version(
        &self,
        comment: ManagedCommentId,
        version: &NewCommentVersion,
    ) -> Result<CommentVersion, StoreError> {
        let id = insert_version(&self.store.pool, &self.store.now_text(), comment, version).await?;
        self.comment_version(id).await
    }

    pub async fn comment_version(
        &self,
        id: CommentVersionId,
    ) -> Result<CommentVersion, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            version_columns!(),
            " FROM comment_versions v WHERE v.id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("comment version {id} vanished")))?;
        version_from_row(&row)
    }

    /// The version numbered `number` (1 = first) of a comment.
    pub async fn comment_version_numbered(
        &self,
        comment: ManagedCommentId,
        number: u32,
    ) -> Result<Option<CommentVersion>, StoreError> {
        Ok(self
            .comment_versions(comment)
            .await?
            .into_iter()
            .find(|version| version.number == number))
    }

    /// Every version of a comment, oldest first.
    pub async fn comment_versions(
        &self,
        comment: ManagedCommentId,
    ) -> Result<Vec<CommentVersion>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            version_columns!(),
            " FROM comment_versions v WHERE v.managed_comment_id = ? ORDER BY v.id"
        ))
        .bind(comment.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(version_from_row).collect()
    }

    /// The owner lets a version someone else edited into prompts. Approving a version
    /// that needs no approval, or approving twice, changes nothing.
    pub async fn approve_comment_version(
        &self,
        id: CommentVersionId,
    ) -> Result<CommentVersion, StoreError> {
        let version = self.comment_version(id).await?;
        if version.edited_by_other {
            sqlx::query(
                "INSERT INTO comment_version_approvals (comment_version_id, approved_at) \
                 VALUES (?, ?) ON CONFLICT (comment_version_id) DO NOTHING",
            )
            .bind(id.0)
            .bind(self.store.now_text())
            .execute(&self.store.pool)
            .await?;
        }
        self.comment_version(id).await
    }

    /// The newest version of a comment, if it has any.
    pub async fn latest_comment_version(
        &self,
        comment: ManagedCommentId,
    ) -> Result<Option<CommentVersion>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            version_columns!(),
            " FROM comment_versions v WHERE v.managed_comment_id = ? ORDER BY v.id DESC LIMIT 1"
        ))
        .bind(comment.0)
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(version_from_row).transpose()
    }
}
