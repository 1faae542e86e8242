//! What Handoff itself pushed to a repository's branches: each push recorded before it
//! leaves (a run's commits, from the commit it started on to its last; the one commit of
//! the lessons file), and from before those records, each run's commits, the commits of
//! a held run the owner approved, and the lessons file's commits. A PR's head is told
//! apart by them: these commits are the agent's, made for the owner, though no GitHub
//! account is linked to them.

use super::error::StoreError;
use crate::areas::RunRecords;
use handoff_domain::head_commits::HandoffPush;
use handoff_domain::{RepoId, RunId};

impl RunRecords<'_> {
    /// Records, before it leaves, a push of the commits after `start_sha` up to `end_sha`
    /// (`end_sha` alone without a start) for `repo_id` (and run `run_id`, if a run's).
    pub async fn record_handoff_push(
        &self,
        repo_id: RepoId,
        run_id: Option<RunId>,
        start_sha: Option<&str>,
        end_sha: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO handoff_pushes (repo_id, run_id, start_sha, end_sha, pushed_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(repo_id.0)
        .bind(run_id.map(|run| run.0))
        .bind(start_sha)
        .bind(end_sha)
        .bind(self.store.now_text())
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Every range of commits Handoff made for `repo_id`'s runs.
    pub async fn handoff_pushes(&self, repo_id: RepoId) -> Result<Vec<HandoffPush>, StoreError> {
        let rows: Vec<(Option<String>, String)> = sqlx::query_as(
            "SELECT start_sha, end_sha FROM handoff_pushes WHERE repo_id = ? \
             UNION \
             SELECT start_sha, end_sha FROM runs \
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
        .bind(repo_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(start_sha, end_sha)| HandoffPush { start_sha, end_sha })
            .collect())
    }
}
