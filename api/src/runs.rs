//! Runs from the app: start one (first run, "Update PR", retry) in the background,
//! cancel one, read its log. The live log reaches the page through a channel the shell
//! feeds from [`handoff::pipeline::run_log::follow_run_log`].

use super::records::LogChunkRecord;
use super::AppCore;
use handoff::domain::{FeedbackId, RunId};
use handoff::error_code::CodedError;
use handoff::pipeline::spawned_run::spawn_watched_run;
use handoff::pipeline::CodeRunOptions;

/// Starts a code run of `feedback_id` (with new instructions, for "Update PR") and
/// drives it in the background; returns its id at once. Refusals (CODING, MERGED,
/// quota, sandbox) come back here, before anything is spent.
pub async fn start_code_run(
    core: &AppCore,
    feedback_id: i64,
    instructions: Option<String>,
) -> Result<i64, CodedError> {
    let pipeline = core.pipeline().await?;
    let instructions = instructions.filter(|text| !text.trim().is_empty());
    let begun = pipeline
        .begin_code_run(
            FeedbackId(feedback_id),
            CodeRunOptions {
                instructions,
                ..CodeRunOptions::default()
            },
        )
        .await?;
    let run_id = begun.run_id();
    spawn_watched_run(pipeline, run_id, "a code run", begun.drive());
    Ok(run_id.0)
}

/// Asks an active run to stop; a queued one leaves the queue.
pub async fn cancel_run(core: &AppCore, run_id: i64) -> Result<(), CodedError> {
    core.pipeline().await?.cancel_run(RunId(run_id)).await?;
    Ok(())
}

/// Feeds `deliver` every chunk of a run's log, then new ones as they come, until the
/// run has ended (the shell passes a channel to the page).
pub async fn follow_log(core: AppCore, run_id: i64, deliver: impl Fn(LogChunkRecord) -> bool) {
    use futures::StreamExt as _;
    let mut log = Box::pin(handoff::pipeline::run_log::follow_run_log(
        core.store.clone(),
        RunId(run_id),
        std::time::Duration::from_millis(250),
    ));
    while let Some(next) = log.next().await {
        match next {
            Ok(chunk) => {
                if !deliver(chunk.into()) {
                    return;
                }
            }
            Err(error) => {
                tracing::warn!(run = run_id, %error, "the run's log could not be read further; the window's live log stops here");
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
pub async fn held_commits(core: &AppCore, run_id: i64) -> Result<HeldCommitsRecord, CodedError> {
    let held = core.pipeline().await?.held_commits(RunId(run_id)).await?;
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
) -> Result<HeldPushRecord, CodedError> {
    let report = core
        .pipeline()
        .await?
        .push_held_run(RunId(run_id), end_sha)
        .await?;
    Ok(HeldPushRecord {
        pr_number: report.pr_number,
        pr_url: report.pr_url,
        commits: report.commits,
    })
}
