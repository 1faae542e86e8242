//! A managed comment's versions as the command line works with them: the comment with
//! every version (and which were discarded), approving a version someone else wrote, the
//! conflict waiting in the outbox, and the versions compared as a unified diff.

use super::AppCore;
pub use handoff::comment_diff::{unified_diff, version_label};
use handoff::domain::{
    CommentKind, CommentVersion, CommentVersionId, ManagedComment, OutboxEntry, OutboxState, Repo,
};
use handoff::error_code::{CodedError, ErrorCode};

/// A managed comment the mirror knows, with its versions oldest first.
#[derive(Debug, Clone)]
pub struct KnownComment {
    pub comment: ManagedComment,
    pub versions: Vec<CommentVersion>,
    /// The versions whose text GitHub's was kept over (the owner chose so in a conflict).
    pub discarded: Vec<CommentVersionId>,
}

/// `kind`'s comment on `repo`'s PR `pr_number`, or a clear error when none is known.
pub async fn known_comment(
    core: &AppCore,
    repo: &Repo,
    pr_number: u64,
    kind: CommentKind,
) -> Result<KnownComment, CodedError> {
    let comment = core
        .store
        .comments()
        .managed_comment(repo.id, pr_number, kind)
        .await?
        .ok_or_else(|| {
            CodedError::new(
                ErrorCode::NotFound,
                format!("no {kind} comment is known on {} #{pr_number}", repo.name),
            )
        })?;
    let versions = core.store.comments().comment_versions(comment.id).await?;
    let discarded = core
        .store
        .outbox()
        .discarded_comment_versions(comment.id)
        .await?;
    Ok(KnownComment {
        comment,
        versions,
        discarded,
    })
}

/// Approves a version someone else wrote, so the next stage may read it.
pub async fn approve_version(core: &AppCore, version: CommentVersionId) -> Result<(), CodedError> {
    core.store
        .comments()
        .approve_comment_version(version)
        .await?;
    Ok(())
}

/// The edit of `comment` that waits in the outbox because the comment changed on GitHub
/// meanwhile, if there is one.
pub async fn waiting_conflict(
    core: &AppCore,
    comment: &ManagedComment,
) -> Result<Option<OutboxEntry>, CodedError> {
    Ok(core
        .store
        .outbox()
        .unsent_outbox_entries_of_comment(comment.id)
        .await?
        .into_iter()
        .find(|entry| entry.state == OutboxState::Conflict))
}
