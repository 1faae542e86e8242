//! Who wrote the text of a managed comment, told from GitHub's own records rather than
//! from Handoff's local history alone (which a new data folder, or a post whose answer
//! was lost, does not have).
//!
//! Only two parties may write what the next stage reads as trusted: the agent, through
//! Handoff, and the owner. Both post as the signed-in account. So:
//!
//! - a comment is Handoff's only when the signed-in account wrote it, or when Handoff
//!   stored its id itself; anyone else's comment that starts with a marker is not;
//! - a body whose content still matches the digest Handoff wrote into its chrome, with
//!   no edit by another account, is the agent's text;
//! - any other body is an edit: the owner's when the signed-in account made it last
//!   (GitHub's GraphQL `editor`), someone else's otherwise — and someone else's edit
//!   reaches no prompt until the owner approves that version.

use serde_json::json;

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WireComment;
use handoff_domain::managed_comment::split_body;
use handoff_domain::{CommentKind, RunId, VersionOrigin};
use handoff_store::Store;

/// The account whose text counts as the owner's (and Handoff's own): the one the token
/// belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedInAccount {
    pub login: String,
}

impl SignedInAccount {
    pub async fn of(client: &GithubClient, store: &Store) -> Result<Self, GithubError> {
        Ok(SignedInAccount {
            login: client.viewer_login(store).await?,
        })
    }

    /// Whether `login` is this account (GitHub's logins ignore case).
    pub fn is(&self, login: &str) -> bool {
        self.login.eq_ignore_ascii_case(login)
    }

    /// Whether `comment` was written by this account.
    pub fn wrote(&self, comment: &WireComment) -> bool {
        comment.author().is_some_and(|login| self.is(login))
    }
}

/// Who a body of a managed comment is from, as it goes into the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorship {
    pub origin: VersionOrigin,
    /// The agent's account, the owner, or whoever else edited it last (`None` when
    /// GitHub could not say).
    pub login: Option<String>,
    /// The run that posted it, when it is the agent's text and that run is known here.
    pub run_id: Option<RunId>,
    /// The text was last changed by someone other than the owner: it reaches no prompt
    /// until the owner approves it.
    pub edited_by_other: bool,
}

const LAST_EDITOR_QUERY: &str = "query($id: ID!) { node(id: $id) { ... on IssueComment { \
                                 lastEditedAt editor { login } } } }";

/// The account that last edited `comment`, or `None` when nobody ever did (then the
/// author's text is what stands). GitHub's REST answer does not say; its GraphQL API
/// does, so this is one GraphQL request, asked only when a body Handoff does not know
/// turns up.
pub async fn last_editor(
    client: &GithubClient,
    comment: &WireComment,
) -> Result<Option<String>, GithubError> {
    if comment.node_id.is_empty() {
        return Err(GithubError::MalformedAnswer {
            request: format!("the comment {}", comment.id),
            detail: "it has no node_id to ask who edited it".to_owned(),
        });
    }
    let data = client
        .graphql(LAST_EDITOR_QUERY, json!({ "id": comment.node_id }))
        .await?;
    let node = &data["node"];
    if node["lastEditedAt"].is_null() {
        return Ok(None);
    }
    node["editor"]["login"]
        .as_str()
        .map(|login| Some(login.to_owned()))
        .ok_or_else(|| GithubError::MalformedAnswer {
            request: "POST /graphql".to_owned(),
            detail: "an edited comment without an editor".to_owned(),
        })
}

/// Who the body `remote` has now is from. `found_by_stored_id`: Handoff found the
/// comment by the id it stored itself (so its author need not be the signed-in
/// account, for example after switching accounts).
pub async fn authorship_of(
    client: &GithubClient,
    store: &Store,
    account: &SignedInAccount,
    kind: CommentKind,
    remote: &WireComment,
    found_by_stored_id: bool,
) -> Result<Authorship, GithubError> {
    let body = remote.body_text();
    let split =
        split_body(kind, body).or_else(|| split_body(kind, &format!("{}\n{body}", kind.marker())));
    let as_posted = split
        .as_ref()
        .and_then(|split| split.content_as_posted())
        .unwrap_or(false);
    let (editor, never_edited) = match last_editor(client, remote).await {
        Ok(Some(editor)) => (Some(editor), false),
        Ok(None) => (remote.author().map(str::to_owned), true),
        Err(error @ GithubError::Store(_)) => return Err(error),
        Err(error) => {
            tracing::warn!(
                comment = remote.id,
                %error,
                "who last edited the comment is unknown: its text waits for the owner's approval"
            );
            (None, false)
        }
    };
    let trusted_editor = editor.as_deref().is_some_and(|login| account.is(login))
        || (found_by_stored_id && never_edited);
    if trusted_editor && as_posted {
        let run_id = match split.and_then(|split| split.run_id) {
            Some(run) if store.runs().run_exists(run).await? => Some(run),
            _ => None,
        };
        return Ok(Authorship {
            origin: VersionOrigin::Agent,
            login: remote.author().map(str::to_owned),
            run_id,
            edited_by_other: false,
        });
    }
    Ok(Authorship {
        origin: VersionOrigin::EditOnGithub,
        login: editor,
        run_id: None,
        edited_by_other: !trusted_editor,
    })
}
