//! Managed comments on GitHub: publishing an agent's output as the one comment of its
//! kind on a PR, reading a comment back as the next stage will use it, and keeping every
//! body the comment has had in the local history.
//!
//! A comment is Handoff's when Handoff stored its id, or when the signed-in account
//! wrote it and its first line is the marker; anyone else's comment that starts with a
//! marker is never adopted, updated or read as a stage's input (it is reported instead).

use serde::Serialize;

use super::client::GithubClient;
use super::comment_authorship::{authorship_of, SignedInAccount};
use super::error::GithubError;
use super::wire::WireComment;
use handoff_domain::managed_comment::{
    build_body, read_content_of_known_comment, same_body, BodyContext,
};
use handoff_domain::{CommentKind, CommentVersion, ManagedComment, Repo, RunId, VersionOrigin};
use handoff_store::{NewCommentVersion, Store};

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
    /// The comment is on GitHub; `content` is what the next stage gets: without the
    /// marker, the header and the time line.
    Present {
        content: String,
        version: CommentVersion,
        /// The text on GitHub differed from every version Handoff knew: someone edited
        /// it there (now recorded as a version).
        edited_on_github: bool,
        impostors: Vec<Impostor>,
    },
    /// No such comment on GitHub: it was never posted, or it was deleted.
    Missing {
        deleted: bool,
        impostors: Vec<Impostor>,
    },
}

impl ReadBack {
    /// Comments by other people that carry this comment's marker (never adopted).
    pub fn impostors(&self) -> &[Impostor] {
        match self {
            ReadBack::Present { impostors, .. } | ReadBack::Missing { impostors, .. } => impostors,
        }
    }
}

/// Someone else's comment on the PR whose first line is a managed comment's marker: it
/// is shown as theirs and never taken for Handoff's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Impostor {
    pub login: String,
    pub url: String,
}

impl Impostor {
    /// What the owner is told about it.
    pub fn describe(&self, kind: CommentKind) -> String {
        format!(
            "a comment by @{} carries the {kind} comment's marker but was not written by you: \
             it is not Handoff's and was ignored ({})",
            self.login, self.url
        )
    }
}

/// What a search of the PR's comments for a marker found.
#[derive(Debug, Clone, Default)]
pub struct MarkerSearch {
    /// The first comment of the kind written by the signed-in account.
    pub comment: Option<WireComment>,
    /// Comments by others that carry the marker.
    pub impostors: Vec<Impostor>,
}

/// The first comment of `kind` on the PR written by the signed-in account, read through
/// all pages; only a marker on the first line counts, so a quoted reply never takes
/// over. Comments by others with the marker are reported, not adopted.
pub async fn find_on_github(
    client: &GithubClient,
    store: &Store,
    account: &SignedInAccount,
    place: CommentPlace<'_>,
) -> Result<MarkerSearch, GithubError> {
    let (comments, _) = client
        .issue_comments(store, &place.repo.name, place.pr_number)
        .await?;
    Ok(search_for_marker(comments, account, place.kind))
}

/// [`find_on_github`] over comments already read.
pub fn search_for_marker(
    comments: impl IntoIterator<Item = WireComment>,
    account: &SignedInAccount,
    kind: CommentKind,
) -> MarkerSearch {
    let mut search = MarkerSearch::default();
    for comment in comments {
        if CommentKind::of_body(comment.body_text()) != Some(kind) {
            continue;
        }
        if account.wrote(&comment) {
            if search.comment.is_none() {
                search.comment = Some(comment);
            }
        } else {
            search.impostors.push(Impostor {
                login: comment.author().unwrap_or("someone").to_owned(),
                url: comment.html_url.clone(),
            });
        }
    }
    search
}

