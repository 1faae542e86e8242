//! Feedback items: add, read, list, and the status changes that GitHub causes (merged,
//! closed, reopened). Status changes caused by runs live with the runs.

use crate::areas::FeedbackRecords;
use sqlx::{Sqlite, Transaction};

use super::error::StoreError;
use super::row_mapping::{feedback_columns, feedback_from_row, status_change_from_row};
use handoff_domain::feedback::{derive_title, PullRequestState};
use handoff_domain::feedback_status::next_status;
use handoff_domain::{
    head_branch_for, Feedback, FeedbackId, FeedbackSource, FeedbackStatus, FollowUpBody,
    PublicFeedbackId, RepoName, RunId, StatusChange, StatusEvent,
};

/// What a new feedback item needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFeedback {
    pub repo: RepoName,
    /// Derived from the first line of the body when absent or blank.
    pub title: Option<String>,
    pub body: String,
    pub source: FeedbackSource,
    /// For an item mirrored from GitHub: the issue's number and author.
    pub github_issue: Option<(u64, String)>,
    /// Someone other than the owner wrote it (an issue opened by a visitor): its text is
    /// untrusted, and it needs the owner's approval before its first run.
    pub opened_by_visitor: bool,
}

/// Which feedback items a listing shows. Empty fields do not filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedbackFilter {
    pub repo: Option<RepoName>,
    pub status: Option<FeedbackStatus>,
    /// Words to find in the title, body, public id, branch or repository; `#12` finds
    /// PR 12, and a bare `12` finds feedback 12 or PR 12.
    pub search: Option<String>,
    /// `Some(false)`: only the items on the board; `Some(true)`: only those off it
    /// (closed, dismissed, archived); `None`: both.
    pub archived: Option<bool>,
}

/// The condition of a [`FeedbackFilter`] on `feedback f JOIN repos r`, with its
/// parameters `?1` to `?7` bound by [`FeedbackFilter::bind_to`].
macro_rules! feedback_filter_condition {
    () => {
        "(?1 IS NULL OR (r.owner = ?1 AND r.name = ?2)) \
         AND (?3 IS NULL OR f.status = ?3) \
         AND (?4 IS NULL OR f.title LIKE ?4 ESCAPE '\\' OR f.body LIKE ?4 ESCAPE '\\' \
              OR f.public_id LIKE ?4 ESCAPE '\\' OR f.head_branch LIKE ?4 ESCAPE '\\' \
              OR (r.owner || '/' || r.name) LIKE ?4 ESCAPE '\\' OR f.pr_number = ?5 OR f.id = ?6) \
         AND (?7 IS NULL OR (f.archived_as IS NOT NULL) = ?7)"
    };
}
pub(super) use feedback_filter_condition;

impl FeedbackFilter {
    /// Binds the parameters of [`feedback_filter_condition!`] to `query`.
    pub(super) fn bind_to<'q>(
        &self,
        query: sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments>,
    ) -> sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments> {
        let search = self
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        query
            .bind(self.repo.as_ref().map(|repo| repo.owner.clone()))
            .bind(self.repo.as_ref().map(|repo| repo.name.clone()))
            .bind(self.status.map(FeedbackStatus::as_str))
            .bind(search.map(like_pattern))
            .bind(search.and_then(pull_request_number))
            .bind(search.and_then(|text| text.parse::<i64>().ok()))
            .bind(self.archived)
    }
}

/// The longest title, in characters, that may be stored.
pub const TITLE_MAX_CHARS: usize = 200;

