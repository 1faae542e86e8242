//! The owner's `@handoff` commands as this installation keeps them: each recorded once
//! per repository by the sync that saw it (so a window, a daemon and a CLI sharing the
//! data folder never take it twice), then moved from state to state by compare-and-set,
//! so only the process that moved it acts on it.

use crate::areas::GithubCommandRecords;
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use super::error::StoreError;
use super::time_text::time_text;
use handoff_domain::{CommandAsk, CommandState, FeedbackId, GithubCommand, RepoId, RunId};

/// How far apart GitHub's clock and this machine's may be when telling whether a
/// command was written after its repository was connected.
const CLOCKS_APART: chrono::Duration = chrono::Duration::seconds(60);

/// A command as a sync finds it.
#[derive(Debug, Clone)]
pub struct NewGithubCommand<'a> {
    pub repo_id: RepoId,
    pub feedback_id: FeedbackId,
    pub comment_id: u64,
    pub thread_number: u64,
    pub on_pull_request: bool,
    pub ask: &'a CommandAsk,
    pub written_at: DateTime<Utc>,
}

macro_rules! columns {
    () => {
        "id, repo_id, feedback_id, comment_id, thread_number, on_pull_request, ask, \
         instructions, written_at, state, claim_comment_id, run_id, outcome"
    };
}

fn command_from_row(row: &SqliteRow) -> Result<GithubCommand, StoreError> {
    let number = |column: &str| -> Result<u64, StoreError> {
        let value: i64 = row.try_get(column)?;
        u64::try_from(value).map_err(|_| StoreError::Corrupt(format!("{column} {value}")))
    };
    let ask: String = row.try_get("ask")?;
    let instructions: Option<String> = row.try_get("instructions")?;
    let state: String = row.try_get("state")?;
    let claim: Option<i64> = row.try_get("claim_comment_id")?;
    let run: Option<i64> = row.try_get("run_id")?;
    Ok(GithubCommand {
        id: row.try_get("id")?,
        repo_id: RepoId(row.try_get("repo_id")?),
        feedback_id: FeedbackId(row.try_get("feedback_id")?),
        comment_id: number("comment_id")?,
        thread_number: number("thread_number")?,
        on_pull_request: row.try_get::<i64, _>("on_pull_request")? == 1,
        ask: CommandAsk::from_stored(&ask, instructions.as_deref())
            .ok_or_else(|| StoreError::Corrupt(format!("command ask {ask:?}")))?,
        written_at: row.try_get("written_at")?,
        state: CommandState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("command state {state:?}")))?,
        claim_comment_id: claim.and_then(|id| u64::try_from(id).ok()),
        run_id: run.map(RunId),
        outcome: row.try_get("outcome")?,
    })
}

impl GithubCommandRecords<'_> {
    /// Records a command, `Seen`; `None` when the same comment was recorded before, or
    /// when it was written before the repository was connected (an old command is
    /// never run by an installation that was not there to see it), give or take a
    /// minute for the two clocks.
    pub async fn record_github_command(
        &self,
        new: &NewGithubCommand<'_>,
    ) -> Result<Option<GithubCommand>, StoreError> {
        let instructions = match new.ask {
            CommandAsk::Instructions(text) => Some(text.as_str()),
            _ => None,
        };
        let written_at = time_text(new.written_at);
        // GitHub's times have whole seconds, and its clock is not this one.
        let connected_by = time_text(new.written_at + CLOCKS_APART);
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT INTO github_commands (repo_id, feedback_id, comment_id, thread_number, \
             on_pull_request, ask, instructions, written_at, created_at) \
             SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM repos WHERE id = ? AND created_at <= ? \
             ON CONFLICT (repo_id, comment_id) DO NOTHING RETURNING id",
        )
        .bind(new.feedback_id.0)
        .bind(i64::try_from(new.comment_id).unwrap_or(i64::MAX))
        .bind(i64::try_from(new.thread_number).unwrap_or(i64::MAX))
        .bind(i64::from(new.on_pull_request))
        .bind(new.ask.word())
        .bind(instructions)
        .bind(&written_at)
        .bind(self.store.now_text())
        .bind(new.repo_id.0)
        .bind(&connected_by)
        .fetch_optional(&self.store.pool)
        .await?;
        match id {
            Some(id) => Ok(Some(self.github_command(id).await?)),
            None => Ok(None),
        }
    }

    pub async fn github_command(&self, id: i64) -> Result<GithubCommand, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM github_commands WHERE id = ?"
        ))
        .bind(id)
        .fetch_optional(&self.store.pool)
        .await?
        .ok_or_else(|| StoreError::Corrupt(format!("command {id} vanished")))?;
        command_from_row(&row)
    }

    /// The commands in `state`, oldest first.
    pub async fn github_commands_in(
        &self,
        state: CommandState,
    ) -> Result<Vec<GithubCommand>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM github_commands WHERE state = ? ORDER BY id"
        ))
        .bind(state.as_str())
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(command_from_row).collect()
    }

    /// The commands given on `feedback_id`'s issue or PR, oldest first.
    pub async fn github_commands_of(
        &self,
        feedback_id: FeedbackId,
    ) -> Result<Vec<GithubCommand>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM github_commands WHERE feedback_id = ? ORDER BY id"
        ))
        .bind(feedback_id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(command_from_row).collect()
    }

    /// Moves command `id` from `from` to `to` with what it came to; `false` (and nothing
    /// written) when it is no longer in `from`, because another process moved it first.
    pub async fn move_github_command(
        &self,
        id: i64,
        from: CommandState,
        to: CommandState,
        outcome: Option<&str>,
        run_id: Option<RunId>,
    ) -> Result<bool, StoreError> {
        let changed = sqlx::query(
            "UPDATE github_commands SET state = ?, outcome = COALESCE(?, outcome), \
             run_id = COALESCE(?, run_id) WHERE id = ? AND state = ?",
        )
        .bind(to.as_str())
        .bind(outcome)
        .bind(run_id.map(|run| run.0))
        .bind(id)
        .bind(from.as_str())
        .execute(&self.store.pool)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// Records a run another installation of the owner's made on `repo_id`, read from
    /// its answer to a command (comment `comment_id`): once per run. `true` when new.
    pub async fn record_run_seen_elsewhere(
        &self,
        repo_id: RepoId,
        installation: &str,
        run_id: u64,
        cost_usd: f64,
        ended_at: DateTime<Utc>,
        comment_id: u64,
    ) -> Result<bool, StoreError> {
        let added = sqlx::query(
            "INSERT INTO runs_seen_elsewhere (repo_id, installation, run_id, cost_usd, ended_at, \
             comment_id) VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (repo_id, installation, run_id) DO NOTHING",
        )
        .bind(repo_id.0)
        .bind(installation)
        .bind(i64::try_from(run_id).unwrap_or(i64::MAX))
        .bind(cost_usd.max(0.0))
        .bind(time_text(ended_at))
        .bind(i64::try_from(comment_id).unwrap_or(i64::MAX))
        .execute(&self.store.pool)
        .await?
        .rows_affected();
        Ok(added == 1)
    }

    /// Notes this installation's claim reply on command `id`.
    pub async fn set_github_command_claim(
        &self,
        id: i64,
        claim_comment_id: Option<u64>,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE github_commands SET claim_comment_id = ? WHERE id = ?")
            .bind(claim_comment_id.and_then(|comment| i64::try_from(comment).ok()))
            .bind(id)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }
}
