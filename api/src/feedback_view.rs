//! One feedback item as the app's detail panel shows it: the body and the thread as
//! sanitized HTML (visitor text apart and marked), the runs with their notes, the
//! managed comments of its PR (an edit by someone else marked, with its approval), and
//! what the "Update PR" button may do now — nothing, for an item a visitor opened, until
//! the owner approves it.

use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::records::{FeedbackRecord, QuotaRecord, RunRecord};
use super::{invalid_input, AppCore};
use handoff::domain::managed_comment::CommentKind;
use handoff::domain::{
    code_run_kind, AutomaticDecision, AutomaticTrigger, AutomaticUpdate, CodeRunKind, Feedback,
    FeedbackId, FeedbackSource, FeedbackStatus, FollowUpId, FollowUpOrigin, FollowUpSource,
    RepoName, RunStatus, VersionOrigin,
};
use handoff::error_code::CodedError;
use handoff::markdown::render_markdown;
use handoff::revealed_text::{reveal_hidden_parts, RevealedText};
use handoff::store::{NewFeedback, QuotaStatus, RunFilter};

/// One message of the thread.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ThreadEntry {
    pub id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FollowUpSourceWords")
    )]
    pub source: FollowUpSource,
    pub author: Option<String>,
    pub created_at: chrono::DateTime<Utc>,
    pub body_html: String,
    /// The body as a prompt gets it once included, with what the view hides marked.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RevealedTextShape")
    )]
    pub body_raw: RevealedText,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::FollowUpOriginWords")
    )]
    pub origin: FollowUpOrigin,
    /// Taken from the PR: in no prompt until the owner includes it.
    pub candidate: bool,
    pub included_in_prompts: bool,
    /// Handoff wrote it for an automatic update, on the owner's standing order.
    pub automatic: bool,
}

/// A reason the item's PR had to update by itself, and what became of it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AutomaticUpdateRecord {
    pub id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::AutomaticTriggerWords")
    )]
    pub trigger: AutomaticTrigger,
    /// The check's name, or the reviewer's login.
    pub subject: String,
    pub pr_number: u64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::AutomaticDecisionWords")
    )]
    pub decision: AutomaticDecision,
    /// Why the run started, or why none did.
    pub reason: Option<String>,
    pub run_id: Option<i64>,
    pub created_at: chrono::DateTime<Utc>,
}

impl From<AutomaticUpdate> for AutomaticUpdateRecord {
    fn from(update: AutomaticUpdate) -> Self {
        AutomaticUpdateRecord {
            id: update.id.0,
            trigger: update.trigger,
            subject: update.subject,
            pr_number: update.pr_number,
            decision: update.decision,
            reason: update.reason,
            run_id: update.run_id.map(|id| id.0),
            created_at: update.created_at,
        }
    }
}

/// A managed comment of the item's PR, as the panel lists it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CommentSummary {
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::CommentKindWords")
    )]
    pub kind: CommentKind,
    pub version: u32,
    pub version_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::VersionOriginWords")
    )]
    pub origin: VersionOrigin,
    /// "the agent", "you", or "@login".
    pub written_by: String,
    /// Someone other than the owner edited it last, and the owner has not approved it:
    /// no stage reads it until then.
    pub awaits_approval: bool,
    pub content_html: String,
    /// The content as the next stage gets it, with what the rendered view hides marked.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RevealedTextShape")
    )]
    pub content_raw: RevealedText,
    pub missing: bool,
}

/// What the run button does now.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct NextRun {
    pub kind: NextRunKind,
    pub label: String,
    pub enabled: bool,
    /// Why it is disabled, when it is.
    pub reason: Option<String>,
    pub quota: QuotaRecord,
}

/// Which run the run button starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NextRunKind {
    /// The first run: a new branch and a new PR.
    First,
    /// "Update PR": more commits on the same branch and PR.
    Iterate,
    /// Again after a failure.
    Retry,
    /// No run can start now (the reason says why).
    None,
}

impl From<CodeRunKind> for NextRunKind {
    fn from(kind: CodeRunKind) -> Self {
        match kind {
            CodeRunKind::First => NextRunKind::First,
            CodeRunKind::Iterate => NextRunKind::Iterate,
            CodeRunKind::Retry => NextRunKind::Retry,
        }
    }
}

/// The owner's lessons one run's prompt carried.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunLessonsRecord {
    pub run_id: i64,
    /// The lessons' rules, as the prompt carried them.
    pub rules: Vec<String>,
}