impl FeedbackRecords<'_> {
    /// Adds a feedback item in status NEW, with its head branch (`feedback/f2c-{safeId}`)
    /// and its first status change recorded.
    pub async fn add_feedback(&self, new: &NewFeedback) -> Result<Feedback, StoreError> {
        let body = FollowUpBody::parse("feedback body", &new.body)?.into_string();
        let title = match new.title.as_deref().map(str::trim) {
            Some(title) if !title.is_empty() => title.chars().take(TITLE_MAX_CHARS).collect(),
            _ => derive_title(&body),
        };
        let repo = self.store.repositories().repo_by_name(&new.repo).await?;
        let public_id = match &new.github_issue {
            Some((number, _)) => PublicFeedbackId::for_issue(*number),
            None => PublicFeedbackId::random(),
        };
        let head_branch = head_branch_for(&public_id);
        let now = self.store.now_text();

        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO feedback (repo_id, public_id, title, body, source, github_issue_number, \
             github_issue_author, opened_by_visitor, status, head_branch, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'NEW', ?, ?, ?) RETURNING id",
        )
        .bind(repo.id.0)
        .bind(public_id.as_str())
        .bind(&title)
        .bind(&body)
        .bind(new.source.as_str())
        .bind(new.github_issue.as_ref().map(|(number, _)| *number as i64))
        .bind(new.github_issue.as_ref().map(|(_, author)| author.as_str()))
        .bind(new.opened_by_visitor)
        .bind(&head_branch)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *transaction)
        .await?;
        sqlx::query(
            "INSERT INTO status_changes (feedback_id, from_status, to_status, event, at) \
             VALUES (?, NULL, 'NEW', 'created', ?)",
        )
        .bind(id)
        .bind(&now)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        self.feedback(FeedbackId(id)).await
    }

    pub async fn feedback(&self, id: FeedbackId) -> Result<Feedback, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            feedback_columns!(),
            " FROM feedback f JOIN repos r ON r.id = f.repo_id WHERE f.id = ?"
        ))
        .bind(id.0)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or(StoreError::FeedbackNotFound(id))?;
        feedback_from_row(&row)
    }

    /// The feedback item mirrored from issue `issue_number` of `repo`, if any.
    pub async fn feedback_for_issue(
        &self,
        repo: &RepoName,
        issue_number: u64,
    ) -> Result<Option<Feedback>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            feedback_columns!(),
            " FROM feedback f JOIN repos r ON r.id = f.repo_id \
              WHERE r.owner = ? AND r.name = ? AND f.github_issue_number = ?"
        ))
        .bind(&repo.owner)
        .bind(&repo.name)
        .bind(issue_number as i64)
        .fetch_optional(&self.store.pool)
        .await?;
        row.as_ref().map(feedback_from_row).transpose()
    }

    /// Feedback items matching `filter`, newest first.
    pub async fn feedback_list(
        &self,
        filter: &FeedbackFilter,
    ) -> Result<Vec<Feedback>, StoreError> {
        let query = sqlx::query(concat!(
            "SELECT ",
            feedback_columns!(),
            " FROM feedback f JOIN repos r ON r.id = f.repo_id WHERE ",
            feedback_filter_condition!(),
            " ORDER BY f.updated_at DESC, f.id DESC"
        ));
        let rows = filter.bind_to(query).fetch_all(&self.store.pool).await?;
        rows.iter().map(feedback_from_row).collect()
    }

    /// The new items of `repo` on the board, oldest first: what "Run all new" runs.
    /// Items a visitor opened that wait for the owner's approval are left out.
    pub async fn new_items_of(&self, repo: &RepoName) -> Result<Vec<FeedbackId>, StoreError> {
        let mut items = self
            .feedback_list(&FeedbackFilter {
                repo: Some(repo.clone()),
                status: Some(FeedbackStatus::New),
                search: None,
                archived: Some(false),
            })
            .await?;
        items.retain(|item| !item.awaits_owner_approval());
        items.sort_by_key(|item| item.id.0);
        Ok(items.into_iter().map(|item| item.id).collect())
    }

    /// Every status change of a feedback item, oldest first, beginning with its creation.
    pub async fn status_history(&self, id: FeedbackId) -> Result<Vec<StatusChange>, StoreError> {
        self.feedback(id).await?;
        let rows = sqlx::query(
            "SELECT feedback_id, from_status, to_status, event, run_id, at FROM status_changes \
             WHERE feedback_id = ? ORDER BY id",
        )
        .bind(id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(status_change_from_row).collect()
    }

    /// The owner's approval of an item a visitor opened: the agent may now run on it (its
    /// text stays marked as untrusted in every prompt). Approving twice changes nothing.
    pub async fn approve_feedback(&self, id: FeedbackId) -> Result<Feedback, StoreError> {
        let updated = sqlx::query(
            "UPDATE feedback SET approved_at = COALESCE(approved_at, ?), updated_at = ? WHERE id = ?",
        )
        .bind(self.store.now_text())
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::FeedbackNotFound(id));
        }
        self.feedback(id).await
    }

    /// Records the pull request of a feedback item (its first run opened it, or a new
    /// one replaced a PR that could not be reopened).
    pub async fn record_pull_request(
        &self,
        id: FeedbackId,
        number: u64,
        url: &str,
    ) -> Result<Feedback, StoreError> {
        let updated = sqlx::query(
            "UPDATE feedback SET pr_number = ?, pr_url = ?, pr_state = 'open', updated_at = ? \
             WHERE id = ?",
        )
        .bind(number as i64)
        .bind(url)
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&self.store.pool)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::FeedbackNotFound(id));
        }
        self.feedback(id).await
    }

    /// Takes PR `number` (at `url`), found open on GitHub for the item's head branch, as
    /// the item's own: another installation of the owner's opened it for the same issue.
    /// A NEW or FAILED item without a PR becomes WAITING_FOR_REVIEW; `false` (nothing
    /// written) for an item that has a PR or another status by now.
    pub async fn take_pull_request_opened_elsewhere(
        &self,
        id: FeedbackId,
        number: u64,
        url: &str,
    ) -> Result<bool, StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let current: Option<(String, Option<i64>)> =
            sqlx::query_as("SELECT status, pr_number FROM feedback WHERE id = ?")
                .bind(id.0)
                .fetch_optional(&mut *transaction)
                .await?;
        let (status, pr_number) = current.ok_or(StoreError::FeedbackNotFound(id))?;
        let status: FeedbackStatus = status
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("status {status:?}")))?;
        let event = StatusEvent::PullRequestFoundOpen;
        let Ok(next) = next_status(id, status, event) else {
            return Ok(false);
        };
        if pr_number.is_some() {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE feedback SET pr_number = ?, pr_url = ?, pr_state = 'open', updated_at = ? \
             WHERE id = ?",
        )
        .bind(i64::try_from(number).unwrap_or(i64::MAX))
        .bind(url)
        .bind(self.store.now_text())
        .bind(id.0)
        .execute(&mut *transaction)
        .await?;
        change_status(
            &mut transaction,
            &self.store.now_text(),
            id,
            status,
            next,
            event,
            None,
        )
        .await?;
        transaction.commit().await?;
        Ok(true)
    }

    /// Follows the state of the item's PR on GitHub: merged gives MERGED, closed unmerged
    /// gives FAILED, reopened gives WAITING_FOR_REVIEW again. Returns the item and
    /// whether its status changed.
    pub async fn apply_pull_request_state(
        &self,
        id: FeedbackId,
        state: PullRequestState,
    ) -> Result<(Feedback, bool), StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let current: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT status, pr_state FROM feedback WHERE id = ?")
                .bind(id.0)
                .fetch_optional(&mut *transaction)
                .await?;
        let (status, pr_state) = current.ok_or(StoreError::FeedbackNotFound(id))?;
        let status: FeedbackStatus = status
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("status {status:?}")))?;
        if pr_state.as_deref() == Some(state.as_str()) {
            return Ok((self.feedback(id).await?, false));
        }
        let event = match state {
            PullRequestState::Merged => StatusEvent::PullRequestMerged,
            PullRequestState::Closed => StatusEvent::PullRequestClosedUnmerged,
            PullRequestState::Open => StatusEvent::PullRequestReopened,
        };
        sqlx::query("UPDATE feedback SET pr_state = ?, updated_at = ? WHERE id = ?")
            .bind(state.as_str())
            .bind(self.store.now_text())
            .bind(id.0)
            .execute(&mut *transaction)
            .await?;
        let changed = match next_status(id, status, event) {
            Ok(next) if next != status => {
                change_status(
                    &mut transaction,
                    &self.store.now_text(),
                    id,
                    status,
                    next,
                    event,
                    None,
                )
                .await?;
                true
            }
            // Same status, or an event that does not move this status (a PR closed while
            // an iterate runs): the PR state is recorded, the status stays.
            Ok(_) | Err(_) => false,
        };
        transaction.commit().await?;
        Ok((self.feedback(id).await?, changed))
    }
}

