//! The mirror of every open pull request of a connected repository: written by a sync
//! (the whole list of open PRs at once, so a PR that left it is closed here too) and by
//! a QA run (the one PR it read), and read by the window's list of pull requests.

use crate::areas::PullRequestRecords;
use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::row_mapping::{pull_request_columns, pull_request_from_row};
use super::time_text::time_text;
use handoff_domain::{CheckStatus, MirroredPullRequest, PullRequest, RepoId};

/// Which mirrored PRs to list: empty fields mean "all".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullRequestFilter {
    pub repo_id: Option<RepoId>,
    /// Words that must all appear in the title, the branch, the author or `#number`.
    pub search: Option<String>,
    pub checks: Option<CheckStatus>,
    /// Only PRs opened for feedback (`Some(true)`) or only the others (`Some(false)`).
    pub feedback: Option<bool>,
}

const UPSERT: &str = "INSERT INTO pull_requests (repo_id, number, title, author_login, head_ref, \
     head_repo, head_sha, base_ref, state, draft, github_updated_at, synced_at) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
     ON CONFLICT (repo_id, number) DO UPDATE SET title = excluded.title, \
     author_login = excluded.author_login, head_ref = excluded.head_ref, \
     head_repo = excluded.head_repo, head_sha = excluded.head_sha, base_ref = excluded.base_ref, \
     state = excluded.state, draft = excluded.draft, \
     marked_draft_at = CASE WHEN excluded.draft = 0 THEN NULL \
     WHEN pull_requests.draft = 0 THEN excluded.synced_at ELSE pull_requests.marked_draft_at END, \
     checks = CASE WHEN pull_requests.head_sha = excluded.head_sha THEN pull_requests.checks ELSE 'none' END, \
     github_updated_at = excluded.github_updated_at, synced_at = excluded.synced_at";

