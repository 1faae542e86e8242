//! Managed comments in the app: a pane's preview and its changes against the agent's
//! original as the owner types, saving that syncs to GitHub without ever overwriting a
//! newer edit there silently (the owner sees both and chooses), and the history of every
//! version with any two compared side by side.

use serde::Serialize;

use super::records::*;
use super::{invalid_input, AppCore};
use handoff::comment_diff::{line_changes, text_line_changes};
use handoff::domain::{
    CommentKind, CommentVersion, CommentVersionId, OutboxEntryId, Repo, RepoName, VersionOrigin,
};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::client::RequestPolicy;
use handoff::github::comment_publishing::{read_back, CommentPlace, ReadBack};
use handoff::github::owner_edits::{
    resolve_conflict, save_owner_edit, ConflictChoice, EditOutcome,
};
use handoff::github::sign_in::connect;
use handoff::markdown::render_markdown;

/// A comment opened for editing.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CommentEditor {
    pub repo: String,
    pub pr_number: u64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::CommentKindWords")
    )]
    pub kind: CommentKind,
    pub header: &'static str,
    /// The version the editor starts from (the one an edit is based on).
    pub version: CommentVersionRecord,
    pub content: String,
    pub content_html: String,
    /// The agent's latest original, to compare the current text with.
    pub agent_original: Option<String>,
    pub changes_from_agent: Vec<ChangedLineRecord>,
    pub history: Vec<CommentVersionRecord>,
    /// Where the text came from: GitHub just now, or the local history (offline).
    pub source: EditorSource,
    pub note: Option<String>,
}

/// Where an editor's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EditorSource {
    /// Read from GitHub just now.
    Github,
    /// The local history (GitHub could not be read, or holds no such comment).
    Local,
}

/// How a save ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SaveOutcome {
    /// GitHub holds the new text.
    Sent,
    /// Kept here; it waits in the outbox.
    Queued,
    /// GitHub's text was kept; the edit stays in the history.
    Discarded,
    /// The comment changed on GitHub meanwhile: the owner chooses.
    Conflict,
}

/// What a save did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SaveResult {
    pub outcome: SaveOutcome,
    pub message: String,
    pub conflict: Option<ConflictView>,
}

/// Both texts of a conflict.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConflictView {
    pub entry_id: i64,
    pub mine: String,
    pub mine_html: String,
    pub theirs: String,
    pub theirs_html: String,
    pub changes: Vec<ChangedLineRecord>,
}

async fn repo(core: &AppCore, repo: &str) -> Result<Repo, CodedError> {
    let name: RepoName = repo
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))?;
    Ok(core.store.repositories().repo_by_name(&name).await?)
}

fn kind(text: &str) -> Result<CommentKind, CodedError> {
    CommentKind::parse(text).ok_or_else(|| invalid_input(format!("unknown comment kind {text:?}")))
}

/// A managed comment as it stands, for the window's editor and `handoff comment show`
/// alike: read back from GitHub when signed in and reachable (an edit made there becomes
/// a version first), else the newest version of the local history, with a note saying
/// why (not signed in, GitHub unreachable, the comment deleted on GitHub).
#[derive(Debug, Clone)]
pub struct CommentAsItStands {
    /// The content as the next stage reads it.
    pub content: String,
    /// The version the text is (the newest one after a read-back).
    pub version: CommentVersion,
    pub history: Vec<CommentVersion>,
    pub source: EditorSource,
    pub note: Option<String>,
    /// The read-back found an edit made on GitHub since Handoff last saw the comment.
    pub edited_on_github: bool,
    /// Comments by someone else that carry this comment's marker, described.
    pub impostors: Vec<String>,
}

