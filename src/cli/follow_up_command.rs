//! `handoff followup add|list`.

use super::arguments::FollowUpCommand;
use super::outcome::CliError;
use super::output::{print_json, short_time};
use super::text_input::read_text;
use crate::domain::{FeedbackId, FollowUpId, FollowUpSource};
use crate::store::Store;

pub async fn run(store: &Store, command: FollowUpCommand) -> Result<(), CliError> {
    match command {
        FollowUpCommand::Add {
            feedback,
            message,
            file,
            output,
        } => {
            let message = read_text(message, file)?;
            let follow_up = store
                .add_owner_follow_up(FeedbackId(feedback), &message)
                .await?;
            if output.json {
                return print_json(&follow_up);
            }
            let count = store.follow_ups(FeedbackId(feedback)).await?.len();
            println!(
                "added follow-up {count} to feedback {feedback}; the next run (Update PR) includes it"
            );
            Ok(())
        }
        FollowUpCommand::Include { follow_up } => {
            let included = store
                .include_visitor_follow_up(FollowUpId(follow_up))
                .await?;
            if included.source == FollowUpSource::Owner {
                println!("follow-up {follow_up} is the owner's: it is always in the prompt");
            } else {
                println!(
                    "follow-up {follow_up} from @{} now goes into the agent's prompts, marked as untrusted",
                    included.author_login.as_deref().unwrap_or("?")
                );
            }
            Ok(())
        }
        FollowUpCommand::List { feedback, output } => {
            let follow_ups = store.follow_ups(FeedbackId(feedback)).await?;
            if output.json {
                return print_json(&follow_ups);
            }
            if follow_ups.is_empty() {
                println!("feedback {feedback} has no follow-ups");
            }
            for follow_up in follow_ups {
                let author = follow_up
                    .author_login
                    .map(|login| format!(" @{login}"))
                    .unwrap_or_default();
                let untrusted = if follow_up.included_in_prompts {
                    ""
                } else {
                    " [untrusted, not in prompts]"
                };
                println!(
                    "{}  {}{author}{untrusted}",
                    short_time(&follow_up.created_at),
                    follow_up.source
                );
                for line in follow_up.body.lines() {
                    println!("    {line}");
                }
            }
            Ok(())
        }
    }
}
