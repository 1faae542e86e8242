//! `handoff sync`: mirror GitHub into the local store once; then, for each repository
//! that draws lessons by itself after N corrections and has reached its number, run
//! Suggest lessons in the foreground; then decide the automatic updates the sync found
//! reasons for (failing checks) and the owner's `@handoff` commands on GitHub, and drive
//! their runs to the end.
//! Runs whose process is gone are ended first, and queued runs whose process is gone
//! are taken over and driven to their end beside the automatic ones.

use super::command_error::CliError;
use super::output::print_json;
use super::queue_command::{drive_all, say_runs_ended};
use crate::shared_arguments::{parse_repo_name, JsonFlag};
use clap::Args;
use futures::stream::{FuturesUnordered, StreamExt as _};
use handoff_api::core_types::CodeRunReport;
use handoff_api::core_types::RepoName;
use handoff_api::session::{
    begin_due_lessons, begin_work_from_github, sync_with_github, take_over_runs_left_behind,
};
use handoff_api::AppCore;

/// What `--json` prints: the sync's report, and the lessons runs it started.
#[derive(serde::Serialize)]
struct SyncOutput<'a> {
    #[serde(flatten)]
    report: &'a handoff_api::core_types::SyncReport,
    lessons_runs: &'a [handoff_api::core_types::LessonsReport],
    /// What was decided about failing checks.
    automatic_updates: &'a [handoff_api::core_types::AutomaticUpdate],
    /// The automatic Update PR runs, driven to their end.
    automatic_runs: &'a [CodeRunReport],
    /// Runs whose process was gone, ended.
    ended_runs: &'a [handoff_api::core_types::Reconciled],
    /// Queued runs whose process was gone, taken over and driven to their end.
    taken_over_runs: &'a [i64],
    /// The owner's `@handoff` commands decided: taken, taken elsewhere, refused.
    commands: &'a [handoff_api::core_types::GithubCommand],
    /// The runs those commands began, driven to their end.
    command_runs: &'a [handoff_api::core_types::Run],
}

pub async fn run(core: &AppCore, arguments: SyncArguments) -> Result<(), CliError> {
    let report = sync_with_github(core, arguments.repo.as_ref()).await?;
    let json = arguments.output.json;
    // Runs a crash left behind hold no slot, and queued ones whose process is gone go
    // on here, beside the automatic updates.
    let picked = take_over_runs_left_behind(core).await?;
    if !json {
        say_runs_ended(&picked.ended);
    }
    let taken_over_runs: Vec<_> = picked.taken_over.iter().map(|run| run.run_id()).collect();
    let taken_over = FuturesUnordered::new();
    for run in picked.taken_over {
        if !json {
            println!("run {}: taken over", run.run_id());
        }
        taken_over.push(run.drive());
    }
    let lessons = run_due_lessons(core, json).await?;
    // Failing checks that update their PRs by themselves, and the owner's `@handoff`
    // comments on GitHub (claimed, so that one installation takes each): their runs go
    // together, each command answered on GitHub at its run's end.
    let work = begin_work_from_github(core).await?;
    if !json {
        say_work_from_github(&work.automatic_updates, &work.commands);
    }
    // The automatic runs go at once, as many as the queue's slots let.
    // Like the automatic runs, a taken-over run that does not succeed says so in its
    // line; the sync itself did not fail for it.
    let (automatic_runs, taken_over_ends, command_runs) = futures::future::join3(
        futures::future::join_all(work.automatic_runs.into_iter().map(|begun| begun.drive())),
        async {
            if json {
                taken_over.collect::<Vec<_>>().await;
                Ok(0)
            } else {
                drive_all(core, taken_over).await
            }
        },
        futures::future::join_all(work.command_runs.into_iter().map(|begun| begun.drive())),
    )
    .await;
    let command_runs: Vec<handoff_api::core_types::Run> =
        command_runs.into_iter().collect::<Result<_, _>>()?;
    let automatic_runs: Vec<CodeRunReport> =
        automatic_runs.into_iter().collect::<Result<_, _>>()?;
    taken_over_ends?;
    if json {
        print_json(&SyncOutput {
            report: &report,
            lessons_runs: &lessons,
            automatic_updates: &work.automatic_updates,
            automatic_runs: &automatic_runs,
            ended_runs: &picked.ended,
            taken_over_runs: &taken_over_runs,
            commands: &work.commands,
            command_runs: &command_runs,
        })?;
    } else {
        say_runs_from_github(&automatic_runs, &command_runs);
        say_report(&report);
    }
    if report.errors.is_empty() {
        Ok(())
    } else {
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        Err(CliError::Failure(format!(
            "{} of {} repositories could not be synced",
            report.errors.len(),
            report.repos
        )))
    }
}

