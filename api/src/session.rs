//! The session with GitHub: who is signed in, a sync now or on the timer with the work
//! it begins (due lessons, automatic updates, the owner's `@handoff` commands), the runs
//! a gone process left behind, and the run events that become notifications. (Signing
//! in and out is in [`super::setup`].)

use serde::Serialize;

use super::records::*;
use super::AppCore;
use crate::runs_to_drive::{CodeRunToDrive, CommandRunToDrive, LessonsToDrive, RunToDrive};
use handoff::domain::run_event::RunEventKind;
use handoff::domain::{
    AutomaticDecision, AutomaticUpdate, FeedbackId, GithubCommand, RepoName, Run, Stage,
};
use handoff::error_code::CodedError;
use handoff::github::sign_in::auth_status;
use handoff::github::sync::{sync, SyncReport};
use handoff::pipeline::reconcile::{Reconciled, RunsLeftBehind, WaitingOnDriver};
use handoff::store::spend::BUDGET_NOTE;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    pub signed_in: bool,
    pub login: Option<String>,
    pub api_base: String,
    /// Whether the OAuth app's client id for signing in in the browser is set.
    pub device_client_id_set: bool,
    /// Connected repositories, for the first steps the window shows.
    pub connected_repos: usize,
    /// What the owner should know about the token's scopes (the `workflow` scope lets
    /// pushed commits change workflows), as GitHub said at sign-in.
    pub token_warning: Option<String>,
    /// Whether the token has the `workflow` scope (a token without it makes GitHub
    /// refuse pushes that change workflows).
    pub token_may_change_workflows: bool,
}

pub async fn session_status(core: &AppCore) -> Result<SessionStatus, CodedError> {
    let status = auth_status(&core.store, &core.secrets, false).await?;
    Ok(SessionStatus {
        signed_in: status.token_stored,
        login: status.login,
        api_base: status.api_base,
        device_client_id_set: core
            .store
            .settings()
            .setting(handoff::store::SettingKey::GithubDeviceClientId)
            .await?
            .is_some(),
        connected_repos: core.store.repositories().repos().await?.len(),
        token_warning: if status.token_stored {
            handoff::github::sign_in::stored_token_warning(&core.store).await?
        } else {
            None
        },
        token_may_change_workflows: status.token_stored
            && handoff::github::sign_in::stored_token_may_change_workflows(&core.store).await?,
    })
}

/// One sync with GitHub, then what it starts, each driven in the background: the
/// lessons runs that are due, the automatic updates of failing checks, and the runs of
/// the owner's `@handoff` commands.
pub async fn sync_now(core: &AppCore) -> Result<SyncSummary, CodedError> {
    let mut summary: SyncSummary = sync_with_github(core, None).await?.into();
    for lessons in begin_due_lessons(core).await? {
        summary.lessons_runs_started.push(lessons.run_id());
        lessons.drive_in_background();
    }
    let work = begin_work_from_github(core).await?;
    for update in &work.automatic_updates {
        summary
            .automatic_updates
            .push(AutomaticUpdateNote::of(update));
    }
    for run in work.automatic_runs {
        run.drive_in_background();
    }
    summary.commands_taken = u32::try_from(work.command_runs.len()).unwrap_or(u32::MAX);
    for run in work.command_runs {
        run.drive_in_background();
    }
    Ok(summary)
}

/// Mirrors GitHub into the local store once: every connected repository, or `repo`.
pub async fn sync_with_github(
    core: &AppCore,
    repo: Option<&RepoName>,
) -> Result<SyncReport, CodedError> {
    let github = core.github().await?;
    Ok(sync(&github, &core.store, repo).await?)
}

/// Begins the lessons runs that are due: of each repository that draws lessons by
/// itself after N corrections and has reached its number.
pub async fn begin_due_lessons(core: &AppCore) -> Result<Vec<LessonsToDrive>, CodedError> {
    let pipeline = core.pipeline().await?;
    Ok(pipeline
        .lessons()
        .begin_due_lessons()
        .await?
        .into_iter()
        .map(|begun| LessonsToDrive::new(begun, &pipeline))
        .collect())
}

/// The work the last sync found on GitHub, decided and begun for the caller to drive.
#[derive(Debug, Default)]
pub struct WorkFromGithub {
    /// What was decided about each failing check that may update its PR by itself.
    pub automatic_updates: Vec<AutomaticUpdate>,
    /// The automatic Update PR runs those decisions began.
    pub automatic_runs: Vec<CodeRunToDrive>,
    /// The owner's `@handoff` commands decided: taken, taken elsewhere, refused.
    pub commands: Vec<GithubCommand>,
    /// The runs those commands began; driving each answers its command on GitHub.
    pub command_runs: Vec<CommandRunToDrive>,
}