/// `kind`'s comment on `repo`'s PR `pr_number` as it stands (see [`CommentAsItStands`]).
pub async fn comment_as_it_stands(
    core: &AppCore,
    repo: &Repo,
    pr_number: u64,
    kind: CommentKind,
) -> Result<CommentAsItStands, CodedError> {
    let (store, secrets) = (&core.store, &core.secrets);
    let place = CommentPlace {
        repo,
        pr_number,
        kind,
    };
    let read = read_back_from_github(store, secrets, place).await;
    let comment = store
        .comments()
        .managed_comment(repo.id, pr_number, kind)
        .await?
        .ok_or_else(|| CodedError {
            code: ErrorCode::NotFound,
            message: format!("no {kind} comment is known on #{pr_number}"),
            fix: None,
        })?;
    let history = store.comments().comment_versions(comment.id).await?;
    let version = history.last().cloned().ok_or_else(|| CodedError {
        code: ErrorCode::NotFound,
        message: format!("the {kind} comment has no text yet"),
        fix: None,
    })?;
    Ok(CommentAsItStands {
        content: read.content.unwrap_or_else(|| version.content.clone()),
        version,
        history,
        source: read.source,
        note: read.note,
        edited_on_github: read.edited_on_github,
        impostors: read.impostors,
    })
}

/// What reading a managed comment back from GitHub found.
struct ReadFromGithub {
    /// The content on GitHub; none when it was not read.
    content: Option<String>,
    source: EditorSource,
    note: Option<String>,
    edited_on_github: bool,
    impostors: Vec<String>,
}

/// Reads `place`'s comment back from GitHub when signed in and reachable (an edit made
/// there becomes a version first); else says why the local history is shown.
async fn read_back_from_github(
    store: &handoff::store::Store,
    secrets: &handoff::secrets::SecretStore,
    place: CommentPlace<'_>,
) -> ReadFromGithub {
    let kind = place.kind;
    let describe = |found: &[handoff::github::comment_publishing::Impostor]| -> Vec<String> {
        found
            .iter()
            .map(|impostor| impostor.describe(kind))
            .collect()
    };
    let local = |note: String, impostors: Vec<String>| ReadFromGithub {
        content: None,
        source: EditorSource::Local,
        note: Some(note),
        edited_on_github: false,
        impostors,
    };
    let github = match connect(store, secrets, RequestPolicy::default()).await {
        Ok(github) => github,
        Err(error) => return local(format!("{error}: showing the local history"), Vec::new()),
    };
    match read_back(&github, store, place).await {
        Ok(ReadBack::Present {
            content,
            edited_on_github,
            impostors,
            ..
        }) => ReadFromGithub {
            content: Some(content),
            source: EditorSource::Github,
            note: None,
            edited_on_github,
            impostors: describe(&impostors),
        },
        Ok(ReadBack::Missing { deleted, impostors }) => local(
            if deleted {
                format!("the {kind} comment was deleted on GitHub; its history is kept here")
            } else {
                format!("there is no {kind} comment on GitHub")
            },
            describe(&impostors),
        ),
        Err(error) => local(
            format!("GitHub could not be read ({error}): showing the local history"),
            Vec::new(),
        ),
    }
}

/// The comment as it stands, opened for editing.
pub async fn open_comment(
    core: &AppCore,
    repo_name: &str,
    pr_number: u64,
    kind_name: &str,
) -> Result<CommentEditor, CodedError> {
    let repo = repo(core, repo_name).await?;
    let kind = kind(kind_name)?;
    let stands = comment_as_it_stands(core, &repo, pr_number, kind).await?;
    let version = stands.version;
    let history = stands.history;
    let agent = history
        .iter()
        .rev()
        .find(|v| v.origin == VersionOrigin::Agent);
    Ok(CommentEditor {
        repo: repo.name.full_name(),
        pr_number,
        kind,
        header: kind.header(),
        content: version.whole_content().to_owned(),
        content_html: render_markdown(version.whole_content()),
        agent_original: agent.map(|v| v.whole_content().to_owned()),
        changes_from_agent: agent
            .map(|agent| changed_lines(line_changes(agent, &version)))
            .unwrap_or_default(),
        version: version.into(),
        history: history
            .into_iter()
            .map(CommentVersionRecord::from)
            .collect(),
        source: stands.source,
        note: stands.note,
    })
}

