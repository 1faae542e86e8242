//! `handoff comment show|edit|history|diff|approve|resolve`: the managed PR comments.

use clap::{Args, Subcommand};
use serde::Serialize;

use super::command_error::CliError;
use super::output::{dash_if_none, one_line, print_json, short_time, Table};
use super::terminal_text::printable;
use super::text_input::read_text;
use crate::shared_arguments::{parse_repo_name, words_of, JsonFlag};
use handoff_api::comment_versions::{
    approve_version, known_comment, unified_diff, version_label, waiting_conflict, KnownComment,
};
use handoff_api::comments::{comment_as_it_stands, save_owner_text, settle_conflict, EditorSource};
use handoff_api::core_types::{CommentKind, CommentVersion, EditOutcome, Repo, RepoName};
use handoff_api::repositories::repository;
use handoff_api::AppCore;
use std::path::PathBuf;

#[derive(Debug, Serialize)]
struct Shown {
    /// "github" when read from GitHub just now, "local" when from the history.
    source: &'static str,
    content: String,
    version: CommentVersion,
    edited_on_github: bool,
    note: Option<String>,
    /// Comments by other people that carry this comment's marker, described.
    impostors: Vec<String>,
}

/// The comment as it stands, as the window shows it too (the application API's one use
/// case): read back from GitHub when possible, else the newest local version with a
/// note saying why.
async fn current(core: &AppCore, repo: &Repo, address: &CommentAddress) -> Result<Shown, CliError> {
    let stands = comment_as_it_stands(core, repo, address.pr, address.kind).await?;
    Ok(Shown {
        source: match stands.source {
            EditorSource::Github => "github",
            EditorSource::Local => "local",
        },
        content: stands.content,
        version: stands.version,
        edited_on_github: stands.edited_on_github,
        note: stands.note,
        impostors: stands.impostors,
    })
}

async fn repo_of(core: &AppCore, address: &CommentAddress) -> Result<Repo, CliError> {
    Ok(repository(core, &address.repo).await?)
}

