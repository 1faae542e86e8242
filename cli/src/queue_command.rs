//! `handoff queue`: the run queue. `list` shows the runs going and the waiting ones by
//! place; `cancel` takes a run out of it; `add` queues code runs of several items (or
//! every new item of a repository) and drives them here as their slots come; `run`
//! ends the runs whose process is gone, takes over the queued runs whose process is
//! gone and drives them to their end, and says which wait for a process that may still
//! live.

use clap::Subcommand;
use futures::stream::{FuturesUnordered, StreamExt as _};

use super::command_error::CliError;
use super::output::{dash_if_none, one_line, print_json, Table};
use crate::shared_arguments::JsonFlag;
use handoff_api::core_types::QueueEntry;
use handoff_api::core_types::RunDriver;
use handoff_api::core_types::{Reconciled, WaitingOnDriver};
use handoff_api::core_types::{RepoName, RunStatus};
use handoff_api::run_queue;
use handoff_api::AppCore;

#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// The runs going and those waiting for a slot, by place.
    List(JsonFlag),
    /// Take a queued run out of the queue (a running one is asked to stop).
    Cancel {
        /// The run id.
        run: i64,
    },
    /// Queue a code run of each item (or of every new item of a repository) and drive
    /// them here as slots come free; prints a line as each ends, exits 1 if one failed
    /// or was refused.
    Add {
        /// Feedback ids.
        #[arg(required_unless_present = "all_new")]
        feedback: Vec<i64>,
        /// Every new item of this repository (OWNER/NAME), oldest first.
        #[arg(long, value_name = "REPO", conflicts_with = "feedback")]
        all_new: Option<RepoName>,
    },
    /// End the runs whose process is gone (a crash, a killed command), take over the
    /// queued runs whose process is gone and drive them here to their end; says which
    /// runs wait for a process that is still going, and when they would be taken.
    Run,
}

pub async fn run(core: &AppCore, command: QueueCommand) -> Result<(), CliError> {
    match command {
        QueueCommand::List(output) => list(core, output).await,
        QueueCommand::Cancel { run } => cancel(core, run).await,
        QueueCommand::Add { feedback, all_new } => add(core, feedback, all_new).await,
        QueueCommand::Run => take_over(core).await,
    }
}

/// `queue list`.
async fn list(core: &AppCore, output: JsonFlag) -> Result<(), CliError> {
    let (entries, limits) = run_queue::queue(core).await?;
    if output.json {
        return print_json(&entries);
    }
    if entries.is_empty() {
        println!("The run queue is empty.");
        return Ok(());
    }
    let mut table = Table::new(&["RUN", "STATE", "REPOSITORY", "WHAT", "BACKEND"]);
    for entry in &entries {
        table.row(vec![
            entry.run.id.to_string(),
            state_of(entry),
            entry.repo.clone(),
            what_of(entry),
            entry.run.backend.to_string(),
        ]);
    }
    print!("{}", table.render());
    let going = entries
        .iter()
        .filter(|entry| entry.run.status == RunStatus::Running)
        .count();
    println!(
        "{going} of {} slots taken (handoff config set queue.slots N to change)",
        limits.installation
    );
    Ok(())
}

fn state_of(entry: &QueueEntry) -> String {
    match entry.place {
        None => "running".to_owned(),
        Some(0) => "starting".to_owned(),
        Some(place) => format!("queued #{place}"),
    }
}

fn what_of(entry: &QueueEntry) -> String {
    let on = match (entry.run.feedback_id, entry.run.pr_number) {
        (Some(item), _) => format!("feedback {item}"),
        (None, Some(pr)) => format!("PR #{pr}"),
        (None, None) => "repository".to_owned(),
    };
    let title = dash_if_none(entry.title.as_deref().map(one_line));
    format!("{} of {on}: {title}", entry.run.stage)
}

/// `queue cancel`.
async fn cancel(core: &AppCore, run: i64) -> Result<(), CliError> {
    let run = handoff_api::runs::cancel_run(core, run).await?.run;
    match run.status {
        RunStatus::Cancelled => println!("run {} left the queue", run.id),
        _ => println!(
            "cancel asked for run {}: it leaves the queue, or its sandbox stops, in a moment",
            run.id
        ),
    }
    Ok(())
}

