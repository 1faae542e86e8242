//! Safe edits: the owner's edit of a managed comment is saved locally with the
//! version it was based on, queued in the outbox in the same transaction, and sent only
//! if GitHub still holds that version. A newer edit on GitHub is never overwritten
//! silently: the owner sees both and chooses. Edits made while GitHub cannot be reached
//! wait in the outbox and are sent later, in order, with backoff.

use std::time::Duration;

use serde::Serialize;

use super::client::GithubClient;
use super::comment_authorship::SignedInAccount;
use super::comment_publishing::{find_on_github, record_remote_body, CommentPlace};
use super::error::GithubError;
use handoff_domain::managed_comment::{replace_content, same_body, BodyContext};
use handoff_domain::{
    CommentVersion, CommentVersionId, ManagedComment, OutboxEntry, OutboxEntryId, OutboxState,
    VersionOrigin,
};
use handoff_store::{NewCommentVersion, OutboxClaim, SettingKey, Store, StoreError};

/// What became of an edit.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EditOutcome {
    /// On GitHub now.
    Sent { version: CommentVersion },
    /// Saved locally and waiting in the outbox (GitHub unreachable, not signed in, …).
    Queued {
        version: CommentVersion,
        reason: String,
    },
    /// GitHub's text changed since the edit's base: nothing was overwritten.
    Conflict(EditConflict),
    /// The owner chose GitHub's text over their own edit.
    Discarded,
}

/// Both texts of a conflict, for the owner to choose between.
#[derive(Debug, Clone, Serialize)]
pub struct EditConflict {
    pub entry: OutboxEntryId,
    /// The owner's edit (kept in the history).
    pub mine: CommentVersion,
    /// What GitHub holds now (recorded in the history too).
    pub theirs: CommentVersion,
}

/// How the owner settles a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictChoice {
    /// Put my text on GitHub over theirs (theirs stays in the history).
    KeepMine,
    /// Keep GitHub's text; drop my edit from the outbox (it stays in the history).
    TakeGithub,
}

/// What a pass over the outbox did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OutboxReport {
    pub sent: u32,
    pub conflicts: u32,
    pub postponed: u32,
    pub failed: u32,
    /// Why sending stopped early, if it did (for example GitHub unreachable).
    pub stopped_because: Option<String>,
}

/// The wait before the next attempt after `attempts` failed ones: 5 s, doubling, at most
/// ten minutes.
pub fn retry_delay(attempts: u32) -> Duration {
    let seconds = 5u64.saturating_mul(1u64 << attempts.min(10));
    Duration::from_secs(seconds.min(600))
}

/// Saves the owner's new `content` for the `place` comment, based on version `based_on`
/// (the one the owner was looking at), then tries to send it if `client` is given.
pub async fn save_owner_edit(
    client: Option<&GithubClient>,
    store: &Store,
    place: CommentPlace<'_>,
    content: &str,
    based_on: CommentVersionId,
) -> Result<EditOutcome, GithubError> {
    let comment = store
        .comments()
        .managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?
        .ok_or_else(|| {
            StoreError::Corrupt(format!(
                "no {} comment is known on PR #{}",
                place.kind, place.pr_number
            ))
        })?;
    let base = store.comments().comment_version(based_on).await?;
    if base.managed_comment_id != comment.id {
        return Err(
            StoreError::Corrupt(format!("version {based_on} belongs to another comment")).into(),
        );
    }
    let built = replace_content(
        place.kind,
        &base.body,
        content,
        &BodyContext {
            run_id: base.run_id,
            branch: None,
        },
    );
    let login = store.settings().setting(SettingKey::GithubLogin).await?;
    let (version, entry) = store
        .outbox()
        .save_owner_edit(
            place.repo.id,
            comment.id,
            &NewCommentVersion {
                body: built.body,
                content: built.content,
                full_content: built.full_content,
                origin: VersionOrigin::OwnerInHandoff,
                author_login: login,
                run_id: None,
                based_on: Some(based_on),
                edited_by_other: false,
            },
        )
        .await?;
    match client {
        Some(client) => send_entry(client, store, &entry).await,
        None => Ok(EditOutcome::Queued {
            version,
            reason: "not signed in to GitHub: it is sent once you are".to_owned(),
        }),
    }
}