/// A pane's text being edited: its preview, and its changes against the agent's
/// original (when there is one).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EditPreview {
    pub html: String,
    pub changes_from_agent: Vec<ChangedLineRecord>,
}

pub fn preview_edit(text: &str, agent_original: Option<&str>) -> EditPreview {
    EditPreview {
        html: render_markdown(text),
        changes_from_agent: agent_original
            .map(|original| changed_lines(text_line_changes(original, text)))
            .unwrap_or_default(),
    }
}

/// One version in a comment's history.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub version_id: i64,
    pub number: u32,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::VersionOriginWords")
    )]
    pub origin: VersionOrigin,
    /// "the agent", "you", or "@login".
    pub written_by: String,
    /// How it came to be, in words: "written by the agent (run 12)", "your edit in
    /// Handoff", "edited on GitHub by @alice".
    pub how: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub run_id: Option<i64>,
    pub awaits_approval: bool,
    /// An edit of the owner's that was discarded before it reached GitHub.
    pub discarded: bool,
}

/// Every version of `repo`'s PR `pr_number` comment `kind`, oldest first.
pub async fn comment_history(
    core: &AppCore,
    repo_name: &str,
    pr_number: u64,
    kind_name: &str,
) -> Result<Vec<HistoryEntry>, CodedError> {
    let repo = repo(core, repo_name).await?;
    let kind = kind(kind_name)?;
    let Some(comment) = core
        .store
        .comments()
        .managed_comment(repo.id, pr_number, kind)
        .await?
    else {
        return Ok(Vec::new());
    };
    let discarded = core
        .store
        .outbox()
        .discarded_comment_versions(comment.id)
        .await?;
    Ok(core
        .store
        .comments()
        .comment_versions(comment.id)
        .await?
        .into_iter()
        .map(|version| HistoryEntry {
            version_id: version.id.0,
            number: version.number,
            origin: version.origin,
            written_by: version.written_by(),
            how: match version.origin {
                VersionOrigin::Agent => match version.run_id {
                    Some(run) => format!("written by the agent (run {run})"),
                    None => "written by the agent".to_owned(),
                },
                VersionOrigin::OwnerInHandoff => "your edit in Handoff".to_owned(),
                VersionOrigin::EditOnGithub => {
                    format!("edited on GitHub by {}", version.written_by())
                }
            },
            created_at: version.created_at,
            run_id: version.run_id.map(|run| run.0),
            awaits_approval: version.awaits_owner_approval(),
            discarded: discarded.contains(&version.id),
        })
        .collect())
}

/// Two versions side by side.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct VersionComparison {
    pub older: CommentVersionRecord,
    pub older_html: String,
    pub newer: CommentVersionRecord,
    pub newer_html: String,
    pub changes: Vec<ChangedLineRecord>,
}

/// Compares two versions of one comment (in either order: the older is shown first).
pub async fn compare_versions(
    core: &AppCore,
    first: i64,
    second: i64,
) -> Result<VersionComparison, CodedError> {
    let a = core
        .store
        .comments()
        .comment_version(CommentVersionId(first))
        .await?;
    let b = core
        .store
        .comments()
        .comment_version(CommentVersionId(second))
        .await?;
    if a.managed_comment_id != b.managed_comment_id {
        return Err(invalid_input(
            "those versions belong to two different comments".to_owned(),
        ));
    }
    let (older, newer) = if a.number <= b.number { (a, b) } else { (b, a) };
    Ok(VersionComparison {
        older_html: render_markdown(older.whole_content()),
        newer_html: render_markdown(newer.whole_content()),
        changes: changed_lines(line_changes(&older, &newer)),
        older: older.into(),
        newer: newer.into(),
    })
}