impl PullRequestRecords<'_> {
    /// Mirrors one PR as GitHub just gave it. Its check summary is kept while its head
    /// commit is the same.
    pub async fn mirror_pull_request(
        &self,
        repo_id: RepoId,
        pull: &MirroredPullRequest,
    ) -> Result<PullRequest, StoreError> {
        bind_pull(sqlx::query(UPSERT), repo_id, pull, &self.store.now_text())
            .execute(&self.store.pool)
            .await?;
        self.pull_request(repo_id, pull.number)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("PR #{} vanished", pull.number)))
    }

    /// Mirrors the complete list of `repo_id`'s open PRs, in one transaction: each is
    /// written, and a PR the mirror had as open that is not in the list is closed.
    pub async fn mirror_open_pull_requests(
        &self,
        repo_id: RepoId,
        open: &[MirroredPullRequest],
    ) -> Result<(), StoreError> {
        let now = self.store.now_text();
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        for pull in open {
            bind_pull(sqlx::query(UPSERT), repo_id, pull, &now)
                .execute(&mut *transaction)
                .await?;
        }
        let numbers =
            serde_json::to_string(&open.iter().map(|pull| pull.number).collect::<Vec<_>>())
                .map_err(|error| StoreError::Corrupt(error.to_string()))?;
        sqlx::query(
            "UPDATE pull_requests SET state = 'closed', synced_at = ? WHERE repo_id = ? \
             AND state = 'open' AND number NOT IN (SELECT value FROM json_each(?))",
        )
        .bind(&now)
        .bind(repo_id.0)
        .bind(numbers)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(())
    }

    /// Records that PR `number` was last updated at `updated_at` on GitHub, when what
    /// moved it (a comment) changed nothing else the mirror keeps.
    pub async fn set_pull_request_updated_at(
        &self,
        repo_id: RepoId,
        number: u64,
        updated_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE pull_requests SET github_updated_at = ?, synced_at = ? \
             WHERE repo_id = ? AND number = ?",
        )
        .bind(time_text(updated_at))
        .bind(self.store.now_text())
        .bind(repo_id.0)
        .bind(number as i64)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Records how the checks of PR `number`'s head commit `head_sha` stand; a summary
    /// of a commit that is no longer the head is not recorded.
    pub async fn set_pull_request_checks(
        &self,
        repo_id: RepoId,
        number: u64,
        head_sha: &str,
        checks: CheckStatus,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE pull_requests SET checks = ? WHERE repo_id = ? AND number = ? AND head_sha = ?",
        )
        .bind(checks.as_str())
        .bind(repo_id.0)
        .bind(number as i64)
        .bind(head_sha)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Records whether PR `number` conflicts with its base, as GitHub said (`None`: it
    /// did not know yet). The PR's feedback item, if any, is marked changed too, so the
    /// board draws its card again. Returns whether anything changed.
    pub async fn set_pull_request_conflicts(
        &self,
        repo_id: RepoId,
        number: u64,
        conflicts: Option<bool>,
    ) -> Result<bool, StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let changed = sqlx::query(
            "UPDATE pull_requests SET conflicts_with_base = ? WHERE repo_id = ? AND number = ? \
             AND conflicts_with_base IS NOT ?",
        )
        .bind(conflicts)
        .bind(repo_id.0)
        .bind(number as i64)
        .bind(conflicts)
        .execute(&mut *transaction)
        .await?
        .rows_affected()
            > 0;
        if changed {
            sqlx::query(
                "UPDATE feedback SET updated_at = updated_at WHERE repo_id = ? AND pr_number = ?",
            )
            .bind(repo_id.0)
            .bind(number as i64)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(changed)
    }

    /// When the reviews of each PR of `repo_id` were last read for follow-up candidates.
    pub async fn reviews_read_at(
        &self,
        repo_id: RepoId,
    ) -> Result<std::collections::BTreeMap<u64, DateTime<Utc>>, StoreError> {
        let rows: Vec<(i64, DateTime<Utc>)> = sqlx::query_as(
            "SELECT number, reviews_read_at FROM pull_requests \
             WHERE repo_id = ? AND reviews_read_at IS NOT NULL",
        )
        .bind(repo_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(number, at)| (number as u64, at))
            .collect())
    }

    /// Records that PR `number`'s reviews were read at `read_at`.
    pub async fn set_reviews_read_at(
        &self,
        repo_id: RepoId,
        number: u64,
        read_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE pull_requests SET reviews_read_at = ? WHERE repo_id = ? AND number = ?",
        )
        .bind(time_text(read_at))
        .bind(repo_id.0)
        .bind(number as i64)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    pub async fn pull_request(
        &self,
        repo_id: RepoId,
        number: u64,
    ) -> Result<Option<PullRequest>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            pull_request_columns!(),
            " FROM pull_requests p JOIN repos r ON r.id = p.repo_id \
              WHERE p.repo_id = ? AND p.number = ?"
        ))
        .bind(repo_id.0)
        .bind(number as i64)
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(pull_request_from_row).transpose()
    }

    /// The open PRs of connected repositories that `filter` lets through, the most
    /// recently updated first.
    pub async fn open_pull_requests(
        &self,
        filter: &PullRequestFilter,
    ) -> Result<Vec<PullRequest>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            pull_request_columns!(),
            " FROM pull_requests p JOIN repos r ON r.id = p.repo_id \
              WHERE p.state = 'open' AND r.disconnected_at IS NULL \
              AND (?1 IS NULL OR p.repo_id = ?1) AND (?2 IS NULL OR p.checks = ?2) \
              ORDER BY p.github_updated_at DESC, p.number DESC"
        ))
        .bind(filter.repo_id.map(|id| id.0))
        .bind(filter.checks.map(CheckStatus::as_str))
        .fetch_all(&self.store.pool)
        .await?;
        let words: Vec<String> = filter
            .search
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut pulls = Vec::new();
        for row in &rows {
            let pull = pull_request_from_row(row)?;
            if filter
                .feedback
                .is_some_and(|wanted| wanted != pull.feedback_id.is_some())
            {
                continue;
            }
            let haystack = format!(
                "#{} {} {} {}",
                pull.number,
                pull.title,
                pull.head_ref,
                pull.author_login.as_deref().unwrap_or_default()
            )
            .to_lowercase();
            if words.iter().all(|word| haystack.contains(word.as_str())) {
                pulls.push(pull);
            }
        }
        Ok(pulls)
    }
}

fn bind_pull<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>,
    repo_id: RepoId,
    pull: &'q MirroredPullRequest,
    now: &'q str,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    query
        .bind(repo_id.0)
        .bind(pull.number as i64)
        .bind(&pull.title)
        .bind(pull.author_login.as_deref())
        .bind(&pull.head_ref)
        .bind(pull.head_repo.as_deref())
        .bind(&pull.head_sha)
        .bind(&pull.base_ref)
        .bind(pull.state.as_str())
        .bind(pull.draft)
        .bind(time_text(pull.github_updated_at))
        .bind(now)
}
