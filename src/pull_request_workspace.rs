//! A pull request's workspace, as the window shows it and `handoff pr show` prints it:
//! for each QA stage (and the full-auto chain) its state, its last and active run, the
//! quota its button takes, and whether the owner's edits touch it — its own comment
//! edited by the owner, or the comment it reads changed since it last ran (it is then
//! out of date) — and for each stage's comment its newest version, the agent's
//! original, and an edit waiting in the outbox.
//!
//! Everything here is read from the mirror alone, so it is there offline.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::{
    CommentKind, CommentVersion, OutboxEntry, PullRequest, Repo, Run, RunStatus, Stage,
    VersionOrigin,
};
use crate::pipeline::qa_run::QaStage;
use crate::store::{QuotaStatus, StageTestResult, Store, StoreError};

/// Where a stage stands, the most pressing first: a stage that is running, then one
/// whose last run failed, one that is out of date, one whose comment the owner edited,
/// one done, one never run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageState {
    Running,
    Failed,
    OutOfDate,
    EditedByYou,
    Done,
    NotRun,
}

impl StageState {
    /// The state in words, as the window and the command line show it.
    pub fn words(self) -> &'static str {
        match self {
            StageState::Running => "running",
            StageState::Failed => "failed",
            StageState::OutOfDate => "out of date",
            StageState::EditedByYou => "edited by you",
            StageState::Done => "done",
            StageState::NotRun => "not run",
        }
    }
}

/// One stage of the strip (or the full-auto chain).
#[derive(Debug, Clone, Serialize)]
pub struct StageCard {
    pub stage: Stage,
    pub state: StageState,
    /// The owner edited the comment this stage writes (a re-run asks first).
    pub edited_by_you: bool,
    /// Why the stage is out of date, when it is.
    pub out_of_date: Option<String>,
    /// The comment this stage reads is the owner's edit: the stage will read it.
    pub reads_your_edit: Option<CommentKind>,
    /// Why the stage cannot run now, when it cannot (besides the quota).
    pub blocked: Option<String>,
    /// Units of quota a run takes (a full-auto chain reserves its stages' units).
    pub quota_units: u32,
    pub last_run: Option<Run>,
    pub active_run: Option<Run>,
}

/// One stage's comment, as the mirror has it.
#[derive(Debug, Clone, Serialize)]
pub struct CommentState {
    pub kind: CommentKind,
    pub latest: Option<CommentVersion>,
    /// The agent's newest original, to compare the owner's text with.
    pub agent_original: Option<CommentVersion>,
    /// Versions in the history (a discarded edit among them).
    pub versions: u32,
    /// Deleted on GitHub since.
    pub missing_since: Option<DateTime<Utc>>,
    /// The owner's edits of it not on GitHub yet, oldest first.
    pub unsent: Vec<OutboxEntry>,
}

/// Everything the workspace shows.
#[derive(Debug, Clone, Serialize)]
pub struct PullRequestWorkspace {
    pub repo: Repo,
    pub pull: PullRequest,
    pub stages: Vec<StageCard>,
    pub comments: Vec<CommentState>,
    pub test_results: Option<StageTestResult>,
    pub quota: QuotaStatus,
}

/// The comments of the QA stages, in the order of the strip.
pub const STAGE_COMMENTS: [CommentKind; 3] =
    [CommentKind::Review, CommentKind::Plan, CommentKind::Results];

fn is_owners(version: &CommentVersion) -> bool {
    version.origin != VersionOrigin::Agent && !version.edited_by_other
}

/// The workspace of `repo`'s PR `pull`.
pub async fn pull_request_workspace(
    store: &Store,
    repo: &Repo,
    pull: PullRequest,
) -> Result<PullRequestWorkspace, StoreError> {
    let runs = store
        .stage_runs()
        .runs_of_pull_request(repo.id, pull.number)
        .await?;
    let mut comments = Vec::new();
    for kind in STAGE_COMMENTS {
        comments.push(comment_state(store, repo, pull.number, kind).await?);
    }
    let test_results = store
        .stage_runs()
        .latest_test_results(repo.id, pull.number)
        .await?;
    let quota = store.spend().quota_status(repo.id, store.now()).await?;
    let comment = |kind: CommentKind| comments.iter().find(|comment| comment.kind == kind);
    let fix_refusal = pull.push_refusal(&repo.default_branch);
    let mut stages = Vec::new();
    for stage in QaStage::CHAIN {
        let own = comment(stage.comment()).and_then(|comment| comment.latest.as_ref());
        let input = stage
            .input()
            .and_then(|kind| comment(kind).and_then(|comment| comment.latest.as_ref()));
        let of_stage: Vec<&Run> = runs
            .iter()
            .filter(|run| run.stage == stage.stage())
            .collect();
        let last_success = of_stage
            .iter()
            .find(|run| run.status == RunStatus::Succeeded)
            .copied();
        let out_of_date = last_success.and_then(|ran| {
            why_out_of_date(stage, ran, input, &pull, test_results.as_ref(), &runs)
        });
        let blocked = why_blocked(stage, input, fix_refusal.as_deref());
        stages.push(card(
            stage.stage(),
            &of_stage,
            own.is_some_and(is_owners),
            out_of_date,
            stage.input().filter(|_| input.is_some_and(is_owners)),
            blocked,
            1,
        ));
    }
    let chain: Vec<&Run> = runs
        .iter()
        .filter(|run| run.stage == Stage::FullAuto)
        .collect();
    let chain_edited = comments
        .iter()
        .any(|comment| comment.latest.as_ref().is_some_and(is_owners));
    stages.push(card(
        Stage::FullAuto,
        &chain,
        chain_edited,
        None,
        None,
        None,
        if fix_refusal.is_some() { 3 } else { 4 },
    ));
    Ok(PullRequestWorkspace {
        repo: repo.clone(),
        pull,
        stages,
        comments,
        test_results,
        quota,
    })
}