/// Writes a status change and its history row inside `transaction`.
pub(super) async fn change_status(
    transaction: &mut Transaction<'static, Sqlite>,
    now: &str,
    id: FeedbackId,
    from: FeedbackStatus,
    to: FeedbackStatus,
    event: StatusEvent,
    run_id: Option<RunId>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE feedback SET status = ?, updated_at = ? WHERE id = ?")
        .bind(to.as_str())
        .bind(now)
        .bind(id.0)
        .execute(&mut **transaction)
        .await?;
    sqlx::query(
        "INSERT INTO status_changes (feedback_id, from_status, to_status, event, run_id, at) \
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(id.0)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(event.as_str())
    .bind(run_id.map(|run| run.0))
    .bind(now)
    .execute(&mut **transaction)
    .await?;
    Ok(())
}

/// `%words%` for LIKE, with `%`, `_` and `\` of the words taken literally.
fn like_pattern(search: &str) -> String {
    let mut pattern = String::from("%");
    for c in search.trim().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `#12` or `12` as a pull request number.
fn pull_request_number(search: &str) -> Option<i64> {
    search.trim().trim_start_matches('#').parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_words_are_taken_literally() {
        assert_eq!(like_pattern(" 50%_off\\ "), "%50\\%\\_off\\\\%");
        assert_eq!(pull_request_number("#12"), Some(12));
        assert_eq!(pull_request_number("button"), None);
    }
}
