//! Runs, for both front ends: start one (first run, "Update PR", retry) in the
//! background, cancel one, list them, show one with its texts, steps and the lessons it
//! carried, read or follow its log, and a held run's commits and their approved push.
//! The live log reaches the page through a channel the shell feeds from
//! [`follow_log`], and the terminal through [`log_as_it_comes`].

use futures::{Stream, StreamExt as _};

use super::records::LogChunkRecord;
use super::runs_to_drive::CodeRunToDrive;
use super::AppCore;
use handoff::domain::agent_step::AgentStep;
use handoff::domain::lesson::Lesson;
use handoff::domain::{FeedbackId, LogChunk, Run, RunId};
use handoff::error_code::CodedError;
use handoff::pipeline::held_push::{HeldCommits, HeldPushReport};
use handoff::pipeline::reconcile::Reconciled;
use handoff::pipeline::CodeRunOptions;
use handoff::store::{RunFilter, RunTexts};

/// Starts a code run of `feedback_id` (with new instructions, for "Update PR") and
/// drives it in the background; returns its id at once. Refusals (CODING, MERGED,
/// quota, sandbox) come back here, before anything is spent. The window's instructions
/// box is optional: left empty, the run has no new instructions.
pub async fn start_code_run(
    core: &AppCore,
    feedback_id: i64,
    instructions: Option<String>,
) -> Result<i64, CodedError> {
    let instructions = instructions.filter(|text| !text.trim().is_empty());
    let begun = begin_code_run(
        core,
        feedback_id,
        CodeRunOptions {
            instructions,
            ..CodeRunOptions::default()
        },
    )
    .await?;
    let run_id = begun.run_id();
    begun.drive_in_background();
    Ok(run_id)
}

/// Begins a code run of `feedback_id` (a first run, or an Update PR with new
/// instructions, or a retry) for the caller to drive: everything that can refuse it
/// (CODING, MERGED, the quota, the budgets, the agent's key, the sandbox) is checked
/// first, before anything is spent. Instructions given but empty are refused.
pub async fn begin_code_run(
    core: &AppCore,
    feedback_id: i64,
    options: CodeRunOptions,
) -> Result<CodeRunToDrive, CodedError> {
    let pipeline = core.pipeline().await?;
    let begun = pipeline
        .code_runs()
        .begin_code_run(FeedbackId(feedback_id), options)
        .await?;
    Ok(CodeRunToDrive::new(begun, &pipeline))
}

/// Ends the runs a crash left behind (their process gone or silent), saying which.
pub async fn end_runs_left_behind(core: &AppCore) -> Result<Vec<Reconciled>, CodedError> {
    Ok(core
        .pipeline()
        .await?
        .left_behind()
        .reconcile_silent_runs()
        .await?)
}

/// Asks run `run_id` to stop; the process driving it ends it.
pub async fn ask_run_to_stop(core: &AppCore, run_id: i64) -> Result<Run, CodedError> {
    Ok(core.store.runs().request_cancel(RunId(run_id)).await?)
}

/// What cancelling a run did: the run as it stands then, and the runs a crash left
/// behind that were ended on the way.
#[derive(Debug, Clone)]
pub struct CancelOutcome {
    pub run: Run,
    pub runs_ended: Vec<Reconciled>,
}

/// Asks an active run to stop; a queued one whose process is gone leaves the queue at
/// once, and runs a crash left behind are ended. Signed out, the cancel is only asked
/// for: the process driving the run ends it.
pub async fn cancel_run(core: &AppCore, run_id: i64) -> Result<CancelOutcome, CodedError> {
    match core.pipeline().await {
        Ok(pipeline) => {
            let run = pipeline.run_queue().cancel_run(RunId(run_id)).await?;
            let runs_ended = pipeline.left_behind().reconcile_silent_runs().await?;
            Ok(CancelOutcome { run, runs_ended })
        }
        Err(error) => {
            tracing::info!(run = run_id, message = %error.message, "runs left behind are not looked for without the pipeline");
            Ok(CancelOutcome {
                run: core.store.runs().request_cancel(RunId(run_id)).await?,
                runs_ended: Vec::new(),
            })
        }
    }
}

/// Runs, newest first, as `filter` picks them.
pub async fn runs(core: &AppCore, filter: &RunFilter) -> Result<Vec<Run>, CodedError> {
    Ok(core.store.runs().runs(filter).await?)
}

/// One run, as the mirror has it.
pub async fn run(core: &AppCore, run_id: i64) -> Result<Run, CodedError> {
    Ok(core.store.runs().run(RunId(run_id)).await?)
}

