//! `handoff followup add|include|list`.

use super::command_error::CliError;
use super::output::{print_json, short_time};
use super::terminal_text::printable;
use super::text_input::read_text;
use crate::shared_arguments::JsonFlag;
use clap::Subcommand;
use handoff_api::core_types::{FollowUpOrigin, FollowUpSource};
use handoff_api::feedback_items;
use handoff_api::AppCore;
use std::path::PathBuf;

pub async fn run(core: &AppCore, command: FollowUpCommand) -> Result<(), CliError> {
    match command {
        FollowUpCommand::Add {
            feedback,
            message,
            file,
            output,
        } => {
            let message = read_text(message, file)?;
            let (follow_up, count) =
                feedback_items::add_follow_up(core, feedback, &message).await?;
            if output.json {
                return print_json(&follow_up);
            }
            println!(
                "added follow-up {count} to feedback {feedback}; the next run (Update PR) includes it"
            );
            Ok(())
        }
        FollowUpCommand::Include { follow_up } => {
            let included = feedback_items::include_follow_up(core, follow_up).await?;
            if included.source == FollowUpSource::Owner && !included.candidate {
                println!("follow-up {follow_up} is the owner's: it is always in the prompt");
            } else if included.source == FollowUpSource::Owner {
                println!(
                    "your {} {follow_up} now goes into the next Update PR's prompt",
                    origin_words(included.origin)
                );
            } else {
                println!(
                    "follow-up {follow_up} from @{} now goes into the agent's prompts, marked as untrusted",
                    included.author_login.as_deref().unwrap_or("?")
                );
            }
            Ok(())
        }
        FollowUpCommand::List { feedback, output } => {
            let follow_ups = feedback_items::follow_ups(core, feedback).await?;
            if output.json {
                return print_json(&follow_ups);
            }
            if follow_ups.is_empty() {
                println!("feedback {feedback} has no follow-ups");
            }
            for follow_up in follow_ups {
                let author = follow_up
                    .author_login
                    .as_deref()
                    .map(|login| format!(" @{}", printable(login)))
                    .unwrap_or_default();
                let origin = if follow_up.origin == FollowUpOrigin::Thread {
                    String::new()
                } else {
                    format!(" ({} on the PR)", origin_words(follow_up.origin))
                };
                let state = match (follow_up.included_in_prompts, follow_up.source) {
                    (true, _) => "",
                    (false, FollowUpSource::Owner) => " [candidate, not in prompts: include it]",
                    (false, FollowUpSource::Visitor) => " [untrusted, not in prompts]",
                };
                println!(
                    "{}  {}  {}{author}{origin}{state}",
                    follow_up.id.0,
                    short_time(&follow_up.created_at),
                    follow_up.source
                );
                for line in follow_up.body.lines() {
                    println!("    {}", printable(line));
                }
            }
            Ok(())
        }
    }
}

fn origin_words(origin: FollowUpOrigin) -> &'static str {
    match origin {
        FollowUpOrigin::Thread => "follow-up",
        FollowUpOrigin::Review => "review",
        FollowUpOrigin::ReviewComment => "inline review comment",
        FollowUpOrigin::CheckRun => "failing check",
    }
}

#[derive(Debug, Subcommand)]
pub enum FollowUpCommand {
    /// Append the owner's message to a feedback item's thread (refused when MERGED).
    ///
    /// The next run of the item (`Update PR`) includes it in the agent's prompt.
    Add {
        /// The feedback id.
        feedback: i64,
        /// The message. "-" reads standard input.
        #[arg(
            short = 'm',
            long = "message",
            conflicts_with = "file",
            required_unless_present = "file"
        )]
        message: Option<String>,
        /// Read the message from a file.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Let a visitor's follow-up, or a candidate taken from the PR (a review, an inline
    /// comment, a failing check), into the next run's prompt. Anyone's text but yours is
    /// marked there as untrusted.
    Include {
        /// The follow-up's id (the first column of `handoff followup list`).
        follow_up: i64,
    },
    /// List a feedback item's thread in order.
    List {
        /// The feedback id.
        feedback: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
}