/// Sends one outbox entry and records what happened to it, holding a claim on it while
/// it goes so that no other process (the app's timer, a command line) sends it too.
async fn send_entry(
    client: &GithubClient,
    store: &Store,
    entry: &OutboxEntry,
) -> Result<EditOutcome, GithubError> {
    match store.outbox().claim_outbox_entry(entry.id).await? {
        OutboxClaim::Claimed => {}
        OutboxClaim::HeldElsewhere => {
            let version = entry_version(store, entry).await?;
            return Ok(EditOutcome::Queued {
                version,
                reason: "another Handoff process is sending this edit now".to_owned(),
            });
        }
        OutboxClaim::Settled(state) => {
            let version = entry_version(store, entry).await?;
            return Ok(match state {
                OutboxState::Sent => EditOutcome::Sent { version },
                _ => EditOutcome::Queued {
                    version,
                    reason: format!(
                        "another Handoff process settled this edit meanwhile ({state})"
                    ),
                },
            });
        }
    }
    let outcome = send_claimed_entry(client, store, entry).await;
    if let Err(error) = store.outbox().release_outbox_claim(entry.id).await {
        tracing::warn!(entry = entry.id.0, %error, "the claim on an outbox entry could not be released; it runs out by itself");
    }
    outcome
}

/// The comment version an outbox entry sends.
async fn entry_version(store: &Store, entry: &OutboxEntry) -> Result<CommentVersion, GithubError> {
    let version_id = entry.comment_version_id.ok_or_else(|| {
        StoreError::Corrupt(format!("outbox entry {} has no version", entry.id.0))
    })?;
    Ok(store.comments().comment_version(version_id).await?)
}
/// The version an outbox entry sends, its comment, and the version the owner edited.
async fn what_the_entry_edits(
    store: &Store,
    entry: &OutboxEntry,
) -> Result<(CommentVersion, ManagedComment, Option<CommentVersion>), GithubError> {
    let corrupt =
        |what: &str| StoreError::Corrupt(format!("outbox entry {} has no {what}", entry.id.0));
    let version_id = entry.comment_version_id.ok_or_else(|| corrupt("version"))?;
    let comment_id = entry.managed_comment_id.ok_or_else(|| corrupt("comment"))?;
    let version = store.comments().comment_version(version_id).await?;
    let comment = store.comments().managed_comment_by_id(comment_id).await?;
    let base = match version.based_on {
        Some(base) => Some(store.comments().comment_version(base).await?),
        None => None,
    };
    Ok((version, comment, base))
}

async fn send_claimed_entry(
    client: &GithubClient,
    store: &Store,
    entry: &OutboxEntry,
) -> Result<EditOutcome, GithubError> {
    let (version, comment, base) = what_the_entry_edits(store, entry).await?;
    let repo = store.repositories().repo(comment.repo_id).await?;
    let place = CommentPlace {
        repo: &repo,
        pr_number: comment.pr_number,
        kind: comment.kind,
    };

    let attempt =
        put_version_on_github(client, store, place, &comment, &version, base.as_ref()).await;

    match attempt {
        Ok(None) => {
            store.outbox().mark_outbox_sent(entry.id).await?;
            Ok(EditOutcome::Sent { version })
        }
        Ok(Some(theirs)) => {
            let message = format!(
                "the comment changed on GitHub since version {} was loaded",
                base.as_ref().map(|b| b.number).unwrap_or_default()
            );
            store
                .outbox()
                .mark_outbox_conflict(entry.id, &message)
                .await?;
            Ok(EditOutcome::Conflict(EditConflict {
                entry: entry.id,
                mine: version,
                theirs,
            }))
        }
        // Worth another try later: GitHub unreachable or failing, a rate limit, a
        // garbled answer (a proxy's page), or a token to be renewed.
        Err(error)
            if error.is_transient()
                || matches!(
                    error,
                    GithubError::Unauthorized { .. }
                        | GithubError::NotSignedIn { .. }
                        | GithubError::MalformedAnswer { .. }
                ) =>
        {
            let next = store.now()
                + chrono::Duration::from_std(retry_delay(entry.attempts)).unwrap_or_default();
            store
                .outbox()
                .postpone_outbox_entry(entry.id, &error.to_string(), next)
                .await?;
            Ok(EditOutcome::Queued {
                version,
                reason: error.to_string(),
            })
        }
        Err(
            error @ (GithubError::Unprocessable { .. }
            | GithubError::Forbidden { .. }
            | GithubError::NotFound { .. }),
        ) => {
            store
                .outbox()
                .mark_outbox_failed(entry.id, &error.to_string())
                .await?;
            Err(error)
        }
        Err(error) => Err(error),
    }
}

