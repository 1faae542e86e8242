//! `handoff serve`: the daemon. Keeps what the open window does by itself going with no
//! window: the run queue looked after every few seconds (runs whose process died ended,
//! queued ones taken over and driven), and a sync with GitHub on a timer (with the due
//! lessons and the automatic updates it starts). Ctrl-C or SIGTERM stops it cleanly: it
//! starts nothing new, lets its runs under way end (for `--grace-seconds`, then cancels
//! them), and leaves its queued runs to the next process. `--install` writes a systemd
//! user unit that starts it at login, and starts it now.

use std::time::Duration;

use clap::Args;

use super::command_error::CliError;
use handoff_api::daemon::{serve, Daemon, DaemonError, ServeSettings};
use handoff_api::AppCore;

#[derive(Debug, Args)]
pub struct ServeArguments {
    /// Write a systemd user unit (~/.config/systemd/user/handoff.service) that runs this
    /// daemon at login, enable it and start it now, then exit (Linux).
    #[arg(long)]
    pub install: bool,
    /// Seconds between two syncs with GitHub [default: the `sync.interval_seconds`
    /// setting, or 300].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub sync_seconds: Option<u64>,
    /// Seconds the runs under way may go on once the daemon is told to stop, before they
    /// are cancelled [default: 120].
    #[arg(long, value_name = "SECONDS")]
    pub grace_seconds: Option<u64>,
}

pub async fn run(core: &AppCore, arguments: ServeArguments) -> Result<(), CliError> {
    let data_dir = core.data_dir.as_path();
    if arguments.install {
        return crate::systemd_unit::install(
            data_dir,
            &crate::systemd_unit::DaemonTimings {
                sync_seconds: arguments.sync_seconds,
                grace_seconds: arguments.grace_seconds,
            },
        );
    }
    let daemon = Daemon::take(data_dir).map_err(|error| match error {
        DaemonError::AlreadyServing { .. } | DaemonError::AlreadyServingUnknown(_) => {
            CliError::Failure(format!(
                "{error}\nhint: `handoff status` says what it is doing; stop it before you start another"
            ))
        }
        DaemonError::Lock { .. } => CliError::Failure(error.to_string()),
    })?;
    let defaults = ServeSettings::default();
    let settings = ServeSettings {
        sync_interval: arguments
            .sync_seconds
            .map(Duration::from_secs)
            .or(defaults.sync_interval),
        grace: arguments
            .grace_seconds
            .map_or(defaults.grace, Duration::from_secs),
        ..defaults
    };
    eprintln!(
        "handoff serve: serving {} (process {}): the queue every {} s, a sync every {} s; Ctrl-C or SIGTERM stops it",
        data_dir.display(),
        std::process::id(),
        settings.queue_interval.as_secs(),
        match settings.sync_interval {
            Some(interval) => interval,
            None => handoff_api::timed_sync::sync_interval(core).await,
        }
        .as_secs(),
    );
    serve(core.clone(), daemon, settings, told_to_stop()).await;
    eprintln!("handoff serve: stopped");
    Ok(())
}

/// Resolves at Ctrl-C, or SIGTERM where there is one (what systemd sends).
async fn told_to_stop() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => tracing::info!("the daemon got SIGTERM"),
                    _ = ctrl_c() => {}
                }
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "SIGTERM cannot be listened for; only Ctrl-C stops the daemon cleanly")
            }
        }
    }
    ctrl_c().await;
}

async fn ctrl_c() {
    match tokio::signal::ctrl_c().await {
        Ok(()) => tracing::info!("the daemon got Ctrl-C"),
        Err(error) => {
            tracing::warn!(%error, "Ctrl-C cannot be listened for; the daemon runs until it is killed");
            std::future::pending::<()>().await;
        }
    }
}