/// Why `stage` cannot run now, if it cannot: a fix that cannot push (`fix_refusal`), or
/// an `input` someone else edited on GitHub, waiting for the owner's approval.
fn why_blocked(
    stage: QaStage,
    input: Option<&CommentVersion>,
    fix_refusal: Option<&str>,
) -> Option<String> {
    match (stage, input) {
        (QaStage::Fix, _) if fix_refusal.is_some() => {
            fix_refusal.map(|reason| format!("fix cannot push: {reason}"))
        }
        (_, Some(version)) if version.awaits_owner_approval() => Some(format!(
            "the {} was last edited on GitHub by {}: approve that version first",
            input_kind_words(stage),
            version.written_by()
        )),
        _ => None,
    }
}

fn input_kind_words(stage: QaStage) -> &'static str {
    match stage {
        QaStage::Plan => "review",
        QaStage::Test => "test plan",
        QaStage::Review | QaStage::Fix => "input",
    }
}

fn card(
    stage: Stage,
    runs: &[&Run],
    edited_by_you: bool,
    out_of_date: Option<String>,
    reads_your_edit: Option<CommentKind>,
    blocked: Option<String>,
    quota_units: u32,
) -> StageCard {
    let last_run = runs.first().map(|run| (*run).clone());
    let active_run = runs
        .iter()
        .find(|run| run.status.is_active())
        .map(|run| (*run).clone());
    // The chain writes three comments: that one of them is yours is said on its button,
    // not as its state.
    let own_comment_edited = edited_by_you && stage != Stage::FullAuto;
    let state = match &last_run {
        _ if active_run.is_some() => StageState::Running,
        Some(run) if matches!(run.status, RunStatus::Failed | RunStatus::Cancelled) => {
            StageState::Failed
        }
        _ if out_of_date.is_some() => StageState::OutOfDate,
        _ if own_comment_edited => StageState::EditedByYou,
        Some(_) => StageState::Done,
        None => StageState::NotRun,
    };
    StageCard {
        stage,
        state,
        edited_by_you,
        out_of_date,
        reads_your_edit,
        blocked,
        quota_units,
        last_run,
        active_run,
    }
}

/// Why a stage that last succeeded as `ran` is out of date: what it read changed since.
/// Review reads the PR's code; plan the review; test the plan; fix the newest results,
/// when they still have failures.
fn why_out_of_date(
    stage: QaStage,
    ran: &Run,
    input: Option<&CommentVersion>,
    pull: &PullRequest,
    results: Option<&StageTestResult>,
    runs: &[Run],
) -> Option<String> {
    let started = ran.started_at.unwrap_or(ran.created_at);
    match stage {
        QaStage::Review => {
            let reviewed = ran.start_sha.as_deref()?;
            (reviewed != pull.head_sha).then(|| {
                format!(
                    "the PR's code changed since the review (it read {}, the head is {})",
                    &reviewed[..reviewed.len().min(7)],
                    &pull.head_sha[..pull.head_sha.len().min(7)]
                )
            })
        }
        QaStage::Plan | QaStage::Test => {
            let input = input?;
            (input.created_at > started).then(|| {
                format!(
                    "the {} changed since it ran (version {}, by {})",
                    input_kind_words(stage),
                    input.number,
                    input.written_by()
                )
            })
        }
        QaStage::Fix => {
            let results = results?;
            let failures = results.results.iter().any(|result| !result.result.passed);
            let tested = runs.iter().find(|run| run.id == results.run_id)?;
            let tested_at = tested.finished_at.unwrap_or(tested.created_at);
            (failures && tested_at > started).then(|| {
                format!(
                    "test run {} found failures since the last fix",
                    results.run_id
                )
            })
        }
    }
}

async fn comment_state(
    store: &Store,
    repo: &Repo,
    pr_number: u64,
    kind: CommentKind,
) -> Result<CommentState, StoreError> {
    let Some(comment) = store
        .comments()
        .managed_comment(repo.id, pr_number, kind)
        .await?
    else {
        return Ok(CommentState {
            kind,
            latest: None,
            agent_original: None,
            versions: 0,
            missing_since: None,
            unsent: Vec::new(),
        });
    };
    let discarded = store
        .outbox()
        .discarded_comment_versions(comment.id)
        .await?;
    let history: Vec<CommentVersion> = store
        .comments()
        .comment_versions(comment.id)
        .await?
        .into_iter()
        .filter(|version| !discarded.contains(&version.id))
        .collect();
    Ok(CommentState {
        kind,
        latest: history.last().cloned(),
        agent_original: history
            .iter()
            .rev()
            .find(|version| version.origin == VersionOrigin::Agent)
            .cloned(),
        versions: (history.len() + discarded.len()) as u32,
        missing_since: comment.missing_since,
        unsent: store
            .outbox()
            .unsent_outbox_entries_of_comment(comment.id)
            .await?,
    })
}