/// Runs Suggest lessons in the foreground on each repository whose lessons are due.
async fn run_due_lessons(
    core: &AppCore,
    json: bool,
) -> Result<Vec<handoff_api::core_types::LessonsReport>, CliError> {
    let mut lessons = Vec::new();
    for begun in begin_due_lessons(core).await? {
        let repo = begun.repo_name().clone();
        if !json {
            println!(
                "lessons are due on {repo}: lessons run {} reads your corrections",
                begun.run_id()
            );
        }
        let lessons_run = begun.drive().await?;
        if !json {
            match (&lessons_run.run.failure_message, lessons_run.proposed.len()) {
                (Some(failure), _) => {
                    println!("lessons run {} failed: {failure}", lessons_run.run.id)
                }
                (None, proposed) => println!(
                    "lessons run {}: {proposed} proposed (`handoff lessons list {repo}`)",
                    lessons_run.run.id
                ),
            }
        }
        lessons.push(lessons_run);
    }
    Ok(lessons)
}

/// What was decided about failing checks, and about the owner's `@handoff` commands.
fn say_work_from_github(
    automatic_updates: &[handoff_api::core_types::AutomaticUpdate],
    commands: &[handoff_api::core_types::GithubCommand],
) {
    for update in automatic_updates {
        println!(
            "feedback {}: automatic update {}: {}",
            update.feedback_id,
            update.decision,
            update.reason.as_deref().unwrap_or_default()
        );
    }
    for command in commands {
        println!("{}", command_line(command));
    }
}

/// How the automatic update runs and the commands' runs ended.
fn say_runs_from_github(
    automatic_runs: &[CodeRunReport],
    command_runs: &[handoff_api::core_types::Run],
) {
    for report in automatic_runs {
        let run = &report.run;
        match &run.failure_message {
            Some(failure) => println!("automatic update run {} failed: {failure}", run.id),
            None => println!("automatic update run {} {}", run.id, run.status),
        }
    }
    for run in command_runs {
        match &run.failure_message {
            Some(failure) => println!("@handoff run {} failed: {failure}", run.id),
            None => println!("@handoff run {} {}", run.id, run.status),
        }
    }
}

/// The sync's report: what it found, the outbox, the requests it cost.
fn say_report(report: &handoff_api::core_types::SyncReport) {
    println!(
        "synced {} {}: {} new feedback, {} visitor follow-ups, {} status changes, {} comment edits found on GitHub, {} comments missing",
        report.repos,
        if report.repos == 1 { "repository" } else { "repositories" },
        report.new_feedback.len(),
        report.new_visitor_follow_ups,
        report.status_changes.len(),
        report.comment_edits_found,
        report.comments_missing,
    );
    for change in &report.status_changes {
        println!(
            "  feedback {}: {} → {}",
            change.feedback_id, change.from, change.to
        );
    }
    let outbox = &report.outbox;
    if outbox.sent + outbox.conflicts + outbox.postponed + outbox.failed > 0 {
        println!(
            "outbox: {} sent, {} in conflict, {} waiting, {} failed",
            outbox.sent, outbox.conflicts, outbox.postponed, outbox.failed
        );
    }
    println!(
        "requests: {} sent, {} answered 304 (free)",
        report.requests.sent, report.requests.not_modified
    );
}

/// A command's line: what it asked and what came of it.
fn command_line(command: &handoff_api::core_types::GithubCommand) -> String {
    let on = if command.on_pull_request {
        "PR"
    } else {
        "issue"
    };
    let came_to = match (command.run_id, &command.outcome) {
        (Some(run), _) => format!("run {run} begun"),
        (None, Some(outcome)) => outcome.clone(),
        (None, None) => command.state.to_string(),
    };
    format!(
        "feedback {}: @handoff {} on {on} #{}: {came_to}",
        command.feedback_id,
        command.ask.word(),
        command.thread_number
    )
}

#[derive(Debug, Args)]
pub struct SyncArguments {
    /// Only this repository.
    #[arg(long, value_parser = parse_repo_name)]
    pub repo: Option<RepoName>,
    #[command(flatten)]
    pub output: JsonFlag,
}
