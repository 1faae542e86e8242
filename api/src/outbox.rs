//! The outbox in the window: the owner's edits not on GitHub yet (saved offline, waiting
//! for a retry, refused by GitHub, or in conflict), each with its last error, and Send
//! now and Discard. A discarded edit is never sent; its text stays in the history.

use serde::Serialize;

use super::comments::{save_result, SaveResult};
use super::AppCore;
use handoff::domain::{CommentKind, OutboxEntry, OutboxEntryId, OutboxState, RepoName};
use handoff::error_code::CodedError;
use handoff::github::owner_edits::{send_outbox, send_outbox_entry_now, OutboxPass};
use handoff::github::ReadBack;
use handoff::github::{EditOutcome, OutboxReport};

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

/// One write waiting in the outbox, with the comment it edits (when it edits one) and
/// the version it would send.
#[derive(Debug, Clone)]
pub struct WaitingWrite {
    pub entry: OutboxEntry,
    /// The comment: its repository, PR and kind.
    pub comment: Option<(RepoName, u64, CommentKind)>,
    pub version_number: Option<u32>,
}

/// Every write waiting in the outbox, oldest first.
pub async fn waiting_writes(core: &AppCore) -> Result<Vec<WaitingWrite>, CodedError> {
    let mut writes = Vec::new();
    for entry in core.store.outbox().unsent_outbox_entries().await? {
        let comment = match entry.managed_comment_id {
            Some(comment_id) => {
                let comment = core
                    .store
                    .comments()
                    .managed_comment_by_id(comment_id)
                    .await?;
                Some((comment.repo, comment.pr_number, comment.kind))
            }
            None => None,
        };
        let version_number = match entry.comment_version_id {
            Some(version) => Some(core.store.comments().comment_version(version).await?.number),
            None => None,
        };
        writes.push(WaitingWrite {
            entry,
            comment,
            version_number,
        });
    }
    Ok(writes)
}

/// Every edit of a comment waiting in the outbox, oldest first, as the page shows it.
pub async fn outbox(core: &AppCore) -> Result<Vec<OutboxItem>, CodedError> {
    Ok(waiting_writes(core)
        .await?
        .into_iter()
        .filter_map(|write| {
            let (repo, pr_number, kind) = write.comment?;
            Some(OutboxItem {
                entry_id: write.entry.id.0,
                state: write.entry.state,
                repo: repo.full_name(),
                pr_number,
                kind,
                version_number: write.version_number,
                attempts: write.entry.attempts,
                last_error: write.entry.last_error,
                saved_at: write.entry.created_at,
                next_attempt_at: write.entry.next_attempt_at,
            })
        })
        .collect())
}

/// Sends one waiting write now (and the earlier edits of its comment first).
pub async fn send_waiting_write(core: &AppCore, entry_id: i64) -> Result<EditOutcome, CodedError> {
    let github = core.github().await?;
    Ok(send_outbox_entry_now(&github, &core.store, OutboxEntryId(entry_id)).await?)
}

/// [`send_waiting_write`], as the page shows what came of it.
pub async fn send_outbox_entry(core: &AppCore, entry_id: i64) -> Result<SaveResult, CodedError> {
    Ok(save_result(send_waiting_write(core, entry_id).await?))
}

/// Sends every waiting write now, without waiting for its backoff.
pub async fn send_every_waiting_write(core: &AppCore) -> Result<OutboxReport, CodedError> {
    let github = core.github().await?;
    Ok(send_outbox(&github, &core.store, OutboxPass::Everything).await?)
}

/// Discards a waiting edit: it is never sent, and its text stays in the history. When
/// GitHub can be read, the comment's text there is read back at once, so the workspace
/// shows what is on GitHub again. False: it was sent or discarded already.
pub async fn discard_outbox_entry(core: &AppCore, entry_id: i64) -> Result<bool, CodedError> {
    let id = OutboxEntryId(entry_id);
    let entry = core.store.outbox().outbox_entry(id).await?;
    let discarded = core.store.outbox().discard_outbox_entry(id).await?;
    let Some(comment_id) = entry.managed_comment_id.filter(|_| discarded) else {
        return Ok(discarded);
    };
    let Ok(github) = core.github().await else {
        return Ok(discarded);
    };
    let comment = core
        .store
        .comments()
        .managed_comment_by_id(comment_id)
        .await?;
    let repo = core.store.repositories().repo(comment.repo_id).await?;
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
    Ok(discarded)
}
