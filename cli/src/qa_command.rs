//! `handoff qa review|plan|test|fix|auto OWNER/NAME PR`: the QA stages on a PR, in the
//! foreground, with the log printed as it goes; Ctrl-C cancels.

use clap::Args;

use super::command_error::CliError;
use super::foreground_run::{drive_in_foreground, print_log, reconcile, timeout_from_minutes};
use super::output::print_json;
use crate::run_command::RunOptions;
use crate::shared_arguments::{parse_repo_name, qa_stages};
use handoff_api::core_types::{QaOptions, QaResult};
use handoff_api::core_types::{RepoName, Stage};
use handoff_api::pull_request_workspace::{begin_qa, stage_runs_of_chain};
use handoff_api::AppCore;

pub async fn run(core: &AppCore, arguments: QaArguments) -> Result<(), CliError> {
    reconcile(core).await?;
    let options = arguments.options;
    let quiet = options.quiet || options.json;
    let begun = begin_qa(
        core,
        &arguments.repo,
        arguments.pr,
        arguments.stage,
        QaOptions {
            backend: options.backend,
            timeout: timeout_from_minutes(options.timeout_minutes),
            force: arguments.force,
        },
    )
    .await?;
    let top = begun.run_id();
    if !quiet {
        eprintln!(
            "run {top} started: {} on {} #{} ({}); Ctrl-C cancels",
            arguments.stage,
            arguments.repo,
            arguments.pr,
            begun.run().backend
        );
    }
    let printing = async {
        if quiet {
            return;
        }
        // The chain's own log, then each stage's.
        print_log(core, top).await;
        match stage_runs_of_chain(core, top).await {
            Ok(children) => {
                for child in children {
                    print_log(core, child.id.0).await;
                }
            }
            Err(error) => {
                let error = error.message;
                eprintln!("the stages' logs cannot be read: {error}");
                tracing::warn!(run = top, %error, "reading the chain's stage runs");
            }
        }
    };
    let report = drive_in_foreground(core, top, begun.drive(), printing).await?;
    if options.json {
        print_json(&report)?;
    } else {
        for stage in &report.stages {
            let run = stage
                .run
                .as_ref()
                .map(|run| format!("run {}", run.id))
                .unwrap_or_else(|| "-".to_owned());
            match &stage.result {
                QaResult::Succeeded { detail } => println!("{}: {detail} ({run})", stage.stage),
                QaResult::Skipped { reason } => println!("{}: skipped, {reason}", stage.stage),
                QaResult::Failed { message, .. } => {
                    println!("{}: failed: {message} ({run})", stage.stage)
                }
                QaResult::Cancelled => println!("{}: cancelled ({run})", stage.stage),
            }
            if let Some(run) = &stage.run {
                for note in &run.notes {
                    println!("  note: {note}");
                }
            }
        }
    }
    if report.succeeded() {
        Ok(())
    } else {
        Err(CliError::Failure(format!("QA run {top} did not succeed")))
    }
}

#[derive(Debug, Args)]
pub struct QaArguments {
    /// The stage to run.
    #[arg(value_parser = qa_stages())]
    pub stage: Stage,
    /// The repository (owner/name).
    #[arg(value_parser = parse_repo_name)]
    pub repo: RepoName,
    /// The pull request number.
    pub pr: u64,
    /// Run even though the stage's comment carries your edits (they stay in the history).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub options: RunOptions,
}
