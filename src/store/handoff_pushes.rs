//! What Handoff itself pushed to a repository's branches: each run's commits (from the
//! commit it started on to its last), the commits of a held run the owner approved, and
//! the commits that write the lessons section of AGENTS.md. A PR's head is told apart
//! by them: these commits are the agent's, made for the owner, though no GitHub
//! account is linked to them.

use super::error::StoreError;
use super::Store;
use crate::domain::head_commits::HandoffPush;
use crate::domain::RepoId;

impl Store {
    /// Every range of commits Handoff made for `repo_id`'s runs.
    pub async fn handoff_pushes(&self, repo_id: RepoId) -> Result<Vec<HandoffPush>, StoreError> {
        let rows: Vec<(Option<String>, String)> = sqlx::query_as(
            "SELECT start_sha, end_sha FROM runs \
             WHERE repo_id = ? AND start_sha IS NOT NULL AND end_sha IS NOT NULL \
             UNION \
             SELECT runs.start_sha, held_push_approvals.end_sha FROM held_push_approvals \
             JOIN runs ON runs.id = held_push_approvals.run_id \
             WHERE runs.repo_id = ? AND runs.start_sha IS NOT NULL \
             UNION \
             SELECT NULL, commit_sha FROM lessons_file_writes \
             WHERE repo_id = ? AND origin = 'handoff' AND commit_sha IS NOT NULL",
        )
        .bind(repo_id.0)
        .bind(repo_id.0)
        .bind(repo_id.0)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(start_sha, end_sha)| HandoffPush { start_sha, end_sha })
            .collect())
    }
}
