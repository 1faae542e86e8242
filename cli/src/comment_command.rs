//! `handoff comment show|edit|history|diff|approve|resolve`: the managed PR comments.

use serde::Serialize;

use super::arguments::{CommentAddress, CommentCommand};
use super::command_error::CliError;
use super::output::{dash_if_none, one_line, print_json, short_time, Table};
use super::terminal_text::printable;
use super::text_input::read_text;
use handoff::comment_diff::{unified_diff, version_label};
use handoff::domain::{CommentVersion, ManagedComment, OutboxState, Repo};
use handoff::github::client::{GithubClient, RequestPolicy};
use handoff::github::comment_publishing::{read_back, CommentPlace, ReadBack};
use handoff::github::owner_edits::{
    resolve_conflict, save_owner_edit, ConflictChoice, EditOutcome,
};
use handoff::github::sign_in::connect;
use handoff::github::GithubError;
use handoff::secrets::SecretStore;
use handoff::store::Store;

/// A client when signed in; `None` (with the reason) when not, so reading and editing
/// still work offline.
async fn client_if_signed_in(
    store: &Store,
) -> Result<(Option<GithubClient>, Option<String>), CliError> {
    match connect(store, &SecretStore::os(), RequestPolicy::default()).await {
        Ok(client) => Ok((Some(client), None)),
        Err(error @ (GithubError::NotSignedIn { .. } | GithubError::Secrets(_))) => {
            Ok((None, Some(error.to_string())))
        }
        Err(error) => Err(error.into()),
    }
}

#[derive(Debug, Serialize)]
struct Shown {
    /// "github" when read from GitHub just now, "local" when from the history.
    source: &'static str,
    content: String,
    version: CommentVersion,
    edited_on_github: bool,
    note: Option<String>,
    /// Comments by other people that carry this comment's marker.
    impostors: Vec<handoff::github::comment_publishing::Impostor>,
}

/// The comment as it stands: read back from GitHub when possible, else the newest
/// local version.
async fn current(
    store: &Store,
    client: Option<&GithubClient>,
    place: CommentPlace<'_>,
    offline_reason: Option<String>,
) -> Result<Shown, CliError> {
    let missing = |deleted: bool| {
        CliError::Failure(format!(
            "no {} comment on {} #{}{}",
            place.kind,
            place.repo.name,
            place.pr_number,
            if deleted {
                " (it was deleted on GitHub)"
            } else {
                ""
            }
        ))
    };
    let local_note = match client {
        Some(client) => match read_back(client, store, place).await {
            Ok(ReadBack::Present {
                content,
                version,
                edited_on_github,
                impostors,
            }) => {
                return Ok(Shown {
                    source: "github",
                    content,
                    version,
                    edited_on_github,
                    note: None,
                    impostors,
                })
            }
            Ok(ReadBack::Missing { deleted, impostors }) => {
                for impostor in &impostors {
                    eprintln!("note: {}", impostor.describe(place.kind));
                }
                return Err(missing(deleted));
            }
            Err(error) if error.is_transient() => format!("GitHub is unreachable ({error})"),
            Err(error) => return Err(error.into()),
        },
        None => offline_reason.unwrap_or_else(|| "not signed in".to_owned()),
    };
    let comment = store
        .managed_comment(place.repo.id, place.pr_number, place.kind)
        .await?
        .ok_or_else(|| missing(false))?;
    let version = store
        .latest_comment_version(comment.id)
        .await?
        .ok_or_else(|| missing(false))?;
    Ok(Shown {
        source: "local",
        content: version.content.clone(),
        note: Some(format!(
            "{local_note}: showing version {} from the local history",
            version.number
        )),
        version,
        edited_on_github: false,
        impostors: Vec::new(),
    })
}

async fn repo_of(store: &Store, address: &CommentAddress) -> Result<Repo, CliError> {
    Ok(store.repo_by_name(&address.repo).await?)
}

/// The comment at `address` as the local history knows it, or a clear error.
async fn known_comment(
    store: &Store,
    repo: &Repo,
    address: &CommentAddress,
) -> Result<ManagedComment, CliError> {
    store
        .managed_comment(repo.id, address.pr, address.kind)
        .await?
        .ok_or_else(|| {
            CliError::Failure(format!(
                "no {} comment is known on {} #{}",
                address.kind, repo.name, address.pr
            ))
        })
}

fn place<'a>(repo: &'a Repo, address: &CommentAddress) -> CommentPlace<'a> {
    CommentPlace {
        repo,
        pr_number: address.pr,
        kind: address.kind,
    }
}

