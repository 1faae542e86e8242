//! `handoff feedback add|list|show|approve|dismiss|archive|restore`.

use clap::Subcommand;

use super::command_error::CliError;
use super::output::{dash_if_none, print_json, short_time, Table};
use super::terminal_text::printable;
use super::text_input::read_text;
use crate::shared_arguments::{feedback_statuses, parse_repo_name, JsonFlag};
use handoff_api::core_types::{ArchiveState, FeedbackSource};
use handoff_api::core_types::{FeedbackFilter, NewFeedback};
use handoff_api::core_types::{FeedbackStatus, RepoName};
use handoff_api::feedback_items::{self, ItemHistory};
use handoff_api::AppCore;
use std::path::PathBuf;

pub async fn run(core: &AppCore, command: FeedbackCommand) -> Result<(), CliError> {
    match command {
        FeedbackCommand::Add {
            repo,
            title,
            body,
            file,
            output,
        } => add(core, repo, title, read_text(body, file)?, output).await,
        FeedbackCommand::List {
            repo,
            status,
            search,
            archived,
            output,
        } => {
            let filter = FeedbackFilter {
                repo,
                status,
                search,
                archived: Some(archived),
            };
            list(core, &filter, output).await
        }
        FeedbackCommand::Approve { id } => {
            let feedback = feedback_items::approve_item(core, id).await?;
            if feedback.opened_by_visitor {
                println!(
                    "approved feedback {}: the agent may run on it; its text stays marked as \
                     untrusted in prompts and on the PR",
                    feedback.id
                );
            } else {
                println!("feedback {} is yours: it needed no approval", feedback.id);
            }
            Ok(())
        }
        FeedbackCommand::Dismiss { id } => put_away(core, id, Some(ArchiveState::Dismissed)).await,
        FeedbackCommand::Archive { id } => put_away(core, id, Some(ArchiveState::Archived)).await,
        FeedbackCommand::Restore { id } => put_away(core, id, None).await,
        FeedbackCommand::Show { id, output } => {
            let detail = feedback_items::item_history(core, id).await?;
            if output.json {
                return print_json(&detail);
            }
            print_detail(&detail);
            Ok(())
        }
    }
}

/// `feedback add`.
async fn add(
    core: &AppCore,
    repo: RepoName,
    title: Option<String>,
    body: String,
    output: JsonFlag,
) -> Result<(), CliError> {
    let feedback = feedback_items::add_item(
        core,
        &NewFeedback {
            repo,
            title,
            body,
            source: FeedbackSource::Cli,
            github_issue: None,
            opened_by_visitor: false,
        },
    )
    .await?;
    if output.json {
        return print_json(&feedback);
    }
    println!(
        "added feedback {} to {}: {} (branch {})",
        feedback.id, feedback.repo, feedback.title, feedback.head_branch
    );
    Ok(())
}

/// `feedback list`: the board's groups, each a table.
async fn list(core: &AppCore, filter: &FeedbackFilter, output: JsonFlag) -> Result<(), CliError> {
    let dashboard = feedback_items::board(core, filter).await?;
    if output.json {
        return print_json(&dashboard);
    }
    if dashboard.total == 0 {
        println!("no feedback matches");
        return Ok(());
    }
    for group in dashboard
        .groups
        .iter()
        .filter(|group| !group.cards.is_empty())
    {
        println!("{} ({})", group.label, group.cards.len());
        let mut table = Table::new(&[
            "  ID",
            "REPOSITORY",
            "PR",
            "FOLLOW-UPS",
            "LAST RUN",
            "TITLE",
        ]);
        for card in &group.cards {
            let pr = match (card.pr_number, card.pr_state) {
                (Some(number), Some(state)) => format!("#{number} {state}"),
                (Some(number), None) => format!("#{number}"),
                _ => "-".to_owned(),
            };
            let last_run = card
                .last_run
                .as_ref()
                .map(|run| match run.instead_of {
                    // Not in the repository's own sandbox: say where it went.
                    Some(_) => format!("{} {} on {}", run.stage, run.status, run.backend),
                    None => format!("{} {}", run.stage, run.status),
                })
                .unwrap_or_else(|| "-".to_owned());
            let title = match card.archived_as {
                Some(state) => format!("[{}] {}", state.label(), card.title),
                None => card.title.clone(),
            };
            table.row(vec![
                format!("  {}", card.feedback_id),
                card.repo.clone(),
                pr,
                card.follow_up_count().to_string(),
                last_run,
                title,
            ]);
        }
        print!("{}", table.render());
        println!();
    }
    Ok(())
}

/// `feedback dismiss|archive|restore`.
async fn put_away(core: &AppCore, id: i64, state: Option<ArchiveState>) -> Result<(), CliError> {
    let (item, changed) = feedback_items::put_item_away(core, id, state).await?;
    match (changed, item.archived_as) {
        (false, Some(state)) => println!("feedback {id} was already {}", state.label()),
        (false, None) => println!("feedback {id} is on the board already"),
        (true, Some(state)) => println!(
            "feedback {id} is {} and off the board; its history stays \
             (`handoff feedback list --archived` lists it, `handoff feedback restore {id}` puts it back)",
            state.label()
        ),
        (true, None) => println!("feedback {id} is back on the board, {}", item.status),
    }
    Ok(())
}

