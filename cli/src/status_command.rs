//! `handoff status`: whether a daemon serves this data folder and what it is doing (when
//! it last synced and how that went, the runs it drives), and the run queue in one line.

use serde::Serialize;

use super::command_error::CliError;
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff_api::daemon::{daemon_serving, DaemonState};
use handoff_api::run_queue::runs_going_and_waiting;
use handoff_api::AppCore;

#[derive(Serialize)]
struct Status {
    daemon: Option<DaemonState>,
    runs_going: usize,
    runs_queued: usize,
}

pub async fn run(core: &AppCore, output: JsonFlag) -> Result<(), CliError> {
    let daemon = daemon_serving(&core.data_dir);
    let (runs_going, runs_queued) = runs_going_and_waiting(core).await?;
    let status = Status {
        runs_going,
        runs_queued,
        daemon,
    };
    if output.json {
        return print_json(&status);
    }
    match &status.daemon {
        Some(daemon) => {
            let since = daemon.started_at.with_timezone(&chrono::Local);
            println!(
                "daemon: {} this data folder since {} (process {})",
                if daemon.stopping { "stopping, it served" } else { "serves" },
                since.format("%Y-%m-%d %H:%M"),
                daemon.pid
            );
            match (&daemon.last_sync_at, &daemon.last_sync) {
                (Some(at), Some(how)) => println!(
                    "last sync: {} ({how})",
                    at.with_timezone(&chrono::Local).format("%H:%M:%S")
                ),
                _ => println!("last sync: none yet"),
            }
            match daemon.driving.as_slice() {
                [] => println!("driving: no run"),
                runs => println!(
                    "driving: run {}",
                    runs.iter().map(i64::to_string).collect::<Vec<_>>().join(", run ")
                ),
            }
        }
        None => println!(
            "daemon: none serves this data folder (start one with `handoff serve`, or at every login with `handoff serve --install`)"
        ),
    }
    println!(
        "queue: {} going, {} waiting (`handoff queue list`)",
        status.runs_going, status.runs_queued
    );
    Ok(())
}