/// Records the body a comment has on GitHub as a version, unless it is one Handoff
/// already knows; returns the version that matches GitHub now and whether it is new.
/// Who the new body is from is told from GitHub's records (see
/// [`super::comment_authorship`]), so an edit by someone else is marked as such.
pub async fn record_remote_body(
    client: &GithubClient,
    store: &Store,
    account: &SignedInAccount,
    comment: &ManagedComment,
    remote: &WireComment,
) -> Result<(CommentVersion, bool), GithubError> {
    let found_by_stored_id = comment.github_comment_id == Some(remote.id);
    store
        .comments()
        .set_github_comment(comment.id, remote.id, Some(remote.updated_at))
        .await?;
    let known = store.comments().comment_versions(comment.id).await?;
    if let Some(version) = known
        .iter()
        .rev()
        .find(|version| same_body(&version.body, remote.body_text()))
    {
        return Ok((version.clone(), false));
    }
    let authorship = authorship_of(
        client,
        store,
        account,
        comment.kind,
        remote,
        found_by_stored_id,
    )
    .await?;
    let version = store
        .comments()
        .add_comment_version(
            comment.id,
            &NewCommentVersion {
                body: remote.body_text().to_owned(),
                content: read_content_of_known_comment(comment.kind, remote.body_text()),
                full_content: None,
                origin: authorship.origin,
                author_login: authorship.login,
                run_id: authorship.run_id,
                based_on: None,
                edited_by_other: authorship.edited_by_other,
            },
        )
        .await?;
    Ok((version, true))
}

/// Publishes `content` as the `place` comment: one request when the comment's id is
/// known (an update), otherwise a search through all pages for the signed-in account's
/// comment of that kind, then an update or a create. The body is cut at 60,000
/// characters with a notice; the full text stays in the version.
pub async fn publish_agent_output(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
    content: &str,
    run_id: Option<RunId>,
    branch: Option<&str>,
) -> Result<Published, GithubError> {
    let comment = store
        .comments()
        .ensure_managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?;
    let context = BodyContext {
        run_id,
        branch: branch.map(str::to_owned),
    };
    let built = build_body(place.kind, content, store.now(), &context);
    let repo = &place.repo.name;

    let updated = match comment.github_comment_id {
        Some(id) => client.update_issue_comment(repo, id, &built.body).await?,
        None => None,
    };
    let (remote, created) = match updated {
        Some(remote) => (remote, false),
        None => {
            let account = SignedInAccount::of(client, store).await?;
            let found = find_on_github(client, store, &account, place)
                .await?
                .comment;
            let updated = match found {
                Some(found) => {
                    client
                        .update_issue_comment(repo, found.id, &built.body)
                        .await?
                }
                None => None,
            };
            match updated {
                Some(remote) => (remote, false),
                None => (
                    client
                        .create_issue_comment(repo, place.pr_number, &built.body)
                        .await?,
                    true,
                ),
            }
        }
    };
    store
        .comments()
        .set_github_comment(comment.id, remote.id, Some(remote.updated_at))
        .await?;
    let version = store
        .comments()
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
                edited_by_other: false,
            },
        )
        .await?;
    Ok(Published {
        comment: store.comments().managed_comment_by_id(comment.id).await?,
        version,
        created,
    })
}

/// Reads the `place` comment as it is on GitHub now: an edit made there becomes a
/// version first (marked when someone other than the owner made it); a comment that is
/// gone is reported, not guessed.
pub async fn read_back(
    client: &GithubClient,
    store: &Store,
    place: CommentPlace<'_>,
) -> Result<ReadBack, GithubError> {
    let account = SignedInAccount::of(client, store).await?;
    let known = store
        .comments()
        .managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?;
    let by_id = match known.as_ref().and_then(|comment| comment.github_comment_id) {
        Some(id) => client.issue_comment(&place.repo.name, id).await?,
        None => None,
    };
    let (remote, impostors) = match by_id {
        Some(remote) => (Some(remote), Vec::new()),
        None => {
            let search = find_on_github(client, store, &account, place).await?;
            (search.comment, search.impostors)
        }
    };
    let Some(remote) = remote else {
        let was_posted = match &known {
            Some(comment) => {
                let had_versions = store
                    .comments()
                    .latest_comment_version(comment.id)
                    .await?
                    .is_some();
                if had_versions || comment.github_comment_id.is_some() {
                    store.comments().mark_comment_missing(comment.id).await?;
                    true
                } else {
                    false
                }
            }
            None => false,
        };
        return Ok(ReadBack::Missing {
            deleted: was_posted,
            impostors,
        });
    };
    let comment = match known {
        Some(comment) => comment,
        None => {
            store
                .comments()
                .ensure_managed_comment(place.repo.id, place.pr_number, place.kind)
                .await?
        }
    };
    let (version, edited_on_github) =
        record_remote_body(client, store, &account, &comment, &remote).await?;
    Ok(ReadBack::Present {
        content: read_content_of_known_comment(place.kind, remote.body_text()),
        version,
        edited_on_github,
        impostors,
    })
}
