//! `handoff runs`: logs, cancel, show, list, and a held run's commits and their approved
//! push.

use super::command_error::CliError;
use super::output::{dash_if_none, print_json, short_time, Table};
use super::terminal_text::printable;
use crate::shared_arguments::JsonFlag;
use crate::spend_command::{run_spend, steps_table};
use clap::Subcommand;
use futures::StreamExt as _;
use handoff_api::core_types::{FeedbackId, LogChunk, LogStream, Run};
use handoff_api::core_types::{RunFilter, RunTexts};
use handoff_api::runs;
use handoff_api::AppCore;

#[derive(Debug, serde::Serialize)]
struct RunDetail {
    run: Run,
    #[serde(flatten)]
    texts: RunTexts,
    /// The lessons its prompt carried, by id.
    lessons_carried: Vec<i64>,
}

pub async fn run(core: &AppCore, command: RunsCommand) -> Result<(), CliError> {
    match command {
        RunsCommand::Logs { run, follow } => logs(core, run, follow).await,
        RunsCommand::Cancel { run } => cancel(core, run).await,
        RunsCommand::Show {
            run,
            output,
            format,
        } => show(core, run, output, format).await,
        RunsCommand::Steps { run, output } => steps(core, run, output).await,
        RunsCommand::Held { run, output } => held(core, run, output).await,
        RunsCommand::ApprovePush { run, end } => approve_push(core, run, end).await,
        RunsCommand::List {
            feedback,
            active,
            limit,
            output,
        } => list(core, feedback, active, limit, output).await,
    }
}

/// `runs logs`.
async fn logs(core: &AppCore, run: i64, follow: bool) -> Result<(), CliError> {
    if follow {
        let mut log = Box::pin(runs::log_as_it_comes(core, run));
        while let Some(chunk) = log.next().await {
            print_chunk(&chunk?);
        }
        let run = runs::run(core, run).await?;
        eprintln!("run {} ended: {}", run.id, run.status);
    } else {
        for chunk in runs::run_log(core, run).await? {
            print_chunk(&chunk);
        }
    }
    Ok(())
}

/// `runs cancel`.
async fn cancel(core: &AppCore, run: i64) -> Result<(), CliError> {
    let cancelled = runs::cancel_run(core, run).await?;
    let run = cancelled.run;
    if run.status.is_active() {
        println!(
            "cancel asked for run {}: its sandbox is being stopped",
            run.id
        );
    } else {
        println!("run {} was cancelled", run.id);
    }
    super::foreground_run::say_runs_ended(&cancelled.runs_ended);
    Ok(())
}

/// `runs show`.
async fn show(core: &AppCore, run: i64, output: bool, format: JsonFlag) -> Result<(), CliError> {
    let runs::RunDetails {
        run,
        texts,
        lessons_carried: lessons,
    } = runs::run_details(core, run).await?;
    if format.json {
        return print_json(&RunDetail {
            run,
            texts,
            lessons_carried: lessons.iter().map(|lesson| lesson.id.0).collect(),
        });
    }
    if output {
        match &texts.output {
            Some(text) => println!("{}", printable(text)),
            None => return Err(CliError::Failure(format!("run {} has no output", run.id))),
        }
        return Ok(());
    }
    println!(
        "run {} · {} · {} on {}",
        run.id, run.stage, run.status, run.backend
    );
    println!("feedback: {}", dash_if_none(run.feedback_id));
    println!(
        "PR:       {}",
        dash_if_none(run.pr_number.map(|n| format!("#{n}")))
    );
    println!("agent:    {}", run.agent_preset);
    println!("created:  {}", short_time(&run.created_at));
    println!(
        "started:  {}",
        dash_if_none(run.started_at.as_ref().map(short_time))
    );
    println!(
        "finished: {}",
        dash_if_none(run.finished_at.as_ref().map(short_time))
    );
    println!("exit:     {}", dash_if_none(run.exit_code));
    println!("spend:    {}", run_spend(&run));
    if let Some(message) = &run.failure_message {
        println!(
            "failure:  {} ({})",
            printable(message),
            run.failure_code.map_or("-", |code| code.as_str())
        );
    }
    for note in &run.notes {
        println!("note:     {}", printable(note));
    }
    for lesson in &lessons {
        println!("lesson:   {} {}", lesson.id, printable(&lesson.rule));
    }
    if let Some(text) = &texts.output {
        println!(
            "output:   {} characters (`handoff runs show {} --output`)",
            text.chars().count(),
            run.id
        );
    }
    Ok(())
}