/// One run with its prompt and output and the lessons its prompt carried.
#[derive(Debug, Clone)]
pub struct RunDetails {
    pub run: Run,
    pub texts: RunTexts,
    pub lessons_carried: Vec<Lesson>,
}

/// Run `run_id` with its texts and the lessons it carried.
pub async fn run_details(core: &AppCore, run_id: i64) -> Result<RunDetails, CodedError> {
    let run = core.store.runs().run(RunId(run_id)).await?;
    Ok(RunDetails {
        texts: core.store.runs().run_texts(run.id).await?,
        lessons_carried: core.store.lessons().lessons_carried_by(run.id).await?,
        run,
    })
}

/// The steps of run `run_id` as its key forwarder saw them.
pub async fn run_steps(core: &AppCore, run_id: i64) -> Result<Vec<AgentStep>, CodedError> {
    Ok(core.store.spend().agent_steps(RunId(run_id)).await?)
}

/// The log of run `run_id` as far as it goes now.
pub async fn run_log(core: &AppCore, run_id: i64) -> Result<Vec<LogChunk>, CodedError> {
    Ok(core.store.runs().run_log(RunId(run_id), 0).await?)
}

/// The log of run `run_id`, then what it says as it comes, until the run has ended
/// and everything is read (it follows a run any process drives).
pub fn log_as_it_comes(
    core: &AppCore,
    run_id: i64,
) -> impl Stream<Item = Result<LogChunk, CodedError>> {
    handoff::pipeline::run_log::follow_run_log(
        core.store.clone(),
        RunId(run_id),
        std::time::Duration::from_millis(200),
    )
    .map(|chunk| chunk.map_err(CodedError::from))
}

/// Feeds `deliver` every chunk of a run's log, then new ones as they come, until the
/// run has ended (the shell passes a channel to the page).
pub async fn follow_log(core: AppCore, run_id: i64, deliver: impl Fn(LogChunkRecord) -> bool) {
    let mut log = Box::pin(log_as_it_comes(&core, run_id));
    while let Some(next) = log.next().await {
        match next {
            Ok(chunk) => {
                if !deliver(chunk.into()) {
                    return;
                }
            }
            Err(error) => {
                tracing::warn!(run = run_id, message = %error.message, "the run's log could not be read further; the window's live log stops here");
                return;
            }
        }
    }
}

/// A CI entry point a held run's commits change, and why it is one.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CiEntryPointRecord {
    pub path: String,
    pub why: String,
}

/// What a held run would push, as the page shows it before the owner approves.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeldCommitsRecord {
    pub run_id: i64,
    pub branch: String,
    pub end_sha: String,
    pub commits: u32,
    pub changed_paths: Vec<String>,
    pub ci_entry_points: Vec<CiEntryPointRecord>,
    /// The diff, as text (the page places it with `textContent`).
    pub diff: String,
}

/// What pushing a held run did.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeldPushRecord {
    pub pr_number: u64,
    pub pr_url: String,
    pub commits: u32,
}

/// What held run `run_id` would push.
pub async fn held_commits_of(core: &AppCore, run_id: i64) -> Result<HeldCommits, CodedError> {
    Ok(core
        .pipeline()
        .await?
        .held_pushes()
        .held_commits(RunId(run_id))
        .await?)
}

/// What held run `run_id` would push, as the page shows it.
pub async fn held_commits(core: &AppCore, run_id: i64) -> Result<HeldCommitsRecord, CodedError> {
    let held = held_commits_of(core, run_id).await?;
    Ok(HeldCommitsRecord {
        run_id: held.run_id.0,
        branch: held.branch,
        end_sha: held.end_sha,
        commits: held.commits,
        changed_paths: held.changed_paths,
        ci_entry_points: held
            .ci_entry_points
            .into_iter()
            .map(|(path, why)| CiEntryPointRecord { path, why })
            .collect(),
        diff: held.diff,
    })
}

/// Pushes held run `run_id`'s commits, exactly those ending at `end_sha` (what the
/// owner read), and makes sure of the PR.
pub async fn push_held_run(
    core: &AppCore,
    run_id: i64,
    end_sha: &str,
) -> Result<HeldPushReport, CodedError> {
    Ok(core
        .pipeline()
        .await?
        .held_pushes()
        .push_held_run(RunId(run_id), end_sha.trim())
        .await?)
}

/// [`push_held_run`], as the page shows what it did.
pub async fn push_held_run_for_the_page(
    core: &AppCore,
    run_id: i64,
    end_sha: &str,
) -> Result<HeldPushRecord, CodedError> {
    let report = push_held_run(core, run_id, end_sha).await?;
    Ok(HeldPushRecord {
        pr_number: report.pr_number,
        pr_url: report.pr_url,
        commits: report.commits,
    })
}