/// Puts the owner's `version` of `comment` on GitHub, unless GitHub's text changed since
/// `base` (the version the owner edited): then GitHub's text is recorded as a version of
/// its own and returned, for the owner to settle. A comment gone from GitHub is made
/// again; one that already holds the version is only recorded.
async fn put_version_on_github(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
    comment: &ManagedComment,
    version: &CommentVersion,
    base: Option<&CommentVersion>,
) -> Result<Option<CommentVersion>, GithubError> {
    let repo = place.repo;
    let account = SignedInAccount::of(client, store).await?;
    let by_id = match comment.github_comment_id {
        Some(id) => client.issue_comment(&repo.name, id).await?,
        None => None,
    };
    let remote = match by_id {
        Some(remote) => Some(remote),
        None => {
            find_on_github(client, store, &account, place)
                .await?
                .comment
        }
    };
    let Some(remote) = remote else {
        // Gone from GitHub: the owner's text is what they want there; put it back.
        let created = client
            .create_issue_comment(&repo.name, comment.pr_number, &version.body)
            .await?;
        store
            .comments()
            .set_github_comment(comment.id, created.id, Some(created.updated_at))
            .await?;
        return Ok(None);
    };
    if same_body(remote.body_text(), &version.body) {
        // Already there (sent before a crash kept us from recording it).
        store
            .comments()
            .set_github_comment(comment.id, remote.id, Some(remote.updated_at))
            .await?;
        return Ok(None);
    }
    let unchanged_since_base = base
        .as_ref()
        .is_none_or(|base| same_body(remote.body_text(), &base.body));
    if unchanged_since_base {
        let updated = client
            .update_issue_comment(&repo.name, remote.id, &version.body)
            .await?;
        if let Some(updated) = updated {
            store
                .comments()
                .set_github_comment(comment.id, updated.id, Some(updated.updated_at))
                .await?;
        }
        return Ok(None);
    }
    let (theirs, _) = record_remote_body(client, store, &account, comment, &remote).await?;
    Ok(Some(theirs))
}

/// Which outbox entries a pass sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxPass {
    /// Only those whose backoff has passed (background sync).
    DueOnly,
    /// Every pending one now (the owner asked to retry).
    Everything,
}

/// Sends what is due in the outbox, oldest first. Within one comment, order is kept: a
/// later edit waits while an earlier one is unsent. A transient failure stops the pass
/// (GitHub is probably unreachable); the rest waits for the next one.
pub async fn send_outbox(
    client: &GithubClient,
    store: &Store,
    pass: OutboxPass,
) -> Result<OutboxReport, GithubError> {
    let mut report = OutboxReport::default();
    let due_by = match pass {
        OutboxPass::DueOnly => Some(store.now()),
        OutboxPass::Everything => None,
    };
    let due = store.outbox().pending_outbox_entries(due_by).await?;
    for (index, entry) in due.iter().enumerate() {
        if let Some(comment) = entry.managed_comment_id {
            let unsent = store
                .outbox()
                .unsent_outbox_entries_of_comment(comment)
                .await?;
            if unsent.first().map(|first| first.id) != Some(entry.id) {
                continue;
            }
        }
        match send_entry(client, store, entry).await {
            Ok(EditOutcome::Sent { .. }) => report.sent += 1,
            Ok(EditOutcome::Conflict(_)) => report.conflicts += 1,
            Ok(EditOutcome::Queued { reason, .. }) => {
                report.postponed += (due.len() - index) as u32;
                report.stopped_because = Some(reason);
                break;
            }
            Ok(EditOutcome::Discarded) => {}
            Err(GithubError::Store(error)) => return Err(error.into()),
            Err(error) => {
                tracing::warn!(entry = entry.id.0, %error, "an outbox entry could not be sent");
                report.failed += 1
            }
        }
    }
    Ok(report)
}

