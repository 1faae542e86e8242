//! A run in the terminal's foreground, shared by `handoff run`, `handoff iterate` and
//! `handoff qa`: runs a crash left behind are ended first, the log is printed as it is
//! written (the agent's stdout to stdout, the rest to stderr), and Ctrl-C asks the run
//! to cancel instead of leaving it behind.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt as _;

use super::command_error::CliError;
use super::terminal_text::printable;
use handoff_api::core_types::CodedError;
use handoff_api::core_types::LogStream;
use handoff_api::core_types::Reconciled;
use handoff_api::runs;
use handoff_api::AppCore;

/// Ends runs a crash left behind, saying so.
pub async fn reconcile(core: &AppCore) -> Result<(), CliError> {
    say_runs_ended(&runs::end_runs_left_behind(core).await?);
    Ok(())
}

/// Says which runs a crash left behind were ended.
pub fn say_runs_ended(ended: &[Reconciled]) {
    for reconciled in ended {
        eprintln!(
            "note: run {} was ended: {}",
            reconciled.run_id, reconciled.message
        );
    }
}

/// `--timeout-minutes` as a duration (at least a minute).
pub fn timeout_from_minutes(minutes: Option<u64>) -> Option<Duration> {
    minutes.map(|minutes| Duration::from_secs(minutes.max(1) * 60))
}

/// Prints the log of `run_id` as it is written, until the run ends.
pub async fn print_log(core: &AppCore, run_id: i64) {
    let mut log = Box::pin(runs::log_as_it_comes(core, run_id));
    while let Some(next) = log.next().await {
        let chunk = match next {
            Ok(chunk) => chunk,
            Err(error) => {
                let error = error.message;
                tracing::warn!(run = run_id, %error, "the run's log could not be read further");
                eprintln!("» the log of run {run_id} cannot be read further ({error}); the run goes on: see `handoff runs show {run_id}` and `handoff runs logs {run_id} --follow`");
                return;
            }
        };
        match chunk.stream {
            LogStream::Handoff => eprint!("» {}", printable(&chunk.text)),
            LogStream::Stderr => eprint!("{}", printable(&chunk.text)),
            LogStream::Stdout => print!("{}", printable(&chunk.text)),
        }
    }
}

/// Drives `driving` (the run `run_id`) to its end while `printing` shows it; Ctrl-C
/// asks the run to cancel and keeps waiting for its end.
pub async fn drive_in_foreground<Report>(
    core: &AppCore,
    run_id: i64,
    driving: impl Future<Output = Result<Report, CodedError>> + Send + 'static,
    printing: impl Future<Output = ()>,
) -> Result<Report, CliError>
where
    Report: Send + 'static,
{
    let driving = tokio::spawn(driving);
    let cancel_on_interrupt = async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ncancelling run {run_id}…");
            if let Err(error) = runs::ask_run_to_stop(core, run_id).await {
                let error = error.message;
                eprintln!("cannot cancel run {run_id}: {error}");
                tracing::warn!(run_id, %error, "cancelling on Ctrl-C failed");
            }
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
    Ok(report.map_err(|error| CliError::Failure(format!("the run's task failed: {error}")))??)
}