/// The comment at `address` as the local history knows it, or a clear error.
async fn known(core: &AppCore, address: &CommentAddress) -> Result<KnownComment, CliError> {
    let repo = repo_of(core, address).await?;
    Ok(known_comment(core, &repo, address.pr, address.kind).await?)
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

pub async fn run(core: &AppCore, command: CommentCommand) -> Result<(), CliError> {
    match command {
        CommentCommand::Show {
            address,
            raw,
            output,
        } => show(core, address, raw, output).await,
        CommentCommand::Edit { address, file } => edit(core, address, file).await,
        CommentCommand::History { address, output } => history(core, address, output).await,
        CommentCommand::Diff { address, from, to } => diff(core, address, from, to).await,
        CommentCommand::Approve { address, version } => approve(core, address, version).await,
        CommentCommand::Resolve {
            address,
            keep_mine,
            take_github: _,
        } => resolve(core, address, keep_mine).await,
    }
}

/// `comment show`.
async fn show(
    core: &AppCore,
    address: CommentAddress,
    raw: bool,
    output: JsonFlag,
) -> Result<(), CliError> {
    let repo = repo_of(core, &address).await?;
    let shown = current(core, &repo, &address).await?;
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
        eprintln!("note: {impostor}");
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

/// `comment edit`.
async fn edit(
    core: &AppCore,
    address: CommentAddress,
    file: Option<PathBuf>,
) -> Result<(), CliError> {
    let repo = repo_of(core, &address).await?;
    let base = current(core, &repo, &address).await?;
    let new_content = match file {
        Some(path) if path.as_os_str() == "-" => read_text(Some("-".to_owned()), None)?,
        Some(path) => read_text(None, Some(path))?,
        None => edit_in_editor(base.version.whole_content())?,
    };
    if new_content.trim_end() == base.version.whole_content().trim_end() {
        println!("no change: nothing saved");
        return Ok(());
    }
    let outcome = save_owner_text(
        core,
        &repo,
        address.pr,
        address.kind,
        &new_content,
        base.version.id,
    )
    .await?;
    report_edit(outcome, &address)
}

/// `comment history`.
async fn history(
    core: &AppCore,
    address: CommentAddress,
    output: JsonFlag,
) -> Result<(), CliError> {
    let KnownComment {
        comment,
        versions,
        discarded,
    } = known(core, &address).await?;
    if output.json {
        return print_json(&versions);
    }
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

/// `comment diff`.
async fn diff(
    core: &AppCore,
    address: CommentAddress,
    from: Option<u32>,
    to: Option<u32>,
) -> Result<(), CliError> {
    let versions = known(core, &address).await?.versions;
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

/// `comment approve`.
async fn approve(
    core: &AppCore,
    address: CommentAddress,
    version: Option<u32>,
) -> Result<(), CliError> {
    let versions = known(core, &address).await?.versions;
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
    approve_version(core, chosen.id).await?;
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

/// `comment resolve`.
async fn resolve(core: &AppCore, address: CommentAddress, keep_mine: bool) -> Result<(), CliError> {
    let comment = known(core, &address).await?.comment;
    let conflict = waiting_conflict(core, &comment).await?.ok_or_else(|| {
        CliError::Failure(format!(
            "the {} comment has no conflict to settle",
            address.kind
        ))
    })?;
    let outcome = settle_conflict(core, conflict.id, keep_mine).await?;
    report_edit(outcome, &address)
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

/// Which managed comment: repository, PR number, kind.
#[derive(Debug, Args)]
pub struct CommentAddress {
    /// The repository (owner/name).
    #[arg(value_parser = parse_repo_name)]
    pub repo: RepoName,
    /// The pull request number.
    pub pr: u64,
    /// Which comment.
    #[arg(value_parser = words_of!(CommentKind))]
    pub kind: CommentKind,
}

#[derive(Debug, Subcommand)]
pub enum CommentCommand {
    /// Show the comment's content as the next stage reads it (from GitHub when signed in).
    Show {
        #[command(flatten)]
        address: CommentAddress,
        /// Show the whole body with its marker, header and time line.
        #[arg(long)]
        raw: bool,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Edit the content in $EDITOR (or take it from --file) and save it to GitHub.
    ///
    /// The edit is based on the version you saw; if the comment changed on GitHub since,
    /// nothing is overwritten: you see both and choose with `handoff comment resolve`.
    /// Offline, the edit waits in the outbox.
    Edit {
        #[command(flatten)]
        address: CommentAddress,
        /// Take the new content from this file ("-" for stdin) instead of opening $EDITOR.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
    },
    /// Every version: the agent's originals, each edit, by whom, when.
    History {
        #[command(flatten)]
        address: CommentAddress,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Compare two versions [default: the previous one with the newest].
    Diff {
        #[command(flatten)]
        address: CommentAddress,
        /// The older version's number (see `history`).
        from: Option<u32>,
        /// The newer version's number.
        to: Option<u32>,
    },
    /// Let a version someone else edited on GitHub into the next stage's prompt.
    ///
    /// A review or plan last edited on GitHub by anyone but you reaches no prompt until
    /// you approve that version (read it first with `history` or `show`).
    Approve {
        #[command(flatten)]
        address: CommentAddress,
        /// The version to approve [default: the newest].
        #[arg(long, value_name = "N")]
        version: Option<u32>,
    },
    /// Settle a conflict between your edit and an edit made on GitHub.
    Resolve {
        #[command(flatten)]
        address: CommentAddress,
        /// Put your text on GitHub (GitHub's stays in the history).
        #[arg(
            long,
            conflicts_with = "take_github",
            required_unless_present = "take_github"
        )]
        keep_mine: bool,
        /// Keep GitHub's text and drop your edit from the outbox (it stays in the history).
        #[arg(long)]
        take_github: bool,
    },
}
