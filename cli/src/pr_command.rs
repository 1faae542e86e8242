//! `handoff pr list|show`: the open pull requests the last sync mirrored, and one PR's
//! QA stages as the window's workspace shows them.

use super::command_error::CliError;
use super::output::{dash_if_none, print_json, short_time, Table};
use super::terminal_text::printable;
use crate::shared_arguments::{parse_repo_name, words_of, JsonFlag};
use clap::Subcommand;
use handoff_api::core_types::PullRequestFilter;
use handoff_api::core_types::{CheckStatus, RepoName};
use handoff_api::pull_request_workspace::workspace_in_the_mirror;
use handoff_api::pull_requests::open_pull_requests;
use handoff_api::AppCore;

pub async fn run(core: &AppCore, command: PrCommand) -> Result<(), CliError> {
    match command {
        PrCommand::List {
            repo,
            search,
            checks,
            output,
        } => list(core, repo, search, checks, output).await,
        PrCommand::Show { repo, pr, output } => show(core, repo, pr, output).await,
    }
}

/// `pr list`.
async fn list(
    core: &AppCore,
    repo: Option<RepoName>,
    search: Option<String>,
    checks: Option<CheckStatus>,
    output: JsonFlag,
) -> Result<(), CliError> {
    let (pulls, unreadable) = open_pull_requests(
        core,
        repo.as_ref(),
        PullRequestFilter {
            repo_id: None,
            search,
            checks,
            feedback: None,
        },
    )
    .await?;
    if output.json {
        return print_json(&pulls);
    }
    if pulls.is_empty() {
        println!("no open pull request is mirrored here: `handoff sync` reads them");
        return Ok(());
    }
    // Checks the token may not read say so, rather than "none".
    let mut table = Table::new(&[
        "REPO", "PR", "CHECKS", "UPDATED", "AUTHOR", "BRANCH", "FEEDBACK", "TITLE",
    ]);
    for pull in pulls {
        table.row(vec![
            pull.repo.full_name(),
            format!("#{}", pull.number),
            if unreadable.contains(&pull.repo_id) {
                "unreadable".to_owned()
            } else {
                pull.checks.to_string()
            },
            short_time(&pull.github_updated_at),
            dash_if_none(pull.author_login.as_deref().map(printable)),
            printable(&pull.head_ref),
            match (pull.feedback_id, pull.conflicts_with_base) {
                (Some(id), Some(true)) => format!("{id} (conflicts)"),
                (feedback, _) => dash_if_none(feedback.map(|id| id.to_string())),
            },
            printable(&pull.title),
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

/// `pr show`.
async fn show(core: &AppCore, repo: RepoName, pr: u64, output: JsonFlag) -> Result<(), CliError> {
    let workspace = workspace_in_the_mirror(core, &repo, pr).await?;
    if output.json {
        return print_json(&workspace);
    }
    let pull = &workspace.pull;
    println!(
        "{} #{}: {}\n{} → {}, checks {}",
        repo.name,
        pull.number,
        printable(&pull.title),
        printable(&pull.head_ref),
        pull.base_ref,
        pull.checks
    );
    if pull.conflicts_with_base == Some(true) {
        println!(
            "conflicts with {}: an Update PR adds commits and does not rebase; resolve it on GitHub or locally",
            pull.base_ref
        );
    }
    let mut table = Table::new(&["STAGE", "STATE", "LAST RUN", "QUOTA", "NOTE"]);
    for card in &workspace.stages {
        let mut note = Vec::new();
        if let Some(why) = &card.out_of_date {
            note.push(format!("out of date: {why}"));
        }
        if let Some(kind) = card.reads_your_edit {
            note.push(format!("reads your edit of the {kind} comment"));
        }
        if let Some(blocked) = &card.blocked {
            note.push(blocked.clone());
        }
        if let Some(run) = &card.last_run {
            note.extend(run.notes.iter().cloned());
        }
        table.row(vec![
            card.stage.to_string(),
            card.state.words().to_owned(),
            dash_if_none(
                card.last_run
                    .as_ref()
                    .map(|run| format!("{} ({})", run.id, run.status)),
            ),
            card.quota_units.to_string(),
            if note.is_empty() {
                "-".to_owned()
            } else {
                note.join("; ")
            },
        ]);
    }
    print!("{}", table.render());
    if let Some(results) = &workspace.test_results {
        println!("\ntest run {}:", results.run_id);
        for result in &results.results {
            println!(
                "  {} {}{}",
                if result.result.passed { "✓" } else { "✗" },
                printable(&result.result.name),
                result
                    .issue_number
                    .map(|issue| format!(" (issue #{issue})"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum PrCommand {
    /// Every open PR as the last sync mirrored it: author, branch, checks, the feedback
    /// item it was opened for.
    List {
        /// Only this repository's PRs.
        #[arg(long, value_parser = parse_repo_name)]
        repo: Option<RepoName>,
        /// Only PRs whose number, title, branch or author match all these words.
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        /// Only PRs whose checks stand so.
        #[arg(long, value_name = "STATUS", value_parser = words_of!(CheckStatus))]
        checks: Option<CheckStatus>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// One PR's QA stages: each one's state (not run, running, done, failed, edited by
    /// you, out of date), its last run and what it noted, and the latest test results.
    Show {
        /// The repository, as OWNER/NAME.
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// The PR's number.
        pr: u64,
        #[command(flatten)]
        output: JsonFlag,
    },
}