/// Decides the failing checks that may update their PRs by themselves, and claims and
/// carries out the owner's `@handoff` commands (one installation takes each).
pub async fn begin_work_from_github(core: &AppCore) -> Result<WorkFromGithub, CodedError> {
    let pipeline = core.pipeline().await?;
    let automatic = pipeline.code_runs().begin_automatic_updates().await?;
    let commands = pipeline.github_commands().begin_github_commands().await?;
    Ok(WorkFromGithub {
        automatic_updates: automatic.decided,
        automatic_runs: automatic
            .runs
            .into_iter()
            .map(|begun| CodeRunToDrive::new(begun, &pipeline))
            .collect(),
        commands: commands.decided,
        command_runs: commands
            .runs
            .into_iter()
            .map(|begun| CommandRunToDrive::new(begun, &pipeline))
            .collect(),
    })
}

/// What a sync decided about one reason to update a PR by itself, for a toast or a
/// notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AutomaticUpdateNote {
    pub feedback_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::AutomaticDecisionWords")
    )]
    pub decision: AutomaticDecision,
    /// Why the run started, or why none did.
    pub reason: String,
    pub run_id: Option<i64>,
}

impl AutomaticUpdateNote {
    fn of(update: &AutomaticUpdate) -> Self {
        AutomaticUpdateNote {
            feedback_id: update.feedback_id.0,
            decision: update.decision,
            reason: update.reason.clone().unwrap_or_default(),
            run_id: update.run_id.map(|id| id.0),
        }
    }

    /// The notification's title.
    pub fn title(&self) -> &'static str {
        match self.decision {
            AutomaticDecision::Started => "Automatic update started",
            AutomaticDecision::Stopped => "Automatic updates stopped",
            AutomaticDecision::Skipped | AutomaticDecision::Pending => "Automatic update skipped",
        }
    }
}

/// What a sync found, in counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SyncSummary {
    pub repos: u32,
    pub new_feedback: u32,
    pub new_visitor_follow_ups: u32,
    pub open_pull_requests: u32,
    pub new_follow_up_candidates: u32,
    pub status_changes: u32,
    pub comment_edits_found: u32,
    pub comments_missing: u32,
    pub outbox_sent: u32,
    /// What went wrong with one repository while the others synced.
    pub errors: Vec<String>,
    /// The lessons runs started because a repository's corrections reached its number.
    pub lessons_runs_started: Vec<i64>,
    /// What was decided about failing checks that ask for an
    /// automatic update.
    pub automatic_updates: Vec<AutomaticUpdateNote>,
    /// The owner's `@handoff` commands this installation took and began a run for.
    pub commands_taken: u32,
}

impl From<SyncReport> for SyncSummary {
    fn from(report: SyncReport) -> Self {
        let count = |length: usize| u32::try_from(length).unwrap_or(u32::MAX);
        SyncSummary {
            repos: report.repos,
            new_feedback: count(report.new_feedback.len()),
            new_visitor_follow_ups: report.new_visitor_follow_ups,
            open_pull_requests: report.open_pull_requests,
            new_follow_up_candidates: report.new_follow_up_candidates,
            status_changes: count(report.status_changes.len()),
            comment_edits_found: report.comment_edits_found,
            comments_missing: report.comments_missing,
            outbox_sent: report.outbox.sent,
            errors: report.errors,
            lessons_runs_started: Vec::new(),
            automatic_updates: Vec::new(),
            commands_taken: 0,
        }
    }
}

/// What clicking a notification opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotificationTarget {
    /// The workspace of a PR (a QA stage ended on it).
    PullRequest { repo: String, number: u64 },
    /// A feedback item (its code run ended).
    Feedback { id: i64 },
    /// A repository's lessons (a lessons run ended).
    Lessons { repo: String },
}

/// A run event as a notification: its title, its text, and what a click opens.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RunNotice {
    #[serde(flatten)]
    pub event: RunEventRecord,
    pub title: String,
    pub target: Option<NotificationTarget>,
}

/// A run event's notification title, and what a click on it opens.
async fn notice_title_and_target(
    core: &AppCore,
    run: &Run,
    kind: RunEventKind,
    feedback_id: Option<FeedbackId>,
) -> Result<(String, Option<NotificationTarget>), CodedError> {
    let failed = kind == RunEventKind::RunFailed;
    Ok(match (run.stage, run.pr_number) {
        (Stage::Code, _) if run.started_because.is_some() => (
            match kind {
                RunEventKind::PullRequestOpened => "PR opened automatically",
                RunEventKind::PullRequestUpdated => "PR updated automatically",
                RunEventKind::RunFailed => "Automatic update failed",
                RunEventKind::RunSucceeded => "Automatic update finished",
            }
            .to_owned(),
            feedback_id.map(|id| NotificationTarget::Feedback { id: id.0 }),
        ),
        (Stage::Code, _) => (
            match kind {
                RunEventKind::PullRequestOpened => "PR opened",
                RunEventKind::PullRequestUpdated => "PR updated",
                RunEventKind::RunFailed => "Run failed",
                RunEventKind::RunSucceeded => "Run finished",
            }
            .to_owned(),
            feedback_id.map(|id| NotificationTarget::Feedback { id: id.0 }),
        ),
        (Stage::Lessons, _) => (
            if failed {
                "Lessons run failed"
            } else {
                "Lessons proposed"
            }
            .to_owned(),
            Some(NotificationTarget::Lessons {
                repo: core
                    .store
                    .repositories()
                    .repo(run.repo_id)
                    .await?
                    .name
                    .full_name(),
            }),
        ),
        (stage, pr_number) => {
            let repo = core.store.repositories().repo(run.repo_id).await?;
            let name = stage.to_string();
            let mut title = name[..1].to_uppercase() + &name[1..];
            title.push_str(if failed { " failed" } else { " finished" });
            (
                title,
                pr_number.map(|number| NotificationTarget::PullRequest {
                    repo: repo.name.full_name(),
                    number,
                }),
            )
        }
    })
}

