//! `handoff outbox [send [ID] | discard ID]`: GitHub writes waiting to be sent, their
//! errors, sending them now and discarding one.

use clap::{Args, Subcommand};
use serde::Serialize;

use super::command_error::CliError;
use super::output::{dash_if_none, print_json, short_time, Table};
use crate::shared_arguments::JsonFlag;
use handoff_api::core_types::EditOutcome;
use handoff_api::core_types::OutboxEntry;
use handoff_api::outbox;
use handoff_api::AppCore;

#[derive(Debug, Serialize)]
struct OutboxLine {
    #[serde(flatten)]
    entry: OutboxEntry,
    target: String,
}

pub async fn run(core: &AppCore, arguments: OutboxArguments) -> Result<(), CliError> {
    match arguments.action {
        Some(OutboxAction::Send { id: Some(id) }) => {
            let outcome = outbox::send_waiting_write(core, id).await?;
            match outcome {
                EditOutcome::Sent { version } => {
                    println!("sent: version {} is on GitHub", version.number);
                    Ok(())
                }
                EditOutcome::Queued { reason, .. } => Err(CliError::Failure(format!(
                    "not sent, still waiting: {reason}"
                ))),
                EditOutcome::Conflict(conflict) => Err(CliError::Failure(format!(
                    "the comment changed on GitHub since the edit was made (entry {}); \
                     settle it with `handoff comment resolve`",
                    conflict.entry.0
                ))),
                EditOutcome::Discarded => Ok(()),
            }
        }
        Some(OutboxAction::Discard { id }) => {
            if outbox::discard_outbox_entry(core, id).await? {
                println!("discarded: entry {id} will not be sent; its text stays in the history");
            } else {
                println!("entry {id} was already sent or discarded");
            }
            Ok(())
        }
        Some(OutboxAction::Send { id: None }) => {
            let report = outbox::send_every_waiting_write(core).await?;
            if arguments.output.json {
                return print_json(&report);
            }
            println!(
                "{} sent, {} in conflict, {} still waiting, {} failed",
                report.sent, report.conflicts, report.postponed, report.failed
            );
            if let Some(reason) = report.stopped_because {
                return Err(CliError::Failure(format!("stopped: {reason}")));
            }
            Ok(())
        }
        None => list(core, arguments.output).await,
    }
}

/// The outbox: each write waiting for GitHub, with its tries and last error.
async fn list(core: &AppCore, output: JsonFlag) -> Result<(), CliError> {
    let lines: Vec<OutboxLine> = outbox::waiting_writes(core)
        .await?
        .into_iter()
        .map(|write| OutboxLine {
            target: match write.comment {
                Some((repo, pr_number, kind)) => {
                    format!("{repo} #{pr_number} {kind} comment")
                }
                None => "-".to_owned(),
            },
            entry: write.entry,
        })
        .collect();
    if output.json {
        return print_json(&lines);
    }
    if lines.is_empty() {
        println!("the outbox is empty: everything is on GitHub");
        return Ok(());
    }
    let mut table = Table::new(&[
        "ID",
        "STATE",
        "WHAT",
        "SAVED",
        "TRIES",
        "NEXT TRY",
        "LAST ERROR",
    ]);
    for line in lines {
        table.row(vec![
            line.entry.id.0.to_string(),
            line.entry.state.to_string(),
            line.target,
            short_time(&line.entry.created_at),
            line.entry.attempts.to_string(),
            short_time(&line.entry.next_attempt_at),
            dash_if_none(line.entry.last_error),
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

#[derive(Debug, Args)]
pub struct OutboxArguments {
    #[command(subcommand)]
    pub action: Option<OutboxAction>,
    #[command(flatten)]
    pub output: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum OutboxAction {
    /// Send pending writes now, without waiting for their backoff: every one, or only
    /// entry ID (and the earlier edits of its comment first). One GitHub refused is
    /// tried again.
    Send {
        /// The entry's id (the first column of `handoff outbox`).
        id: Option<i64>,
    },
    /// Never send entry ID: it leaves the outbox, and its text stays in the comment's
    /// history.
    Discard {
        /// The entry's id.
        id: i64,
    },
}