/// An item with its thread, its runs and its PR's comments.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FeedbackDetail {
    pub feedback: FeedbackRecord,
    pub body_html: String,
    /// The title and body as the agent gets them, with what the rendered view hides
    /// marked (what approving a visitor's item lets through).
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RevealedTextShape")
    )]
    pub body_raw: RevealedText,
    pub thread: Vec<ThreadEntry>,
    pub runs: Vec<RunRecord>,
    /// The places in the run queue of the item's queued runs.
    pub queue_places: Vec<QueuePlaceRecord>,
    /// Held runs whose commits the owner approved and Handoff pushed.
    pub pushed_held_runs: Vec<i64>,
    /// The owner's lessons each run's prompt carried (runs that carried none are left
    /// out).
    pub run_lessons: Vec<RunLessonsRecord>,
    pub comments: Vec<CommentSummary>,
    pub next_run: NextRun,
    /// Failing checks (and, before, requested changes) that asked for an automatic update, oldest
    /// first, with what was decided.
    pub automatic_updates: Vec<AutomaticUpdateRecord>,
    /// Its open PR conflicts with its base branch, as GitHub last said.
    pub conflicts_with_base: bool,
}

/// Where one queued run stands in the run queue (place 0: its turn came, it starts).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueuePlaceRecord {
    pub run_id: i64,
    pub place: u32,
}

fn next_run(feedback: &Feedback, quota: QuotaStatus) -> NextRun {
    let exhausted = quota.is_exhausted();
    let quota = QuotaRecord::from(quota);
    if let Some(state) = feedback.archived_as {
        return NextRun {
            kind: NextRunKind::None,
            label: "Run agent".to_owned(),
            enabled: false,
            reason: Some(format!(
                "this item is {}: put it back on the board to run on it",
                state.label()
            )),
            quota,
        };
    }
    if feedback.awaits_owner_approval() && code_run_kind(feedback.id, feedback.status).is_ok() {
        return NextRun {
            kind: NextRunKind::None,
            label: "Run agent".to_owned(),
            enabled: false,
            reason: Some(
                "someone else opened this on GitHub: approve it before the agent runs on it"
                    .to_owned(),
            ),
            quota,
        };
    }
    let left = match quota.left {
        Some(1) => " (1 run left)".to_owned(),
        Some(left) => format!(" ({left} runs left)"),
        None => String::new(),
    };
    match code_run_kind(feedback.id, feedback.status) {
        Err(refusal) => NextRun {
            kind: NextRunKind::None,
            label: if feedback.status == FeedbackStatus::Coding {
                "Running…".to_owned()
            } else {
                "Merged".to_owned()
            },
            enabled: false,
            reason: Some(refusal.to_string()),
            quota,
        },
        Ok(kind) => {
            let label = match kind {
                CodeRunKind::First => "Run agent",
                CodeRunKind::Iterate => "Update PR",
                CodeRunKind::Retry => "Retry",
            };
            NextRun {
                kind: kind.into(),
                label: format!("{label}{left}"),
                enabled: !exhausted,
                reason: exhausted.then(|| "the monthly run quota is used up".to_owned()),
                quota,
            }
        }
    }
}

/// Which of `runs` had their held commits pushed, and the lessons each carried.
async fn held_pushes_and_lessons(
    store: &handoff::store::Store,
    runs: &[handoff::domain::Run],
) -> Result<(Vec<i64>, Vec<RunLessonsRecord>), CodedError> {
    let mut pushed_held_runs = Vec::new();
    let mut run_lessons = Vec::new();
    for run in runs {
        let carried = store.lessons().lessons_carried_by(run.id).await?;
        if !carried.is_empty() {
            run_lessons.push(RunLessonsRecord {
                run_id: run.id.0,
                rules: carried.into_iter().map(|lesson| lesson.rule).collect(),
            });
        }
        if run.failure_code == Some(handoff::domain::RunFailureCode::CiChangeAwaitsApproval) {
            let pushed = store
                .runs()
                .held_push_approval(run.id)
                .await?
                .is_some_and(|approval| approval.pushed_at.is_some());
            if pushed {
                pushed_held_runs.push(run.id.0);
            }
        }
    }
    Ok((pushed_held_runs, run_lessons))
}

/// The newest version of each managed comment on the item's PR.
async fn comment_summaries(
    store: &handoff::store::Store,
    feedback: &handoff::domain::Feedback,
) -> Result<Vec<CommentSummary>, CodedError> {
    let mut comments = Vec::new();
    if let Some(pr_number) = feedback.pr_number {
        for kind in CommentKind::ALL {
            let Some(comment) = store
                .comments()
                .managed_comment(feedback.repo_id, pr_number, *kind)
                .await?
            else {
                continue;
            };
            let Some(version) = store.comments().latest_comment_version(comment.id).await? else {
                continue;
            };
            comments.push(CommentSummary {
                kind: *kind,
                version: version.number,
                version_id: version.id.0,
                origin: version.origin,
                written_by: version.written_by(),
                awaits_approval: version.awaits_owner_approval(),
                content_html: render_markdown(&version.content),
                content_raw: reveal_hidden_parts(&version.content),
                missing: comment.missing_since.is_some(),
            });
        }
    }
    Ok(comments)
}