/// Sends one entry now, whatever its backoff — one GitHub refused is tried again. The
/// owner's earlier unsent edits of the same comment go first, in order; if one of them
/// cannot be sent, that is what the result says and this one waits.
pub async fn send_outbox_entry_now(
    client: &GithubClient,
    store: &Store,
    entry_id: OutboxEntryId,
) -> Result<EditOutcome, GithubError> {
    let entry = store.outbox().outbox_entry(entry_id).await?;
    if entry.discarded_at.is_some() || entry.state == OutboxState::Sent {
        return Err(StoreError::OutboxEntryDone {
            id: entry_id.0,
            how: if entry.discarded_at.is_some() {
                "discarded"
            } else {
                "sent already"
            },
        }
        .into());
    }
    if entry.state == OutboxState::Failed {
        store.outbox().retry_outbox_entry(entry_id).await?;
    }
    let comment = entry.managed_comment_id.ok_or_else(|| {
        StoreError::Corrupt(format!("outbox entry {} has no comment", entry_id.0))
    })?;
    for earlier in store
        .outbox()
        .unsent_outbox_entries_of_comment(comment)
        .await?
    {
        let outcome = send_entry(client, store, &earlier).await?;
        let sent = matches!(outcome, EditOutcome::Sent { .. });
        if earlier.id == entry_id || !sent {
            return Ok(outcome);
        }
    }
    Err(StoreError::OutboxEntryDone {
        id: entry_id.0,
        how: "settled meanwhile",
    }
    .into())
}

/// Settles a conflict the way the owner chose.
pub async fn resolve_conflict(
    client: Option<&GithubClient>,
    store: &Store,
    entry_id: OutboxEntryId,
    choice: ConflictChoice,
) -> Result<EditOutcome, GithubError> {
    let entry = store.outbox().outbox_entry(entry_id).await?;
    if entry.state != OutboxState::Conflict {
        return Err(StoreError::Corrupt(format!(
            "outbox entry {} is {}, not in conflict",
            entry_id.0, entry.state
        ))
        .into());
    }
    let corrupt =
        |what: &str| StoreError::Corrupt(format!("outbox entry {} has no {what}", entry_id.0));
    let mine = store
        .comments()
        .comment_version(entry.comment_version_id.ok_or_else(|| corrupt("version"))?)
        .await?;
    let comment = store
        .comments()
        .managed_comment_by_id(entry.managed_comment_id.ok_or_else(|| corrupt("comment"))?)
        .await?;
    match choice {
        ConflictChoice::TakeGithub => {
            store.outbox().discard_outbox_entry(entry_id).await?;
            Ok(EditOutcome::Discarded)
        }
        ConflictChoice::KeepMine => {
            let theirs = store
                .comments()
                .latest_comment_version(comment.id)
                .await?
                .ok_or_else(|| corrupt("version of GitHub's text"))?;
            store
                .outbox()
                .mark_outbox_failed(entry_id, "replaced by the owner's text, kept over GitHub's")
                .await?;
            let repo = store.repositories().repo(comment.repo_id).await?;
            save_owner_edit(
                client,
                store,
                CommentPlace {
                    repo: &repo,
                    pr_number: comment.pr_number,
                    kind: comment.kind,
                },
                mine.whole_content(),
                theirs.id,
            )
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_ten_minutes() {
        assert_eq!(retry_delay(0), Duration::from_secs(5));
        assert_eq!(retry_delay(1), Duration::from_secs(10));
        assert_eq!(retry_delay(30), Duration::from_secs(600));
    }
}