/// Opens `content` in $VISUAL or $EDITOR and returns what the owner saved.
fn edit_in_editor(content: &str) -> Result<String, CliError> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_owned());
    let file = tempfile::Builder::new()
        .prefix("handoff-comment-")
        .suffix(".md")
        .tempfile()
        .map_err(|error| CliError::Failure(format!("cannot make a file to edit: {error}")))?;
    std::fs::write(file.path(), content)
        .map_err(|error| CliError::Failure(format!("cannot write the file to edit: {error}")))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("handoff-editor")
        .arg(file.path())
        .status()
        .map_err(|error| {
            CliError::Failure(format!("cannot start the editor {editor:?}: {error}"))
        })?;
    if !status.success() {
        return Err(CliError::Failure(format!(
            "the editor {editor:?} failed ({status}); nothing was saved"
        )));
    }
    std::fs::read_to_string(file.path())
        .map_err(|error| CliError::Failure(format!("cannot read the edited file: {error}")))
}

pub async fn run(store: &Store, command: CommentCommand) -> Result<(), CliError> {
    match command {
        CommentCommand::Show {
            address,
            raw,
            output,
        } => {
            let repo = repo_of(store, &address).await?;
            let (client, offline) = client_if_signed_in(store).await?;
            let shown = current(store, client.as_ref(), place(&repo, &address), offline).await?;
            if output.json {
                return print_json(&shown);
            }
            if let Some(note) = &shown.note {
                eprintln!("note: {note}");
            }
            if shown.edited_on_github {
                eprintln!(
                    "note: edited on GitHub since Handoff last saw it (now version {})",
                    shown.version.number
                );
            }
            for impostor in &shown.impostors {
                eprintln!("note: {}", impostor.describe(address.kind));
            }
            if shown.version.awaits_owner_approval() {
                eprintln!(
                    "note: version {} was last edited by {}, not you: it reaches no prompt until \
                     you approve it (`handoff comment approve {} {} {}`)",
                    shown.version.number,
                    shown.version.written_by(),
                    address.repo,
                    address.pr,
                    address.kind
                );
            }
            println!(
                "{}",
                printable(if raw {
                    &shown.version.body
                } else {
                    &shown.content
                })
            );
            Ok(())
        }
        CommentCommand::Edit { address, file } => {
            let repo = repo_of(store, &address).await?;
            let (client, offline) = client_if_signed_in(store).await?;
            let base = current(store, client.as_ref(), place(&repo, &address), offline).await?;
            let new_content = match file {
                Some(path) if path.as_os_str() == "-" => read_text(Some("-".to_owned()), None)?,
                Some(path) => read_text(None, Some(path))?,
                None => edit_in_editor(base.version.whole_content())?,
            };
            if new_content.trim_end() == base.version.whole_content().trim_end() {
                println!("no change: nothing saved");
                return Ok(());
            }
            let outcome = save_owner_edit(
                client.as_ref(),
                store,
                place(&repo, &address),
                &new_content,
                base.version.id,
            )
            .await?;
            report_edit(outcome, &address)
        }
        CommentCommand::History { address, output } => {
            let repo = repo_of(store, &address).await?;
            let comment = known_comment(store, &repo, &address).await?;
            let versions = store.comment_versions(comment.id).await?;
            if output.json {
                return print_json(&versions);
            }
            let discarded = store.discarded_comment_versions(comment.id).await?;
            let mut table = Table::new(&[
                "VERSION",
                "BY",
                "WHO",
                "TRUST",
                "WHEN",
                "RUN",
                "BASED ON",
                "CHARS",
                "FIRST LINE",
            ]);
            let number_of = |id| {
                versions
                    .iter()
                    .find(|v| v.id == id)
                    .map(|v: &CommentVersion| v.number)
            };
            for version in &versions {
                table.row(vec![
                    version.number.to_string(),
                    version.origin.to_string(),
                    dash_if_none(version.author_login.as_deref()),
                    match (version.edited_by_other, version.approved_at) {
                        (false, _) => "-".to_owned(),
                        (true, None) => "not yours: awaits approval".to_owned(),
                        (true, Some(_)) => "not yours: approved".to_owned(),
                    },
                    short_time(&version.created_at),
                    dash_if_none(version.run_id),
                    dash_if_none(version.based_on.and_then(number_of)),
                    version.whole_content().chars().count().to_string(),
                    format!(
                        "{}{}",
                        if discarded.contains(&version.id) {
                            "[discarded] "
                        } else {
                            ""
                        },
                        one_line(&printable(
                            version.whole_content().lines().next().unwrap_or_default(),
                        ))
                    ),
                ]);
            }
            print!("{}", table.render());
            if comment.missing_since.is_some() {
                println!("(the comment is gone from GitHub; its history stays here)");
            }
            Ok(())
        }
        CommentCommand::Diff { address, from, to } => {
            let repo = repo_of(store, &address).await?;
            let comment = known_comment(store, &repo, &address).await?;
            let versions = store.comment_versions(comment.id).await?;
            let newest = versions.last().map(|v| v.number).unwrap_or(0);
            let to = to.unwrap_or(newest);
            let from = from.unwrap_or(to.saturating_sub(1).max(1));
            let find = |number: u32| {
                versions.iter().find(|v| v.number == number).ok_or_else(|| {
                    CliError::Usage(format!(
                        "no version {number}: this comment has versions 1 to {newest}"
                    ))
                })
            };
            let (old, new) = (find(from)?, find(to)?);
            let diff = unified_diff(old, new);
            if diff.is_empty() {
                println!(
                    "{} and {} have the same content",
                    version_label(old),
                    version_label(new)
                );
            } else {
                print!("{diff}");
            }
            Ok(())
        }
        CommentCommand::Approve { address, version } => {
            let repo = repo_of(store, &address).await?;
            let comment = known_comment(store, &repo, &address).await?;
            let versions = store.comment_versions(comment.id).await?;
            let newest = versions.last().map(|v| v.number).unwrap_or(0);
            let number = version.unwrap_or(newest);
            let chosen = versions
                .iter()
                .find(|v| v.number == number)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "no version {number}: this comment has versions 1 to {newest}"
                    ))
                })?;
            if !chosen.edited_by_other {
                println!(
                    "version {number} is from {}: it needed no approval",
                    chosen.written_by()
                );
                return Ok(());
            }
            store.approve_comment_version(chosen.id).await?;
            println!(
                "approved version {number} (by {}): the next stage may read it",
                chosen.written_by()
            );
            if number != newest {
                println!(
                    "note: the comment's newest version is {newest}; a stage reads the text on \
                     GitHub now"
                );
            }
            Ok(())
        }
        CommentCommand::Resolve {
            address,
            keep_mine,
            take_github: _,
        } => {
            let repo = repo_of(store, &address).await?;
            let comment = known_comment(store, &repo, &address).await?;
            let conflict = store
                .unsent_outbox_entries_of_comment(comment.id)
                .await?
                .into_iter()
                .find(|entry| entry.state == OutboxState::Conflict)
                .ok_or_else(|| {
                    CliError::Failure(format!(
                        "the {} comment has no conflict to settle",
                        address.kind
                    ))
                })?;
            let (client, _) = client_if_signed_in(store).await?;
            let choice = if keep_mine {
                ConflictChoice::KeepMine
            } else {
                ConflictChoice::TakeGithub
            };
            let outcome = resolve_conflict(client.as_ref(), store, conflict.id, choice).await?;
            report_edit(outcome, &address)
        }
    }
}

fn report_edit(outcome: EditOutcome, address: &CommentAddress) -> Result<(), CliError> {
    match outcome {
        EditOutcome::Sent { version } => {
            println!(
                "saved version {} and updated the comment on GitHub",
                version.number
            );
            Ok(())
        }
        EditOutcome::Queued { version, reason } => {
            println!(
                "saved version {} here; it waits in the outbox and is sent later ({reason})",
                version.number
            );
            Ok(())
        }
        EditOutcome::Discarded => {
            println!("kept GitHub's text; your edit stays in the history");
            Ok(())
        }
        EditOutcome::Conflict(conflict) => {
            println!(
                "The comment changed on GitHub since you loaded it, so nothing was overwritten.\n\
                 Yours is version {}; GitHub's is version {}. What GitHub has, compared with yours:\n",
                conflict.mine.number, conflict.theirs.number
            );
            print!("{}", unified_diff(&conflict.theirs, &conflict.mine));
            let command = format!(
                "handoff comment resolve {} {} {}",
                address.repo, address.pr, address.kind
            );
            println!("\nChoose: `{command} --keep-mine` or `{command} --take-github`");
            Err(CliError::Failure(
                "edit conflict: the comment changed on GitHub".to_owned(),
            ))
        }
    }
}
