//! `handoff run` and `handoff iterate`: a code run in the foreground, its log printed as
//! it goes, Ctrl-C to cancel.

use clap::Args;

use super::command_error::CliError;
use super::foreground_run::{drive_in_foreground, print_log, reconcile, timeout_from_minutes};
use super::output::print_json;
use super::text_input::read_text;
use crate::shared_arguments::words_of;
use handoff_api::core_types::PullRequestAction;
use handoff_api::core_types::SandboxBackend;
use handoff_api::core_types::{CodeRunOptions, CodeRunResult};
use handoff_api::AppCore;
use std::path::PathBuf;

pub async fn run(core: &AppCore, arguments: RunArguments) -> Result<(), CliError> {
    execute(
        core,
        arguments.feedback,
        arguments.message,
        arguments.options,
    )
    .await
}

pub async fn iterate(core: &AppCore, arguments: IterateArguments) -> Result<(), CliError> {
    let message = read_text(arguments.message, arguments.file)?;
    execute(core, arguments.feedback, Some(message), arguments.options).await
}

async fn execute(
    core: &AppCore,
    feedback: i64,
    instructions: Option<String>,
    options: RunOptions,
) -> Result<(), CliError> {
    reconcile(core).await?;
    let quiet = options.quiet || options.json;
    let begun = handoff_api::runs::begin_code_run(
        core,
        feedback,
        CodeRunOptions {
            backend: options.backend,
            instructions,
            timeout: timeout_from_minutes(options.timeout_minutes),
            automatic: None,
        },
    )
    .await?;
    let run_id = begun.run_id();
    if !quiet {
        let started = begun.started();
        let quota = &started.quota;
        let left = match quota.left {
            Some(left) => format!("{left} runs left this month"),
            None => "no run limit".to_owned(),
        };
        eprintln!(
            "run {run_id} queued: {} of feedback {feedback} on {} ({left}); Ctrl-C cancels",
            started.kind, started.run.backend
        );
    }

    let printing = async {
        if !quiet {
            print_log(core, run_id).await;
        }
    };
    let report = drive_in_foreground(core, run_id, begun.drive(), printing).await?;
    if options.json {
        print_json(&report)?;
    }
    match &report.result {
        CodeRunResult::Succeeded {
            pr_number,
            pr_url,
            action,
            commits,
        } => {
            if !options.json {
                println!(
                    "run {run_id} succeeded: {commits} commit(s); PR #{pr_number} {} — {pr_url}",
                    match action {
                        PullRequestAction::Opened => "opened",
                        PullRequestAction::Kept => "updated",
                        PullRequestAction::Reopened => "reopened",
                        PullRequestAction::Replaced => "opened (the old one could not be reopened)",
                    }
                );
            }
            Ok(())
        }
        CodeRunResult::Failed { message, .. } => {
            Err(CliError::Failure(format!("run {run_id} failed: {message}")))
        }
        CodeRunResult::Cancelled => Err(CliError::Failure(format!("run {run_id} was cancelled"))),
    }
}

#[derive(Debug, Args)]
pub struct RunOptions {
    /// Where the agent runs [default: the repository's backend].
    #[arg(long, value_name = "BACKEND", value_parser = words_of!(SandboxBackend))]
    pub backend: Option<SandboxBackend>,
    /// Wall-clock limit of this run in minutes [default: the repository's].
    #[arg(long, value_name = "MINUTES")]
    pub timeout_minutes: Option<u64>,
    /// Print no log while the run goes on, only how it ended.
    #[arg(long)]
    pub quiet: bool,
    /// Print how the run ended as JSON (implies --quiet).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArguments {
    /// The feedback id.
    pub feedback: i64,
    /// New instructions to send with the run (stored as a follow-up).
    #[arg(short = 'm', long = "message")]
    pub message: Option<String>,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Args)]
pub struct IterateArguments {
    /// The feedback id.
    pub feedback: i64,
    /// What to change ("-" reads standard input).
    #[arg(
        short = 'm',
        long = "message",
        conflicts_with = "file",
        required_unless_present = "file"
    )]
    pub message: Option<String>,
    /// Read the instructions from a file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub options: RunOptions,
}