/// Everything the detail panel shows about `id`.
pub async fn feedback_detail(core: &AppCore, id: i64) -> Result<FeedbackDetail, CodedError> {
    let store = &core.store;
    let id = FeedbackId(id);
    let feedback = store.feedback().feedback(id).await?;
    let thread = store
        .feedback()
        .follow_ups(id)
        .await?
        .into_iter()
        .map(|follow_up| ThreadEntry {
            id: follow_up.id.0,
            source: follow_up.source,
            author: follow_up.author_login,
            created_at: follow_up.created_at,
            body_html: render_markdown(&follow_up.body),
            body_raw: reveal_hidden_parts(&follow_up.body),
            origin: follow_up.origin,
            candidate: follow_up.candidate,
            included_in_prompts: follow_up.included_in_prompts,
            automatic: follow_up.automatic,
        })
        .collect();
    let runs = store
        .runs()
        .runs(&RunFilter {
            feedback_id: Some(id),
            ..RunFilter::default()
        })
        .await?;
    let (pushed_held_runs, run_lessons) = held_pushes_and_lessons(store, &runs).await?;
    let comments = comment_summaries(store, &feedback).await?;
    let quota = store
        .spend()
        .quota_status(feedback.repo_id, store.now())
        .await?;
    let mut queue_places = Vec::new();
    if runs.iter().any(|run| run.status == RunStatus::Queued) {
        let places = crate::run_queue::queue_places(store).await?;
        for run in &runs {
            if let Some(place) = places.get(&run.id) {
                queue_places.push(QueuePlaceRecord {
                    run_id: run.id.0,
                    place: *place,
                });
            }
        }
    }
    let automatic_updates = store
        .automatic_updates()
        .automatic_updates_of(feedback.id)
        .await?
        .into_iter()
        .map(AutomaticUpdateRecord::from)
        .collect();
    let conflicts_with_base = match feedback.pr_number {
        Some(number) => store
            .pull_requests()
            .pull_request(feedback.repo_id, number)
            .await?
            .is_some_and(|pull| {
                pull.state == handoff::domain::PullRequestState::Open
                    && pull.conflicts_with_base == Some(true)
            }),
        None => false,
    };
    Ok(FeedbackDetail {
        queue_places,
        automatic_updates,
        conflicts_with_base,
        body_html: render_markdown(&feedback.body),
        body_raw: reveal_hidden_parts(&format!("{}\n\n{}", feedback.title, feedback.body)),
        next_run: next_run(&feedback, quota),
        feedback: feedback.into(),
        thread,
        runs: runs.into_iter().map(RunRecord::from).collect(),
        pushed_held_runs,
        run_lessons,
        comments,
    })
}

/// A new feedback item from the app's form.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct NewFeedbackInput {
    pub repo: String,
    #[serde(default)]
    pub title: String,
    pub body: String,
}

pub async fn add_feedback(
    core: &AppCore,
    input: &NewFeedbackInput,
) -> Result<FeedbackRecord, CodedError> {
    let store = &core.store;
    let repo: RepoName = input
        .repo
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))?;
    Ok(store
        .feedback()
        .add_feedback(&NewFeedback {
            repo,
            title: Some(input.title.clone()).filter(|title| !title.trim().is_empty()),
            body: input.body.clone(),
            source: FeedbackSource::App,
            github_issue: None,
            opened_by_visitor: false,
        })
        .await?
        .into())
}

pub async fn add_follow_up(core: &AppCore, feedback_id: i64, text: &str) -> Result<(), CodedError> {
    let store = &core.store;
    store
        .feedback()
        .add_owner_follow_up(FeedbackId(feedback_id), text)
        .await?;
    Ok(())
}

/// The owner lets the agent run on an item a visitor opened.
pub async fn approve_feedback(core: &AppCore, feedback_id: i64) -> Result<(), CodedError> {
    let store = &core.store;
    store
        .feedback()
        .approve_feedback(FeedbackId(feedback_id))
        .await?;
    Ok(())
}

/// The owner lets a comment version someone else edited reach the next stage's prompt.
pub async fn approve_comment_version(core: &AppCore, version_id: i64) -> Result<(), CodedError> {
    let store = &core.store;
    store
        .comments()
        .approve_comment_version(handoff::domain::CommentVersionId(version_id))
        .await?;
    Ok(())
}

pub async fn include_follow_up(core: &AppCore, follow_up_id: i64) -> Result<(), CodedError> {
    let store = &core.store;
    store
        .feedback()
        .include_follow_up(FollowUpId(follow_up_id))
        .await?;
    Ok(())
}
