//! `handoff qa review|plan|test|fix|auto OWNER/NAME PR`: the QA stages on a PR, in the
//! foreground, with the log printed as it goes; Ctrl-C cancels.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt as _;

use super::arguments::QaArguments;
use super::outcome::CliError;
use super::output::print_json;
use super::run_command::{pipeline, reconcile};
use crate::domain::LogStream;
use crate::pipeline::qa_run::{QaOptions, QaResult};
use crate::pipeline::run_log::follow_run_log;
use crate::store::Store;

pub async fn run(store: &Store, data_dir: &Path, arguments: QaArguments) -> Result<(), CliError> {
    let pipeline = pipeline(store, data_dir).await?;
    reconcile(&pipeline).await?;
    let options = arguments.options;
    let quiet = options.quiet || options.json;
    let begun = pipeline
        .begin_qa(
            &arguments.repo,
            arguments.pr,
            arguments.stage,
            QaOptions {
                backend: options.backend,
                timeout: options
                    .timeout_minutes
                    .map(|minutes| Duration::from_secs(minutes.max(1) * 60)),
                force: arguments.force,
            },
        )
        .await?;
    let top = begun.run_id();
    if !quiet {
        eprintln!(
            "run {top} started: {} on {} #{} ({}); Ctrl-C cancels",
            arguments.stage, arguments.repo, arguments.pr, begun.run.backend
        );
    }
    let driving = tokio::spawn(begun.drive());
    let printing = async {
        if quiet {
            return;
        }
        // The chain's own log, then each stage's as it starts.
        let mut followed = vec![top];
        let mut index = 0;
        while index < followed.len() {
            let run_id = followed[index];
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
            if index == 0 {
                if let Ok(children) = store.child_runs(top).await {
                    followed.extend(children.iter().map(|run| run.id));
                }
            }
            index += 1;
        }
    };
    let cancel_on_interrupt = async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ncancelling run {top}…");
            let _ = store.request_cancel(top).await;
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
