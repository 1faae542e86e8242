//! `handoff sync`: mirror GitHub into the local store once.

use super::command_error::CliError;
use super::output::print_json;
use crate::arguments::{parse_repo_name, JsonFlag};
use clap::Args;
use handoff::domain::RepoName;
use handoff::github::client::RequestPolicy;
use handoff::github::sign_in::connect;
use handoff::github::sync::sync;
use handoff::secrets::SecretStore;
use handoff::store::Store;

pub async fn run(store: &Store, arguments: SyncArguments) -> Result<(), CliError> {
    let client = connect(store, &SecretStore::os(), RequestPolicy::default()).await?;
    let report = sync(&client, store, arguments.repo.as_ref()).await?;
    if arguments.output.json {
        print_json(&report)?;
    } else {
        println!(
            "synced {} {}: {} new feedback, {} visitor follow-ups, {} status changes, {} comment edits found on GitHub, {} comments missing",
            report.repos,
            if report.repos == 1 { "repository" } else { "repositories" },
            report.new_feedback.len(),
            report.new_visitor_follow_ups,
            report.status_changes.len(),
            report.comment_edits_found,
            report.comments_missing,
        );
        for change in &report.status_changes {
            println!(
                "  feedback {}: {} → {}",
                change.feedback_id, change.from, change.to
            );
        }
        let outbox = &report.outbox;
        if outbox.sent + outbox.conflicts + outbox.postponed + outbox.failed > 0 {
            println!(
                "outbox: {} sent, {} in conflict, {} waiting, {} failed",
                outbox.sent, outbox.conflicts, outbox.postponed, outbox.failed
            );
        }
        println!(
            "requests: {} sent, {} answered 304 (free)",
            report.requests.sent, report.requests.not_modified
        );
    }
    if report.errors.is_empty() {
        Ok(())
    } else {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        Err(CliError::Failure(format!(
            "{} of {} repositories could not be synced",
            report.errors.len(),
            report.repos
        )))
    }
}

#[derive(Debug, Args)]
pub struct SyncArguments {
    /// Only this repository.
    #[arg(long, value_parser = parse_repo_name)]
    pub repo: Option<RepoName>,
    #[command(flatten)]
    pub output: JsonFlag,
}
