//! `handoff lessons list|suggest|accept|reject|edit|enable|disable|keep|write|settings`: the
//! lessons drawn from the owner's corrections, which every later run of the repository
//! carries once accepted.

use clap::{Args, Subcommand};

use super::command_error::CliError;
use super::foreground_run::{drive_in_foreground, print_log, reconcile, timeout_from_minutes};
use super::output::{print_json, Table};
use super::run_command::RunOptions;
use super::terminal_text::printable;
use crate::shared_arguments::parse_repo_name;
use handoff_api::core_types::LessonsFileAction;
use handoff_api::core_types::LessonsOptions;
use handoff_api::core_types::RepoName;
use handoff_api::lessons::{
    begin_lessons, decide_lesson, edit_lesson, lessons_view, set_lesson_settings,
    write_lessons_file_of, CorrectionRecord, LessonDecisionWord, LessonEditInput, LessonRecord,
    LessonSettingsInput,
};
use handoff_api::AppCore;

/// Lessons: rules drawn from your own corrections (your edits of the agent's PR
/// comments, your follow-ups on feedback PRs). A lessons run proposes them; you accept,
/// edit or reject each; every later run of the repository carries the accepted ones.
#[derive(Debug, Args)]
pub struct LessonsArguments {
    #[command(subcommand)]
    pub action: LessonsAction,
}