fn print_detail(detail: &ItemHistory) {
    let feedback = &detail.feedback;
    println!(
        "feedback {} · {} · {}",
        feedback.id, feedback.repo, feedback.status
    );
    println!("title:   {}", feedback.title);
    println!("branch:  {}", feedback.head_branch);
    println!("PR:      {}", dash_if_none(feedback.pr_url.as_deref()));
    println!("source:  {}", feedback.source);
    if feedback.opened_by_visitor {
        let author = feedback.github_issue_author.as_deref().unwrap_or("someone");
        match feedback.approved_at {
            Some(at) => println!(
                "opened by @{author}, not you: untrusted text (approved {})",
                short_time(&at)
            ),
            None => println!(
                "opened by @{author}, not you: untrusted text, waiting for your approval \
                 (`handoff feedback approve {}`)",
                feedback.id
            ),
        }
    }
    println!("created: {}", short_time(&feedback.created_at));
    if let (Some(state), Some(at)) = (feedback.archived_as, feedback.archived_at) {
        println!("off the board: {} {}", state.label(), short_time(&at));
    }
    println!();
    for line in printable(&feedback.body).lines() {
        println!("    {line}");
    }
    println!();
    print_history(detail);
    print_follow_ups(detail);
    print_runs(detail);
}

/// The item's status and archive history.
fn print_history(detail: &ItemHistory) {
    println!("history:");
    for change in &detail.status_history {
        let from = change.from.map(|s| s.to_string()).unwrap_or_default();
        let arrow = if from.is_empty() {
            String::new()
        } else {
            format!("{from} → ")
        };
        let run = change
            .run_id
            .map(|r| format!(" (run {r})"))
            .unwrap_or_default();
        println!(
            "  {}  {arrow}{}  {}{run}",
            short_time(&change.at),
            change.to,
            change.event
        );
    }
    for change in &detail.archive_history {
        let what = match change.archived_as {
            Some(state) => format!("off the board: {}", state.label()),
            None => "back on the board".to_owned(),
        };
        println!(
            "  {}  {what}  (by {})",
            short_time(&change.changed_at),
            change.changed_by
        );
    }
}

/// The item's follow-ups, each with who wrote it and whether prompts read it.
fn print_follow_ups(detail: &ItemHistory) {
    println!();
    if detail.follow_ups.is_empty() {
        println!("follow-ups: none");
    } else {
        println!("follow-ups:");
        for follow_up in &detail.follow_ups {
            let who = match (&follow_up.author_login, follow_up.source) {
                _ if follow_up.automatic => "Handoff, for an automatic update".to_owned(),
                (Some(login), source) => format!("{source} @{login}"),
                (None, source) => source.to_string(),
            };
            let untrusted = if follow_up.included_in_prompts {
                ""
            } else {
                " [untrusted, not in prompts]"
            };
            println!("  {}  {who}{untrusted}", short_time(&follow_up.created_at));
            for line in printable(&follow_up.body).lines() {
                println!("      {line}");
            }
        }
    }
}

/// The item's runs and automatic updates.
fn print_runs(detail: &ItemHistory) {
    println!();
    if detail.runs.is_empty() {
        println!("runs: none");
    } else {
        println!("runs:");
        for run in &detail.runs {
            println!(
                "  run {}  {} {} on {}  {}",
                run.id,
                run.stage,
                run.status,
                run.backend,
                short_time(&run.created_at)
            );
            if let Some(because) = &run.started_because {
                println!("      started by itself because {because}");
            }
        }
    }
    if !detail.automatic_updates.is_empty() {
        println!();
        println!("automatic updates:");
        for update in &detail.automatic_updates {
            let run = update
                .run_id
                .map(|run| format!(" (run {run})"))
                .unwrap_or_default();
            println!(
                "  {}  {}{run}: {}",
                short_time(&update.created_at),
                update.decision,
                update
                    .reason
                    .as_deref()
                    .unwrap_or("waits for the item's run to end")
            );
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum FeedbackCommand {
    /// Add a feedback item (status NEW). The body is the argument, --file, or stdin with "-".
    Add {
        /// The repository the feedback is for.
        #[arg(long, value_parser = parse_repo_name)]
        repo: RepoName,
        /// A short title [default: the body's first line].
        #[arg(long)]
        title: Option<String>,
        /// What should change. "-" reads standard input.
        #[arg(conflicts_with = "file", required_unless_present = "file")]
        body: Option<String>,
        /// Read the body from a file.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// List feedback items grouped by status, as the dashboard shows them.
    List {
        /// Only this repository's items.
        #[arg(long, value_parser = parse_repo_name)]
        repo: Option<RepoName>,
        /// Only items in this status.
        #[arg(long, value_parser = feedback_statuses(), ignore_case = true)]
        status: Option<FeedbackStatus>,
        /// Only items whose title, body, branch, repository or PR number match.
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        /// The items off the board instead (closed on GitHub, dismissed, archived).
        #[arg(long)]
        archived: bool,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Show one item with its status history, follow-up thread and runs.
    Show {
        /// The feedback id (the number in the first column of `handoff feedback list`).
        id: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Let the agent run on an item someone else opened on GitHub.
    ///
    /// An issue opened by anyone but you is untrusted text: the agent does not run on it
    /// until you approve it, and even then it reaches the prompt and the PR fenced and
    /// marked as untrusted.
    Approve {
        /// The feedback id.
        id: i64,
    },
    /// Take an item off the board as one you will not act on; its thread, runs and
    /// history stay, `list --archived` shows it, `restore` puts it back.
    Dismiss {
        /// The feedback id.
        id: i64,
    },
    /// Take an item off the board as done with; its thread, runs and history stay,
    /// `list --archived` shows it, `restore` puts it back.
    Archive {
        /// The feedback id.
        id: i64,
    },
    /// Put a dismissed, archived or closed item back on the board.
    Restore {
        /// The feedback id.
        id: i64,
    },
}