pub(super) fn save_result(outcome: EditOutcome) -> SaveResult {
    match outcome {
        EditOutcome::Sent { version } => SaveResult {
            outcome: SaveOutcome::Sent,
            message: format!("Saved as version {} and updated on GitHub", version.number),
            conflict: None,
        },
        EditOutcome::Queued { version, reason } => SaveResult {
            outcome: SaveOutcome::Queued,
            message: format!("Saved here as version {}; it waits in the outbox ({reason})", version.number),
            conflict: None,
        },
        EditOutcome::Discarded => SaveResult {
            outcome: SaveOutcome::Discarded,
            message: "Kept GitHub's text; your edit stays in the history".to_owned(),
            conflict: None,
        },
        EditOutcome::Conflict(conflict) => SaveResult {
            outcome: SaveOutcome::Conflict,
            message: "The comment changed on GitHub since you opened it. Nothing was overwritten: choose which text to keep."
                .to_owned(),
            conflict: Some(ConflictView {
                entry_id: conflict.entry.0,
                mine: conflict.mine.whole_content().to_owned(),
                mine_html: render_markdown(conflict.mine.whole_content()),
                theirs: conflict.theirs.whole_content().to_owned(),
                theirs_html: render_markdown(conflict.theirs.whole_content()),
                changes: changed_lines(line_changes(&conflict.theirs, &conflict.mine)),
            }),
        },
    }
}

/// Saves the owner's edit, based on version `based_on`.
pub async fn save_comment(
    core: &AppCore,
    repo_name: &str,
    pr_number: u64,
    kind_name: &str,
    content: &str,
    based_on: i64,
) -> Result<SaveResult, CodedError> {
    let repo = repo(core, repo_name).await?;
    let outcome = save_owner_text(
        core,
        &repo,
        pr_number,
        kind(kind_name)?,
        content,
        CommentVersionId(based_on),
    )
    .await?;
    Ok(save_result(outcome))
}

/// Saves the owner's `content` as a new version based on `based_on`, and sends it to
/// GitHub when signed in (else it waits in the outbox); a newer edit on GitHub is never
/// overwritten: the outcome is then a conflict for the owner to settle.
pub async fn save_owner_text(
    core: &AppCore,
    repo: &Repo,
    pr_number: u64,
    kind: CommentKind,
    content: &str,
    based_on: CommentVersionId,
) -> Result<EditOutcome, CodedError> {
    let place = CommentPlace {
        repo,
        pr_number,
        kind,
    };
    let github = signed_in_client(core).await;
    Ok(save_owner_edit(github.as_ref(), &core.store, place, content, based_on).await?)
}

/// Settles a conflict: keep mine (put it on GitHub) or take GitHub's.
pub async fn resolve_comment_conflict(
    core: &AppCore,
    entry_id: i64,
    keep_mine: bool,
) -> Result<SaveResult, CodedError> {
    let outcome = settle_conflict(core, OutboxEntryId(entry_id), keep_mine).await?;
    Ok(save_result(outcome))
}

/// Settles the conflict waiting in outbox entry `entry`: keep mine (put it on GitHub) or
/// take GitHub's.
pub async fn settle_conflict(
    core: &AppCore,
    entry: OutboxEntryId,
    keep_mine: bool,
) -> Result<EditOutcome, CodedError> {
    let github = signed_in_client(core).await;
    let choice = if keep_mine {
        ConflictChoice::KeepMine
    } else {
        ConflictChoice::TakeGithub
    };
    Ok(resolve_conflict(github.as_ref(), &core.store, entry, choice).await?)
}

/// The GitHub client when signed in; without one an edit waits in the outbox.
async fn signed_in_client(core: &AppCore) -> Option<handoff::github::GithubClient> {
    match core.github().await {
        Ok(client) => Some(client),
        Err(error) => {
            tracing::info!(code = %error.code, message = %error.message, "no GitHub client: the edit waits in the outbox");
            None
        }
    }
}