#[derive(Debug, Subcommand)]
pub enum LessonsAction {
    /// List a repository's proposals, accepted and rejected lessons, and the corrections
    /// waiting for the next lessons run.
    List {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// Show each lesson's sources as diffs.
        #[arg(long)]
        sources: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the repository's agent on your corrections since lessons were last drawn, in
    /// the foreground; it proposes lessons for you to accept, edit or reject.
    Suggest {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        options: RunOptions,
    },
    /// Accept a proposed (or rejected) lesson: every later run carries it.
    Accept { id: i64 },
    /// Reject a proposed lesson (it stays in the list of rejected ones).
    Reject { id: i64 },
    /// Change a lesson's rule, reason or paths (changing its paths clears the flag of
    /// vanished paths).
    Edit {
        id: i64,
        /// The rule, one sentence.
        #[arg(long)]
        rule: Option<String>,
        /// Why: what you corrected.
        #[arg(long)]
        why: Option<String>,
        /// The paths it concerns (repeat the flag); `--path ''` clears them.
        #[arg(long = "path")]
        paths: Option<Vec<String>>,
    },
    /// Turn an accepted lesson back on.
    Enable { id: i64 },
    /// Turn an accepted lesson off: later runs leave it out.
    Disable { id: i64 },
    /// Keep a lesson flagged for vanished paths or long disuse, as it is.
    Keep { id: i64 },
    /// Bring the repository's lessons file (AGENTS.md unless set otherwise) in step
    /// with its accepted lessons: a PR that changes only a marked section of it, opened
    /// the first time and updated while it is open.
    Write {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// Replace the section even though it was edited on GitHub (the edit stays in
        /// the history).
        #[arg(long)]
        replace_edits: bool,
    },
    /// Show or change a repository's lesson settings.
    Settings {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// Start a lessons run by itself after this many new corrections; 0: only on
        /// demand.
        #[arg(long, value_name = "N")]
        after_corrections: Option<u32>,
        /// The file whose marked section holds the accepted lessons (AGENTS.md,
        /// CLAUDE.md).
        #[arg(long, value_name = "PATH")]
        file: Option<String>,
    },
}

pub async fn run(core: &AppCore, arguments: LessonsArguments) -> Result<(), CliError> {
    match arguments.action {
        LessonsAction::List {
            repo,
            sources,
            json,
        } => list(core, &repo, sources, json).await,
        LessonsAction::Suggest { repo, options } => suggest(core, &repo, options).await,
        LessonsAction::Accept { id } => decide(core, id, LessonDecisionWord::Accept).await,
        LessonsAction::Reject { id } => decide(core, id, LessonDecisionWord::Reject).await,
        LessonsAction::Enable { id } => decide(core, id, LessonDecisionWord::Enable).await,
        LessonsAction::Disable { id } => decide(core, id, LessonDecisionWord::Disable).await,
        LessonsAction::Keep { id } => decide(core, id, LessonDecisionWord::Keep).await,
        LessonsAction::Edit {
            id,
            rule,
            why,
            paths,
        } => {
            let lesson = edit_lesson(core, id, &LessonEditInput { rule, why, paths }).await?;
            println!("lesson {id}: {}", describe(&lesson));
            Ok(())
        }
        LessonsAction::Write {
            repo,
            replace_edits,
        } => write(core, &repo, replace_edits).await,
        LessonsAction::Settings {
            repo,
            after_corrections,
            file,
        } => settings(core, &repo, after_corrections, file).await,
    }
}

/// `lessons write`.
async fn write(core: &AppCore, repo: &RepoName, replace_edits: bool) -> Result<(), CliError> {
    let report = write_lessons_file_of(core, repo, replace_edits).await?;
    match (report.action, report.pr_number) {
        (LessonsFileAction::InStep, None) => {
            println!("{} already holds the lessons as they are", report.path)
        }
        (LessonsFileAction::InStep, Some(number)) => println!(
            "{} already holds the lessons as they are (PR #{number})",
            report.path
        ),
        (LessonsFileAction::Opened, number) => println!(
            "opened PR #{}: {} carries the lessons{}",
            number.unwrap_or_default(),
            report.path,
            report
                .pr_url
                .map(|url| format!(" ({url})"))
                .unwrap_or_default()
        ),
        (LessonsFileAction::Updated, number) => println!(
            "updated PR #{}: {} carries the lessons",
            number.unwrap_or_default(),
            report.path
        ),
    }
    Ok(())
}

/// `lessons settings`.
async fn settings(
    core: &AppCore,
    repo: &RepoName,
    after_corrections: Option<u32>,
    file: Option<String>,
) -> Result<(), CliError> {
    let view = lessons_view(core, &repo.full_name()).await?;
    if after_corrections.is_some() || file.is_some() {
        set_lesson_settings(
            core,
            &repo.full_name(),
            &LessonSettingsInput {
                after_corrections: match after_corrections {
                    Some(0) => None,
                    Some(n) => Some(n),
                    None => view.after_corrections,
                },
                lessons_file: file.unwrap_or(view.lessons_file),
            },
        )
        .await?;
    }
    let view = lessons_view(core, &repo.full_name()).await?;
    println!(
        "lessons of {}: {}; file {}",
        view.repo,
        match view.after_corrections {
            Some(n) => format!("a lessons run starts by itself after {n} new corrections"),
            None => "lessons runs start only when you ask".to_owned(),
        },
        view.lessons_file
    );
    Ok(())
}

async fn decide(core: &AppCore, id: i64, decision: LessonDecisionWord) -> Result<(), CliError> {
    let lesson = decide_lesson(core, id, decision).await?;
    println!("lesson {id}: {}", describe(&lesson));
    Ok(())
}

/// A lesson's state in words: "accepted, on: later runs carry it".
fn describe(lesson: &LessonRecord) -> String {
    let state = match (lesson.state.as_str(), lesson.enabled) {
        ("accepted", true) if !lesson.vanished_paths.is_empty() => format!(
            "accepted, left out until you look: {} gone from the base branch",
            lesson.vanished_paths.join(", ")
        ),
        ("accepted", true) => "accepted, on: later runs carry it".to_owned(),
        ("accepted", false) => "accepted, off: later runs leave it out".to_owned(),
        ("rejected", _) => "rejected".to_owned(),
        _ => "proposed: accept, edit or reject it".to_owned(),
    };
    format!("{state}\n  {}", printable(&lesson.rule))
}

async fn list(core: &AppCore, repo: &RepoName, sources: bool, json: bool) -> Result<(), CliError> {
    let view = lessons_view(core, &repo.full_name()).await?;
    if json {
        return print_json(&view);
    }
    let section = |title: &str, lessons: &[LessonRecord]| {
        if lessons.is_empty() {
            return;
        }
        println!("{title}");
        let mut table = Table::new(&["ID", "STATE", "RULE", "PATHS", "LAST IN A PROMPT", "FROM"]);
        for lesson in lessons {
            let state = match (lesson.state.as_str(), lesson.enabled) {
                ("accepted", _) if !lesson.vanished_paths.is_empty() => "paths gone".to_owned(),
                ("accepted", _) if lesson.asks_to_keep => "unused: keep?".to_owned(),
                ("accepted", true) => "on".to_owned(),
                ("accepted", false) => "off".to_owned(),
                (state, _) => state.to_owned(),
            };
            table.row(vec![
                lesson.id.to_string(),
                state,
                printable(&lesson.rule),
                printable(&lesson.paths.join(", ")),
                lesson
                    .last_carried_at
                    .as_deref()
                    .map_or("never".to_owned(), |at| at.chars().take(16).collect()),
                lesson
                    .sources
                    .iter()
                    .map(|source| source.id.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            ]);
        }
        print!("{}", table.render());
        if sources {
            for lesson in lessons {
                for source in &lesson.sources {
                    print_correction(lesson.id, source);
                }
            }
        }
        println!();
    };
    section("Proposed", &view.proposals);
    section("Accepted", &view.accepted);
    section("Rejected", &view.rejected);
    if view.proposals.is_empty() && view.accepted.is_empty() && view.rejected.is_empty() {
        println!("{} has no lessons yet", view.repo);
    }
    match view.new_corrections.len() {
        0 => println!("no correction of yours is waiting for a lessons run"),
        n => println!(
            "{n} of your corrections wait for the next lessons run (`handoff lessons suggest {}`)",
            view.repo
        ),
    }
    if let Some(words) = &view.last_run_words {
        println!("last lessons run: {}", printable(words));
    }
    Ok(())
}

fn print_correction(lesson: i64, source: &CorrectionRecord) {
    println!(
        "  lesson {lesson} · {}: {}",
        source.id,
        printable(&source.words)
    );
    if source.lines.is_empty() {
        for line in source.text.lines() {
            println!("    {}", printable(line));
        }
        return;
    }
    for line in &source.lines {
        let mark = match line.change.as_str() {
            "added" => '+',
            "removed" => '-',
            _ => ' ',
        };
        println!("    {mark} {}", printable(&line.text));
    }
}

async fn suggest(core: &AppCore, repo: &RepoName, options: RunOptions) -> Result<(), CliError> {
    reconcile(core).await?;
    let quiet = options.quiet || options.json;
    let begun = begin_lessons(
        core,
        repo,
        LessonsOptions {
            backend: options.backend,
            timeout: timeout_from_minutes(options.timeout_minutes),
        },
    )
    .await?;
    let run_id = begun.run_id();
    if !quiet {
        eprintln!(
            "run {run_id} started: lessons on {repo} ({}); Ctrl-C cancels",
            begun.run().backend
        );
    }
    let printing = async {
        if !quiet {
            print_log(core, run_id).await;
        }
    };
    let report = drive_in_foreground(core, run_id, begun.drive(), printing).await?;
    if options.json {
        return print_json(&report);
    }
    if report.run.status != handoff_api::core_types::RunStatus::Succeeded {
        return Err(CliError::Failure(format!(
            "lessons run {run_id} did not succeed: {}",
            report
                .run
                .failure_message
                .as_deref()
                .unwrap_or("see its log")
        )));
    }
    let view = lessons_view(core, &repo.full_name()).await?;
    let proposed: Vec<&LessonRecord> = view
        .proposals
        .iter()
        .filter(|lesson| report.proposed.iter().any(|id| id.0 == lesson.id))
        .collect();
    if proposed.is_empty() {
        println!("lessons run {run_id}: no new lesson proposed");
    }
    for lesson in proposed {
        println!(
            "proposed lesson {}: {}\n  from {}",
            lesson.id,
            printable(&lesson.rule),
            lesson
                .sources
                .iter()
                .map(|source| source.id.clone())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("accept with `handoff lessons accept ID`, or see them with `handoff lessons list {repo} --sources`");
    Ok(())
}
