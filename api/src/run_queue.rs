//! The run queue: where each queued run stands (on its card and in its item's panel, or
//! in `handoff queue list`), runs of several items at once (the cards the owner picked,
//! or every new item of a repository), queued for the window to drive in the background
//! or for the command line to drive here as their slots come, and how many new items
//! each repository holds.

use std::collections::HashMap;

use serde::Serialize;

use super::records::BoardView;
pub use super::runs_to_drive::RunToDrive;
use super::{invalid_input, AppCore};
use handoff::domain::run_queue::SlotLimits;
use handoff::domain::{FeedbackId, RepoName, RunId, RunStatus};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::pipeline::run_queue::AdoptedRun;
use handoff::pipeline::spawned_run::spawn_watched_run;
use handoff::pipeline::{BegunCodeRun, CodeRunOptions, Pipeline};
use handoff::store::{QueueEntry, Store};

/// The queue as the owner sees it (the runs going, then the waiting ones by place), and
/// the slots. Signed out, it is still read; only where E2B's overflow would send a
/// Docker run is then unknown.
/// How many runs are going and how many wait in the queue, on every repository.
pub async fn runs_going_and_waiting(core: &AppCore) -> Result<(usize, usize), CodedError> {
    let active = core.store.active_runs_and_drivers().await?;
    let count = |status| active.iter().filter(|run| run.run.status == status).count();
    Ok((count(RunStatus::Running), count(RunStatus::Queued)))
}

pub async fn queue(core: &AppCore) -> Result<(Vec<QueueEntry>, SlotLimits), CodedError> {
    let entries = match core.pipeline().await {
        Ok(pipeline) => pipeline.run_queue().queue().await?,
        Err(error) => {
            tracing::debug!(message = %error.message, "the queue is read without the pipeline");
            core.store.run_queue().queue(false).await?
        }
    };
    Ok((entries, core.store.run_queue().slot_limits().await?))
}

/// The new items of repository `repo` (oldest first; items that wait for the owner's
/// approval are left out).
pub async fn new_items_of(core: &AppCore, repo: &RepoName) -> Result<Vec<i64>, CodedError> {
    Ok(core
        .store
        .feedback()
        .new_items_of(repo)
        .await?
        .into_iter()
        .map(|item| item.0)
        .collect())
}

/// Queues a code run of each of `feedback_ids`, for the caller to drive here; each
/// item's run, or why it was refused (one refused item does not stop the others).
pub async fn queue_code_runs_to_drive(
    core: &AppCore,
    feedback_ids: &[i64],
) -> Result<Vec<(i64, Result<RunToDrive, CodedError>)>, CodedError> {
    let pipeline = core.pipeline().await?;
    let items: Vec<FeedbackId> = feedback_ids.iter().copied().map(FeedbackId).collect();
    Ok(pipeline
        .code_runs()
        .begin_code_runs(&items, &CodeRunOptions::default())
        .await
        .into_iter()
        .map(|(item, begun)| {
            let begun = begun
                .map(|begun| RunToDrive::new(AdoptedRun::Code(Box::new(begun)), &pipeline))
                .map_err(CodedError::from);
            (item.0, begun)
        })
        .collect())
}

/// The places of the queued runs, as the page reads them: Docker runs that would go to
/// E2B are counted as waiting until they go (the board asks often; the key is not read
/// for it).
pub async fn queue_places(store: &Store) -> Result<HashMap<RunId, u32>, CodedError> {
    Ok(store.run_queue().queue_places(false).await?)
}

/// Writes the place of every card's queued run on `board`.
pub async fn place_queued_cards(store: &Store, board: &mut BoardView) -> Result<(), CodedError> {
    let queued = board
        .groups
        .iter()
        .flat_map(|group| &group.cards)
        .any(|card| {
            card.last_run
                .as_ref()
                .is_some_and(|run| run.status == RunStatus::Queued)
        });
    if !queued {
        return Ok(());
    }
    let places = queue_places(store).await?;
    for card in board.groups.iter_mut().flat_map(|group| &mut group.cards) {
        if let Some(run) = card.last_run.as_mut() {
            run.queue_place = places.get(&RunId(run.id)).copied();
        }
    }
    Ok(())
}

/// One item's run, queued.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueuedItemRecord {
    pub feedback_id: i64,
    pub run_id: i64,
}

/// One item that was not queued, and why.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RefusedItemRecord {
    pub feedback_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::ErrorCodeWords")
    )]
    pub code: ErrorCode,
    pub message: String,
}

/// What asking for runs of several items did: each item queued or refused.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BulkRunRecord {
    pub queued: Vec<QueuedItemRecord>,
    pub refused: Vec<RefusedItemRecord>,
}

/// Queues a code run of each of `feedback_ids` and drives each in the background as
/// its slot comes; one refused item does not stop the others.
pub async fn start_code_runs(
    core: &AppCore,
    feedback_ids: &[i64],
) -> Result<BulkRunRecord, CodedError> {
    if feedback_ids.is_empty() {
        return Err(invalid_input("no item was picked to run".to_owned()));
    }
    let pipeline = core.pipeline().await?;
    let items: Vec<FeedbackId> = feedback_ids.iter().copied().map(FeedbackId).collect();
    Ok(queue_and_drive(&pipeline, &items).await)
}

/// Queues a code run of every new item of repository `full_name` (oldest first; items
/// that wait for the owner's approval are left out).
pub async fn run_all_new(core: &AppCore, full_name: &str) -> Result<BulkRunRecord, CodedError> {
    let repo: RepoName = full_name
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))?;
    let items = core.store.feedback().new_items_of(&repo).await?;
    let pipeline = core.pipeline().await?;
    Ok(queue_and_drive(&pipeline, &items).await)
}

async fn queue_and_drive(pipeline: &Pipeline, items: &[FeedbackId]) -> BulkRunRecord {
    let mut answer = BulkRunRecord {
        queued: Vec::new(),
        refused: Vec::new(),
    };
    for (item, begun) in pipeline
        .code_runs()
        .begin_code_runs(items, &CodeRunOptions::default())
        .await
    {
        match begun {
            Ok(begun) => answer.queued.push(drive(pipeline, item, begun)),
            Err(error) => {
                let error = CodedError::from(error);
                answer.refused.push(RefusedItemRecord {
                    feedback_id: item.0,
                    code: error.code,
                    message: error.message,
                });
            }
        }
    }
    answer
}

fn drive(pipeline: &Pipeline, item: FeedbackId, begun: BegunCodeRun) -> QueuedItemRecord {
    let run_id = begun.run_id();
    spawn_watched_run(pipeline.clone(), run_id, "a code run", begun.drive());
    QueuedItemRecord {
        feedback_id: item.0,
        run_id: run_id.0,
    }
}

/// How many new items a repository holds, for "Run all new".
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct NewItemsRecord {
    pub repo: String,
    pub count: u32,
}

/// Every connected repository with new items to run, and how many.
pub async fn new_items_by_repo(core: &AppCore) -> Result<Vec<NewItemsRecord>, CodedError> {
    let store = &core.store;
    let mut counts = Vec::new();
    for repo in store.repositories().repos().await? {
        let count = store.feedback().new_items_of(&repo.name).await?.len();
        if count > 0 {
            counts.push(NewItemsRecord {
                repo: repo.name.to_string(),
                count: u32::try_from(count).unwrap_or(u32::MAX),
            });
        }
    }
    Ok(counts)
}