/// `queue add`.
async fn add(
    core: &AppCore,
    feedback: Vec<i64>,
    all_new: Option<RepoName>,
) -> Result<(), CliError> {
    let items = match &all_new {
        Some(repo) => run_queue::new_items_of(core, repo).await?,
        None => feedback,
    };
    if items.is_empty() {
        println!("No new item to run.");
        return Ok(());
    }
    let mut refused = 0;
    let driving = FuturesUnordered::new();
    for (item, begun) in run_queue::queue_code_runs_to_drive(core, &items).await? {
        match begun {
            Ok(begun) => {
                println!("feedback {item}: run {} queued", begun.run_id());
                driving.push(begun.drive());
            }
            Err(error) => {
                refused += 1;
                println!("feedback {item}: refused: {}", error.message);
            }
        }
    }
    let failed = drive_all(core, driving).await?;
    finish(refused + failed)
}

/// `queue run`.
async fn take_over(core: &AppCore) -> Result<(), CliError> {
    let picked = handoff_api::session::take_over_runs_left_behind(core).await?;
    say_runs_ended(&picked.ended);
    if picked.taken_over.is_empty() {
        let waiting = waiting_lines(&picked.waiting_on_others);
        if waiting.is_empty() {
            println!("No queued run waits for a process.");
        }
        for line in waiting {
            println!("{line}");
        }
        return Ok(());
    }
    let driving = FuturesUnordered::new();
    for run in picked.taken_over {
        println!("run {}: taken over", run.run_id());
        driving.push(run.drive());
    }
    let failed = drive_all(core, driving).await?;
    finish(failed)
}

/// A line for each run ended because its process was gone.
pub fn say_runs_ended(ended: &[Reconciled]) {
    for run in ended {
        // Said whole: it names the process that died and what became of the sandbox.
        println!(
            "run {} ended: {}",
            run.run_id,
            run.message.replace('\n', " ")
        );
    }
}

/// A line for each process that queued runs wait for: how many, and when they are
/// taken over.
fn waiting_lines(waiting: &[WaitingOnDriver]) -> Vec<String> {
    let mut by_driver: Vec<(Option<&RunDriver>, Vec<&WaitingOnDriver>)> = Vec::new();
    for run in waiting {
        match by_driver
            .iter_mut()
            .find(|(driver, _)| *driver == run.driver.as_ref())
        {
            Some((_, runs)) => runs.push(run),
            None => by_driver.push((run.driver.as_ref(), vec![run])),
        }
    }
    by_driver
        .into_iter()
        .map(|(driver, runs)| {
            let count = match runs.len() {
                1 => "1 queued run waits".to_owned(),
                many => format!("{many} queued runs wait"),
            };
            let who = driver.map_or_else(|| "a process".to_owned(), RunDriver::describe);
            let from = runs
                .iter()
                .map(|run| run.silent_from)
                .max()
                .unwrap_or_else(chrono::Utc::now)
                .with_timezone(&chrono::Local)
                .format("%H:%M:%S");
            if runs.iter().all(|run| run.seen_alive) {
                format!(
                    "{count} for {who}, which is still going: it drives them as their slots come, and if it stops they are taken over here at once (or from {from}, if it hangs)"
                )
            } else {
                format!(
                    "{count} for {who}, which cannot be looked at from here: they are taken over from {from} if it stays silent until then"
                )
            }
        })
        .collect()
}

/// Drives every run to its end, printing a line as each ends; how many did not succeed.
pub async fn drive_all(
    core: &AppCore,
    mut driving: FuturesUnordered<impl std::future::Future<Output = i64>>,
) -> Result<usize, CliError> {
    let mut failed = 0;
    while let Some(run_id) = driving.next().await {
        let run = handoff_api::runs::run(core, run_id).await?;
        if run.status != RunStatus::Succeeded {
            failed += 1;
        }
        let why = run
            .failure_message
            .as_deref()
            .map(|message| format!(": {}", one_line(message)))
            .unwrap_or_default();
        println!("run {run_id} {}{why}", run.status);
    }
    Ok(failed)
}

fn finish(not_succeeded: usize) -> Result<(), CliError> {
    match not_succeeded {
        0 => Ok(()),
        count => Err(CliError::Failure(format!(
            "{count} run(s) did not succeed or were refused"
        ))),
    }
}