/// `runs steps`.
async fn steps(core: &AppCore, run: i64, output: JsonFlag) -> Result<(), CliError> {
    let steps = runs::run_steps(core, run).await?;
    if output.json {
        return print_json(&steps);
    }
    if steps.is_empty() {
        println!(
            "run {run} has no metered steps: no key forwarder stood between its agent and \
             the provider (E2B, or an agent with no key), or the agent called no model"
        );
        return Ok(());
    }
    print!("{}", steps_table(&steps));
    if steps.iter().any(|step| step.details_left_out) {
        println!("(the run's steps passed 5 MB: the later ones keep their figures only)");
    }
    Ok(())
}

/// `runs held`.
async fn held(core: &AppCore, run: i64, output: JsonFlag) -> Result<(), CliError> {
    let held = runs::held_commits_of(core, run).await?;
    if output.json {
        return print_json(&held);
    }
    println!(
        "run {} holds {} commit(s) for {}, ending at {}",
        held.run_id, held.commits, held.branch, held.end_sha
    );
    println!("CI entry points they change:");
    for (path, why) in &held.ci_entry_points {
        println!("  {} ({why})", printable(path));
    }
    println!("every file they change:");
    for path in &held.changed_paths {
        println!("  {}", printable(path));
    }
    println!("\n{}", printable(&held.diff));
    eprintln!(
        "hint: after reading it, push exactly these commits with `handoff runs approve-push {} --end {}`",
        held.run_id, held.end_sha
    );
    Ok(())
}

/// `runs approve-push`.
async fn approve_push(core: &AppCore, run: i64, end: String) -> Result<(), CliError> {
    let report = runs::push_held_run(core, run, &end).await?;
    println!(
        "pushed run {}'s {} commit(s): PR #{} {}",
        report.run_id, report.commits, report.pr_number, report.pr_url
    );
    Ok(())
}

/// `runs list`.
async fn list(
    core: &AppCore,
    feedback: Option<i64>,
    active: bool,
    limit: Option<u32>,
    output: JsonFlag,
) -> Result<(), CliError> {
    let runs = runs::runs(
        core,
        &RunFilter {
            feedback_id: feedback.map(FeedbackId),
            active_only: active,
            limit,
        },
    )
    .await?;
    if output.json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        println!("no runs");
        return Ok(());
    }
    let mut table = Table::new(&[
        "RUN", "FEEDBACK", "STAGE", "KIND", "BACKEND", "STATUS", "CREATED", "DURATION", "COST",
    ]);
    for run in runs {
        table.row(vec![
            run.id.to_string(),
            dash_if_none(run.feedback_id),
            run.stage.to_string(),
            dash_if_none(run.code_run_kind),
            run.backend.to_string(),
            run.status.to_string(),
            short_time(&run.created_at),
            dash_if_none(run.duration().map(|d| format!("{}s", d.num_seconds()))),
            match (run.llm_cost_usd, run.tokens_in) {
                (Some(cost), _) => format!("${cost:.2}"),
                (None, Some(_)) => "price unknown".to_owned(),
                (None, None) => "-".to_owned(),
            },
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

fn print_chunk(chunk: &LogChunk) {
    match chunk.stream {
        LogStream::Handoff => print!("» {}", printable(&chunk.text)),
        LogStream::Stdout | LogStream::Stderr => print!("{}", printable(&chunk.text)),
    }
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Print a run's log; with --follow, keep printing until the run ends.
    Logs {
        /// The run id.
        run: i64,
        #[arg(long, short = 'f')]
        follow: bool,
    },
    /// Cancel an active run: its sandbox is stopped and the run marked cancelled.
    Cancel {
        /// The run id.
        run: i64,
    },
    /// Show one run: stage, backend, times, result, notes, the lessons its prompt carried,
    /// and (with --output) its output.
    Show {
        /// The run id.
        run: i64,
        /// Print the stage's full output (the whole text, even where GitHub got it cut).
        #[arg(long)]
        output: bool,
        #[command(flatten)]
        format: JsonFlag,
    },
    /// Show a run's steps as its key forwarder saw them: each model call with its
    /// tokens, cost and duration, and the tool calls the model asked for (what the
    /// agent read, wrote and ran).
    Steps {
        /// The run id.
        run: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Show what a held run would push: a run of an item a visitor opened whose commits
    /// change CI entry points waits for your approval before anything is pushed.
    Held {
        /// The run id.
        run: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Push a held run's commits after you read them (`handoff runs held RUN`): exactly
    /// the commits ending at END_SHA, never forced; then open or update the PR.
    ApprovePush {
        /// The run id.
        run: i64,
        /// The last commit `handoff runs held RUN` showed, so that only what you read is
        /// pushed.
        #[arg(long, value_name = "SHA")]
        end: String,
    },
    /// List runs, newest first.
    List {
        /// Only the runs of this feedback id.
        #[arg(long, value_name = "ID")]
        feedback: Option<i64>,
        /// Only queued and running runs.
        #[arg(long)]
        active: bool,
        /// At most this many runs.
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        #[command(flatten)]
        output: JsonFlag,
    },
}
