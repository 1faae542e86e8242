//! `handoff run` and `handoff iterate`: a code run in the foreground, its log printed as
//! it goes, Ctrl-C to cancel.

use std::path::Path;

use super::arguments::{IterateArguments, RunArguments, RunOptions};
use super::foreground_run::{drive_in_foreground, print_log, reconcile, timeout_from_minutes};
use super::outcome::CliError;
use super::output::print_json;
use super::text_input::read_text;
use crate::domain::FeedbackId;
use crate::github::client::RequestPolicy;
use crate::github::sign_in::connect;
use crate::pipeline::{CodeRunOptions, CodeRunResult, Pipeline, PipelineError, PipelineSettings};
use crate::secrets::SecretStore;
use crate::store::Store;

impl From<PipelineError> for CliError {
    fn from(error: PipelineError) -> Self {
        let hint = match &error {
            PipelineError::FeedbackAwaitsApproval { feedback_id, .. } => Some(format!(
                "read it (`handoff feedback show {feedback_id}`), then approve it with \
                 `handoff feedback approve {feedback_id}`"
            )),
            PipelineError::SetupIncomplete(line) => line
                .fix
                .as_ref()
                .and_then(super::doctor_command::fix_command)
                .map(|command| {
                    format!("`{command}`; `handoff doctor` checks everything a run needs")
                }),
            PipelineError::EditAwaitsApproval { kind, .. } => Some(format!(
                "read that version (`handoff comment history OWNER/NAME PR {kind}`), then approve \
                 it with `handoff comment approve OWNER/NAME PR {kind}`"
            )),
            PipelineError::OwnerEdits { kind, .. } => Some(format!(
                "read your edit (`handoff comment history OWNER/NAME PR {kind}`); run again with \
                 --force to replace it"
            )),
            _ => None,
        };
        let message = match hint {
            Some(hint) => format!("{error}\nhint: {hint}"),
            None => error.to_string(),
        };
        match error.code() {
            crate::error_code::ErrorCode::InvalidInput => CliError::Usage(message),
            _ => CliError::Failure(message),
        }
    }
}

/// The pipeline for this installation (signed in to GitHub).
pub async fn pipeline(store: &Store, data_dir: &Path) -> Result<Pipeline, CliError> {
    let secrets = SecretStore::os();
    let github = connect(store, &secrets, RequestPolicy::default()).await?;
    Ok(Pipeline {
        store: store.clone(),
        github,
        secrets,
        data_dir: data_dir.to_owned(),
        settings: PipelineSettings::configured(store).await?,
    })
}

pub async fn run(store: &Store, data_dir: &Path, arguments: RunArguments) -> Result<(), CliError> {
    execute(
        store,
        data_dir,
        arguments.feedback,
        arguments.message,
        arguments.options,
    )
    .await
}

pub async fn iterate(
    store: &Store,
    data_dir: &Path,
    arguments: IterateArguments,
) -> Result<(), CliError> {
    let message = read_text(arguments.message, arguments.file)?;
    execute(
        store,
        data_dir,
        arguments.feedback,
        Some(message),
        arguments.options,
    )
    .await
}

async fn execute(
    store: &Store,
    data_dir: &Path,
    feedback: i64,
    instructions: Option<String>,
    options: RunOptions,
) -> Result<(), CliError> {
    let pipeline = pipeline(store, data_dir).await?;
    reconcile(&pipeline).await?;
    let quiet = options.quiet || options.json;
    let begun = pipeline
        .begin_code_run(
            FeedbackId(feedback),
            CodeRunOptions {
                backend: options.backend,
                instructions,
                timeout: timeout_from_minutes(options.timeout_minutes),
            },
        )
        .await?;
    let run_id = begun.run_id();
    if !quiet {
        let quota = &begun.started.quota;
        let left = match quota.left {
            Some(left) => format!("{left} runs left this month"),
            None => "no run limit".to_owned(),
        };
        eprintln!(
            "run {run_id} started: {} of feedback {feedback} on {} ({left}); Ctrl-C cancels",
            begun.started.kind, begun.started.run.backend
        );
    }

    let printing = async {
        if !quiet {
            print_log(store, run_id).await;
        }
    };
    let report = drive_in_foreground(store, run_id, begun.drive(), printing).await?;
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
                        crate::github::feedback_pull_request::PullRequestAction::Opened => "opened",
                        crate::github::feedback_pull_request::PullRequestAction::Kept => "updated",
                        crate::github::feedback_pull_request::PullRequestAction::Reopened =>
                            "reopened",
                        crate::github::feedback_pull_request::PullRequestAction::Replaced =>
                            "opened (the old one could not be reopened)",
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