/// Events not yet shown (each handed out once), as notifications.
pub async fn take_run_notices(core: &AppCore) -> Result<Vec<RunNotice>, CodedError> {
    let mut notices = Vec::new();
    for event in core.store.runs().take_unseen_run_events().await? {
        let run = core.store.runs().run(event.run_id).await?;
        let (title, target) =
            notice_title_and_target(core, &run, event.kind, event.feedback_id).await?;
        let event: RunEventRecord = event.into();
        // A budget that reached 80% with this run says so once, beside the run's end
        // (each run's one event).
        for note in &run.notes {
            if let Some(budget) = note.strip_prefix(BUDGET_NOTE) {
                notices.push(RunNotice {
                    event: RunEventRecord {
                        message: budget.to_owned(),
                        ..event.clone()
                    },
                    title: "Budget at 80%".to_owned(),
                    target: target.clone(),
                });
            }
        }
        // An automatic run says why it started, in its notification too.
        let event = match &run.started_because {
            Some(because) if run.stage == Stage::Code => RunEventRecord {
                message: format!("{} (started because {because})", event.message),
                ..event
            },
            _ => event,
        };
        notices.push(RunNotice {
            event,
            title,
            target,
        });
    }
    Ok(notices)
}

/// Drops the kept working copies of merged items, and those no run used for their
/// retention period; returns how many went.
pub async fn prune_kept_copies(core: &AppCore) -> Result<usize, CodedError> {
    let pipeline = core.pipeline().await?;
    Ok(pipeline.kept_copies().prune_kept_copies().await?.len())
}

/// What the window did about runs nothing drives any more.
#[derive(Debug, Default)]
pub struct RunsPickedUp {
    /// Runs whose process is gone or silent, ended with why.
    pub ended: Vec<Reconciled>,
    /// Queued runs whose process is gone, taken over and driven here.
    pub taken_over: Vec<i64>,
}

/// The runs a gone process left behind, as this process finds them: those ended (their
/// process gone or silent, so that they hold no slot), the queued ones taken over for
/// this process to drive, and the queued ones that wait for a process that may still
/// live.
#[derive(Debug, Default)]
pub struct RunsLeftBehindHere {
    pub ended: Vec<Reconciled>,
    pub taken_over: Vec<RunToDrive>,
    pub waiting_on_others: Vec<WaitingOnDriver>,
}

/// Ends the runs whose process is gone (a crash, a killed command) or silent, and takes
/// over the queued runs whose process is gone, for the caller to drive. Needs the
/// pipeline (and so a sign-in) only when there is something to do.
pub async fn take_over_runs_left_behind(core: &AppCore) -> Result<RunsLeftBehindHere, CodedError> {
    let stale_before = handoff::pipeline::reconcile::silent_since(&core.store);
    let left = RunsLeftBehind::find(&core.store, stale_before).await?;
    if !left.has_work() {
        return Ok(RunsLeftBehindHere {
            waiting_on_others: left.waiting_on_others,
            ..RunsLeftBehindHere::default()
        });
    }
    let pipeline = core.pipeline().await?;
    let picked = pipeline
        .run_queue()
        .pick_up_runs_left_behind(stale_before)
        .await?;
    Ok(RunsLeftBehindHere {
        ended: picked.ended,
        taken_over: picked
            .taken_over
            .into_iter()
            .map(|run| RunToDrive::new(run, &pipeline))
            .collect(),
        waiting_on_others: picked.waiting_on_others,
    })
}

/// Ends the runs whose process is gone (a crash, a killed command) or silent, so that
/// they hold no slot, and takes over the queued runs whose process is gone, driving
/// them here in the background. Used when the app starts and every few seconds after.
pub async fn pick_up_runs_left_behind(core: &AppCore) -> Result<RunsPickedUp, CodedError> {
    let picked = take_over_runs_left_behind(core).await?;
    let mut taken_over = Vec::new();
    for run in picked.taken_over {
        taken_over.push(run.run_id());
        run.drive_in_background();
    }
    Ok(RunsPickedUp {
        ended: picked.ended,
        taken_over,
    })
}
