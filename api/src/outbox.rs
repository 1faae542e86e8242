//! The outbox in the window: the owner's edits not on GitHub yet (saved offline, waiting
//! for a retry, refused by GitHub, or in conflict), each with its last error, and Send
//! now and Discard. A discarded edit is never sent; its text stays in the history.

use serde::Serialize;

use super::comments::{save_result, SaveResult};
use super::AppCore;
use handoff::domain::{CommentKind, OutboxEntryId, OutboxState};
use handoff::error_code::CodedError;
use handoff::github::owner_edits::send_outbox_entry_now;
use handoff::github::ReadBack;

/// One waiting edit.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OutboxItem {
    pub entry_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::OutboxStateWords")
    )]
    pub state: OutboxState,
    pub repo: String,
    pub pr_number: u64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::CommentKindWords")
    )]
    pub kind: CommentKind,
    pub version_number: Option<u32>,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub saved_at: chrono::DateTime<chrono::Utc>,
    pub next_attempt_at: chrono::DateTime<chrono::Utc>,
}

/// Every edit waiting in the outbox, oldest first.
pub async fn outbox(core: &AppCore) -> Result<Vec<OutboxItem>, CodedError> {
    let mut items = Vec::new();
    for entry in core.store.unsent_outbox_entries().await? {
        let Some(comment_id) = entry.managed_comment_id else {
            continue;
        };
        let comment = core.store.managed_comment_by_id(comment_id).await?;
        let version_number = match entry.comment_version_id {
            Some(version) => Some(core.store.comment_version(version).await?.number),
            None => None,
        };
        items.push(OutboxItem {
            entry_id: entry.id.0,
            state: entry.state,
            repo: comment.repo.full_name(),
            pr_number: comment.pr_number,
            kind: comment.kind,
            version_number,
            attempts: entry.attempts,
            last_error: entry.last_error,
            saved_at: entry.created_at,
            next_attempt_at: entry.next_attempt_at,
        });
    }
    Ok(items)
}

/// Sends one waiting edit now (and the earlier edits of its comment first).
pub async fn send_outbox_entry(core: &AppCore, entry_id: i64) -> Result<SaveResult, CodedError> {
    let github = core.github().await?;
    let outcome = send_outbox_entry_now(&github, &core.store, OutboxEntryId(entry_id)).await?;
    Ok(save_result(outcome))
}

/// Discards a waiting edit: it is never sent, and its text stays in the history. When
/// GitHub can be read, the comment's text there is read back at once, so the workspace
/// shows what is on GitHub again.
pub async fn discard_outbox_entry(core: &AppCore, entry_id: i64) -> Result<(), CodedError> {
    let id = OutboxEntryId(entry_id);
    let entry = core.store.outbox_entry(id).await?;
    core.store.discard_outbox_entry(id).await?;
    let Some(comment_id) = entry.managed_comment_id else {
        return Ok(());
    };
    let Ok(github) = core.github().await else {
        return Ok(());
    };
    let comment = core.store.managed_comment_by_id(comment_id).await?;
    let repo = core.store.repo(comment.repo_id).await?;
    let place = handoff::github::CommentPlace {
        repo: &repo,
        pr_number: comment.pr_number,
        kind: comment.kind,
    };
    match handoff::github::comment_publishing::read_back(&github, &core.store, place).await {
        Ok(ReadBack::Present { .. } | ReadBack::Missing { .. }) => {}
        Err(error) => {
            tracing::warn!(entry = entry_id, %error, "GitHub's text could not be read back after a discard");
        }
    }
    Ok(())
}
