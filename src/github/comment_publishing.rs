//! Managed comments on GitHub (H2-H7, H9): publishing an agent's output as the one
//! comment of its kind on a PR, reading a comment back as the next stage will use it,
//! and keeping every body the comment has had in the local history.

use chrono::Utc;
use serde::Serialize;

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WireComment;
use crate::domain::managed_comment::{
    build_body, read_content_of_known_comment, same_body, BodyContext,
};
use crate::domain::{CommentKind, CommentVersion, ManagedComment, Repo, RunId, VersionOrigin};
use crate::store::{NewCommentVersion, Store};

/// Which managed comment: a kind of comment on one PR of one repository.
#[derive(Debug, Clone, Copy)]
pub struct CommentPlace<'a> {
    pub repo: &'a Repo,
    pub pr_number: u64,
    pub kind: CommentKind,
}

/// What publishing did.
#[derive(Debug, Clone, Serialize)]
pub struct Published {
    pub comment: ManagedComment,
    pub version: CommentVersion,
    /// A new comment was made (none was known or found).
    pub created: bool,
}

/// A comment as the next stage reads it.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ReadBack {
    /// The comment is on GitHub; `content` is what the next stage gets (H4).
    Present {
        content: String,
        version: CommentVersion,
        /// The text on GitHub differed from the last version Handoff knew: someone
        /// edited it there (now recorded as a version).
        edited_on_github: bool,
    },
    /// No such comment on GitHub: it was never posted, or it was deleted (H6).
    Missing { deleted: bool },
}

/// The first comment of `kind` on the PR, read through all pages; only a marker on the
/// first line counts, so a quoted reply never takes over (H5).
pub async fn find_on_github(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
) -> Result<Option<WireComment>, GithubError> {
    let (comments, _) = client
        .issue_comments(store, &place.repo.name, place.pr_number)
        .await?;
    Ok(comments
        .into_iter()
        .find(|comment| CommentKind::of_body(comment.body_text()) == Some(place.kind)))
}

/// Records the body a comment has on GitHub as a version when it differs from the last
/// one Handoff knows; returns the version that matches GitHub now and whether it is new.
pub async fn record_remote_body(
    store: &Store,
    comment: &ManagedComment,
    remote: &WireComment,
) -> Result<(CommentVersion, bool), GithubError> {
    store
        .set_github_comment(comment.id, remote.id, Some(remote.updated_at))
        .await?;
    if let Some(latest) = store.latest_comment_version(comment.id).await? {
        if same_body(&latest.body, remote.body_text()) {
            return Ok((latest, false));
        }
    }
    let version = store
        .add_comment_version(
            comment.id,
            &NewCommentVersion {
                body: remote.body_text().to_owned(),
                content: read_content_of_known_comment(comment.kind, remote.body_text()),
                full_content: None,
                origin: VersionOrigin::EditOnGithub,
                author_login: None,
                run_id: None,
                based_on: None,
            },
        )
        .await?;
    Ok((version, true))
}

/// Publishes `content` as the `place` comment: one request when the comment's id is
/// known (an update), otherwise a search through all pages, then an update or a create.
/// The body is cut at 60,000 characters with a notice; the full text stays in the
/// version (H7).
pub async fn publish_agent_output(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
    content: &str,
    run_id: Option<RunId>,
    branch: Option<&str>,
) -> Result<Published, GithubError> {
    let comment = store
        .ensure_managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?;
    let context = BodyContext {
        run_id,
        branch: branch.map(str::to_owned),
    };
    let built = build_body(place.kind, content, Utc::now(), &context);
    let repo = &place.repo.name;

    let updated = match comment.github_comment_id {
        Some(id) => client.update_issue_comment(repo, id, &built.body).await?,
        None => None,
    };
    let (remote, created) = match updated {
        Some(remote) => (remote, false),
        None => match find_on_github(client, store, place).await? {
            Some(found) => match client
                .update_issue_comment(repo, found.id, &built.body)
                .await?
            {
                Some(remote) => (remote, false),
                None => (
                    client
                        .create_issue_comment(repo, place.pr_number, &built.body)
                        .await?,
                    true,
                ),
            },
            None => (
                client
                    .create_issue_comment(repo, place.pr_number, &built.body)
                    .await?,
                true,
            ),
        },
    };
    store
        .set_github_comment(comment.id, remote.id, Some(remote.updated_at))
        .await?;
    let version = store
        .add_comment_version(
            comment.id,
            &NewCommentVersion {
                body: built.body,
                content: built.content,
                full_content: built.full_content,
                origin: VersionOrigin::Agent,
                author_login: remote.author().map(str::to_owned),
                run_id,
                based_on: None,
            },
        )
        .await?;
    Ok(Published {
        comment: store.managed_comment_by_id(comment.id).await?,
        version,
        created,
    })
}

/// Reads the `place` comment as it is on GitHub now (H4): an edit made there becomes a
/// version first; a comment that is gone is reported, not guessed (H6).
pub async fn read_back(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
) -> Result<ReadBack, GithubError> {
    let known = store
        .managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?;
    let by_id = match known.as_ref().and_then(|comment| comment.github_comment_id) {
        Some(id) => client.issue_comment(&place.repo.name, id).await?,
        None => None,
    };
    let remote = match by_id {
        Some(remote) => Some(remote),
        None => find_on_github(client, store, place).await?,
    };
    let Some(remote) = remote else {
        let was_posted = match &known {
            Some(comment) => {
                let had_versions = store.latest_comment_version(comment.id).await?.is_some();
                if had_versions || comment.github_comment_id.is_some() {
                    store.mark_comment_missing(comment.id).await?;
                    true
                } else {
                    false
                }
            }
            None => false,
        };
        return Ok(ReadBack::Missing {
            deleted: was_posted,
        });
    };
    let comment = match known {
        Some(comment) => comment,
        None => {
            store
                .ensure_managed_comment(place.repo.id, place.pr_number, place.kind)
                .await?
        }
    };
    let (version, edited_on_github) = record_remote_body(store, &comment, &remote).await?;
    Ok(ReadBack::Present {
        content: read_content_of_known_comment(place.kind, remote.body_text()),
        version,
        edited_on_github,
    })
}
