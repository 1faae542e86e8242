//! `handoff run` and `handoff iterate`: a code run in the foreground, its log printed as
//! it goes, Ctrl-C to cancel.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt as _;

use super::arguments::{IterateArguments, RunArguments, RunOptions};
use super::outcome::CliError;
use super::output::print_json;
use super::text_input::read_text;
use crate::domain::{FeedbackId, LogStream};
use crate::github::client::RequestPolicy;
use crate::github::sign_in::connect;
use crate::pipeline::reconcile::STALE_AFTER;
use crate::pipeline::run_log::follow_run_log;
use crate::pipeline::{CodeRunOptions, CodeRunResult, Pipeline, PipelineError, PipelineSettings};
use crate::secrets::SecretStore;
use crate::store::Store;

impl From<PipelineError> for CliError {
    fn from(error: PipelineError) -> Self {
        match error.code() {
            crate::error_code::ErrorCode::InvalidInput => CliError::Usage(error.to_string()),
            _ => CliError::Failure(error.to_string()),
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

/// Ends runs a crash left behind, saying so.
pub async fn reconcile(pipeline: &Pipeline) -> Result<(), CliError> {
    let stale_before =
        chrono::Utc::now() - chrono::Duration::from_std(STALE_AFTER).unwrap_or_default();
    for reconciled in pipeline.reconcile_abandoned_runs(stale_before).await? {
        eprintln!(
            "note: run {} was ended: {}",
            reconciled.run_id, reconciled.message
        );
    }
    Ok(())
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
                timeout: options
                    .timeout_minutes
                    .map(|minutes| Duration::from_secs(minutes.max(1) * 60)),
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

    let driving = tokio::spawn(begun.drive());
    let printing = async {
        if quiet {
            return;
        }
        let mut log = Box::pin(follow_run_log(
            store.clone(),
            run_id,
            Duration::from_millis(200),
        ));
        while let Some(Ok(chunk)) = log.next().await {
            match chunk.stream {
                LogStream::Handoff => eprint!("» {}", chunk.text),
                LogStream::Stderr => eprint!("{}", chunk.text),
                LogStream::Stdout => print!("{}", chunk.text),
            }
        }
    };
    let cancel_on_interrupt = async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ncancelling run {run_id}…");
            let _ = store.request_cancel(run_id).await;
        }
        std::future::pending::<()>().await;
    };
    let report = tokio::select! {
        report = async {
            let (report, ()) = tokio::join!(driving, printing);
            report
        } => report,
        () = cancel_on_interrupt => unreachable!("waiting for Ctrl-C never ends by itself"),
    };
    let report =
        report.map_err(|error| CliError::Failure(format!("the run's task failed: {error}")))??;
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
