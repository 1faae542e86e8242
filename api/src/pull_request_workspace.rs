//! A PR's workspace in the window: the stage strip (each stage's state, its button with
//! the quota it takes, its live run), each stage's comment as an editable pane with the
//! agent's original and the changes beside it, the test results with their issues, and
//! starting a stage — a re-run over the owner's edit of its comment is refused with a
//! code the window turns into a question, and asked again with `force`.

use serde::Serialize;

use super::records::{
    changed_lines, ChangedLineRecord, CommentVersionRecord, PullRequestRecord, QuotaRecord,
    RunRecord,
};
use super::runs_to_drive::QaToDrive;
use super::{invalid_input, AppCore};
use handoff::comment_diff::line_changes;
use handoff::domain::{
    CommentKind, CommentVersion, OutboxState, Repo, RepoName, Run, RunId, Stage,
};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::comment_publishing::{read_back, CommentPlace};
use handoff::github::GithubEndpoints;
use handoff::markdown::render_markdown;
use handoff::pipeline::qa_run::{QaOptions, QaStage};
use handoff::pull_request_workspace::{
    pull_request_workspace, CommentState, PullRequestWorkspace, StageCard, StageState,
};
use handoff::store::{QuotaStatus, StoreError};

/// One card of the stage strip.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StageCardView {
    #[cfg_attr(feature = "page-contract", ts(as = "crate::page_contract::StageWords"))]
    pub stage: Stage,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::StageStateShape")
    )]
    pub state: StageState,
    /// The state in words: "not run", "running", "done", "failed", "edited by you",
    /// "out of date".
    pub state_words: &'static str,
    pub edited_by_you: bool,
    pub out_of_date: Option<String>,
    /// "reads your edit of the review", when the comment this stage reads is yours.
    pub reads_your_edit: Option<String>,
    pub button_label: String,
    pub button_enabled: bool,
    /// Why the button is disabled, or what pressing it takes.
    pub hint: String,
    pub quota_units: u32,
    pub last_run: Option<RunRecord>,
    pub active_run_id: Option<i64>,
    /// What the last run said out loud (a missing input, a moved PR, …).
    pub notes: Vec<String>,
}

/// An edit of a pane waiting in the outbox.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UnsentEdit {
    pub entry_id: i64,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::OutboxStateWords")
    )]
    pub state: OutboxState,
    pub attempts: u32,
    pub last_error: Option<String>,
}

/// One stage's comment as an editable pane.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CommentPane {
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::CommentKindWords")
    )]
    pub kind: CommentKind,
    /// The stage that writes it, and the one that reads it next.
    #[cfg_attr(feature = "page-contract", ts(as = "crate::page_contract::StageWords"))]
    pub written_by_stage: Stage,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::StageWords>")
    )]
    pub read_by_stage: Option<Stage>,
    pub header: &'static str,
    pub version: Option<CommentVersionRecord>,
    pub versions: u32,
    pub content: String,
    pub content_html: String,
    pub agent_original: Option<String>,
    pub changes_from_agent: Vec<ChangedLineRecord>,
    /// "the agent", "you", or "@login".
    pub written_by: Option<String>,
    pub edited_by_you: bool,
    pub awaits_approval: bool,
    pub missing: bool,
    pub unsent: Vec<UnsentEdit>,
}

/// One scenario of the latest test run.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TestResultRow {
    pub name: String,
    pub passed: bool,
    pub evidence_html: String,
    pub issue_number: Option<u64>,
    pub issue_url: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TestResultsView {
    pub run_id: i64,
    pub passed: usize,
    pub failed: usize,
    pub rows: Vec<TestResultRow>,
}

/// Everything the workspace shows.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    pub repo: String,
    pub pull: PullRequestRecord,
    pub pr_url: String,
    pub from_fork: bool,
    pub stages: Vec<StageCardView>,
    pub panes: Vec<CommentPane>,
    pub test_results: Option<TestResultsView>,
    pub quota: QuotaRecord,
    pub source: WorkspaceSource,
    pub note: Option<String>,
}

/// Where a workspace's comments were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceSource {
    /// Just read from GitHub.
    Github,
    /// Only the mirror was read (offline, or GitHub did not answer).
    Local,
}

pub(super) async fn repo_named(core: &AppCore, repo: &str) -> Result<Repo, CodedError> {
    let name: RepoName = repo
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))?;
    Ok(core.store.repositories().repo_by_name(&name).await?)
}

/// Reads the PR and its stage comments from GitHub into the mirror; says why not when
/// it cannot (the workspace then shows the mirror).
async fn refresh_from_github(core: &AppCore, repo: &Repo, number: u64) -> Option<String> {
    let github = match core.github().await {
        Ok(github) => github,
        Err(error) => return Some(format!("{}: showing what is stored here", error.message)),
    };
    let refreshed = async {
        let (pull, _) = github.pull_request(&core.store, &repo.name, number).await?;
        core.store
            .pull_requests()
            .mirror_pull_request(repo.id, &pull.mirrored())
            .await?;
        for kind in handoff::pull_request_workspace::STAGE_COMMENTS {
            let place = CommentPlace {
                repo,
                pr_number: number,
                kind,
            };
            read_back(&github, &core.store, place).await?;
        }
        Ok::<_, handoff::github::GithubError>(())
    }
    .await;
    match refreshed {
        Ok(()) => None,
        Err(error) => {
            tracing::warn!(repo = %repo.name, number, %error, "the workspace could not be read from GitHub");
            Some(format!(
                "GitHub could not be read ({error}): showing what is stored here"
            ))
        }
    }
}

/// The workspace of `repo`'s PR `number`; with `refresh`, read from GitHub first.
pub async fn open_workspace(
    core: &AppCore,
    repo_name: &str,
    number: u64,
    refresh: bool,
) -> Result<WorkspaceView, CodedError> {
    let repo = repo_named(core, repo_name).await?;
    let note = if refresh {
        refresh_from_github(core, &repo, number).await
    } else {
        None
    };
    let workspace = mirrored_workspace(core, &repo, number).await?;
    let web_base = GithubEndpoints::configured(&core.store)
        .await
        .map(|endpoints| endpoints.web_base)
        .map_err(CodedError::from)?;
    let repo_web = format!("{web_base}/{}", repo.name.full_name());
    let stages = workspace
        .stages
        .iter()
        .map(|card| stage_card_view(card, &workspace.quota))
        .collect();
    let panes = workspace.comments.iter().map(comment_pane).collect();
    let test_results = workspace.test_results.as_ref().map(|results| {
        let failed = results.results.iter().filter(|r| !r.result.passed).count();
        TestResultsView {
            run_id: results.run_id.0,
            passed: results.results.len() - failed,
            failed,
            rows: results
                .results
                .iter()
                .map(|result| TestResultRow {
                    name: result.result.name.clone(),
                    passed: result.result.passed,
                    evidence_html: render_markdown(&result.result.evidence),
                    issue_number: result.issue_number,
                    issue_url: result
                        .issue_number
                        .map(|issue| format!("{repo_web}/issues/{issue}")),
                })
                .collect(),
        }
    });
    Ok(WorkspaceView {
        repo: repo.name.full_name(),
        pr_url: format!("{repo_web}/pull/{number}"),
        from_fork: workspace.pull.from_fork(),
        pull: workspace.pull.into(),
        stages,
        panes,
        test_results,
        quota: workspace.quota.into(),
        source: if refresh && note.is_none() {
            WorkspaceSource::Github
        } else {
            WorkspaceSource::Local
        },
        note,
    })
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Review => "review",
        Stage::Plan => "plan",
        Stage::Test => "test",
        Stage::Fix => "fix",
        Stage::FullAuto => "full auto",
        Stage::Code => "code",
        Stage::Lessons => "lessons",
    }
}

fn comment_words(kind: CommentKind) -> &'static str {
    match kind {
        CommentKind::Review => "the review",
        CommentKind::Plan => "the test plan",
        CommentKind::Results => "the results",
        CommentKind::FollowUps => "the follow-ups",
    }
}

fn stage_card_view(card: &StageCard, quota: &QuotaStatus) -> StageCardView {
    let units = card.quota_units;
    let runs = |units: u32| {
        if units == 1 {
            "1 run".to_owned()
        } else {
            format!("{units} runs")
        }
    };
    let name = stage_name(card.stage);
    let ran_before = card.last_run.is_some();
    let mut button_label = match card.stage {
        Stage::FullAuto => format!("Run full auto · up to {}", runs(units)),
        _ if ran_before => format!("Run {name} again · {}", runs(units)),
        _ => format!("Run {name} · {}", runs(units)),
    };
    let reads_your_edit = card
        .reads_your_edit
        .map(|kind| format!("reads your edit of {}", comment_words(kind)));
    if let Some(reads) = &reads_your_edit {
        button_label.push_str(&format!(" · {reads}"));
    }
    let quota_left = quota.left.map(|left| format!("{left} left this month"));
    let (enabled, hint) = if card.active_run.is_some() {
        (
            false,
            "running now: follow its log, or cancel it".to_owned(),
        )
    } else if let Some(blocked) = &card.blocked {
        (false, blocked.clone())
    } else if quota.left.is_some_and(|left| left < units) {
        (
            false,
            format!(
                "the monthly quota has {} left; this takes {}",
                runs(quota.left.unwrap_or_default()),
                runs(units)
            ),
        )
    } else {
        let mut hint = format!("takes {}", runs(units));
        if let Some(left) = quota_left {
            hint.push_str(&format!(" ({left})"));
        }
        if card.edited_by_you {
            hint.push_str(if card.stage == Stage::FullAuto {
                ": you edited a comment it writes; you are asked first, and your text stays in the history"
            } else {
                ": you edited its comment; you are asked first, and your text stays in the history"
            });
        }
        (true, hint)
    };
    StageCardView {
        stage: card.stage,
        state: card.state,
        state_words: card.state.words(),
        edited_by_you: card.edited_by_you,
        out_of_date: card.out_of_date.clone(),
        reads_your_edit,
        button_label,
        button_enabled: enabled,
        hint,
        quota_units: units,
        notes: card
            .last_run
            .as_ref()
            .map(|run| run.notes.clone())
            .unwrap_or_default(),
        active_run_id: card.active_run.as_ref().map(|run| run.id.0),
        last_run: card.last_run.clone().map(RunRecord::from),
    }
}

fn comment_pane(state: &CommentState) -> CommentPane {
    let (written_by_stage, read_by_stage) = match state.kind {
        CommentKind::Review => (Stage::Review, Some(Stage::Plan)),
        CommentKind::Plan => (Stage::Plan, Some(Stage::Test)),
        CommentKind::Results | CommentKind::FollowUps => (Stage::Test, None),
    };
    let content = state
        .latest
        .as_ref()
        .map(|version| version.whole_content().to_owned())
        .unwrap_or_default();
    CommentPane {
        kind: state.kind,
        written_by_stage,
        read_by_stage,
        header: state.kind.header(),
        versions: state.versions,
        content_html: render_markdown(&content),
        content,
        agent_original: state
            .agent_original
            .as_ref()
            .map(|version| version.whole_content().to_owned()),
        changes_from_agent: match (&state.agent_original, &state.latest) {
            (Some(agent), Some(latest)) => changed_lines(line_changes(agent, latest)),
            _ => Vec::new(),
        },
        written_by: state.latest.as_ref().map(CommentVersion::written_by),
        edited_by_you: state.latest.as_ref().is_some_and(|version| {
            version.origin != handoff::domain::VersionOrigin::Agent && !version.edited_by_other
        }),
        awaits_approval: state
            .latest
            .as_ref()
            .is_some_and(CommentVersion::awaits_owner_approval),
        missing: state.missing_since.is_some(),
        unsent: state
            .unsent
            .iter()
            .map(|entry| UnsentEdit {
                entry_id: entry.id.0,
                state: entry.state,
                attempts: entry.attempts,
                last_error: entry.last_error.clone(),
            })
            .collect(),
        version: state.latest.clone().map(CommentVersionRecord::from),
    }
}

/// Starts `stage` (a QA stage or `full-auto`) on the PR and drives it in the background;
/// returns its run's id at once. A re-run over the owner's edit of the stage's comment
/// is refused with [`ErrorCode::OwnerEdits`] unless `force`.
pub async fn start_qa_stage(
    core: &AppCore,
    repo_name: &str,
    number: u64,
    stage_name: &str,
    force: bool,
) -> Result<i64, CodedError> {
    let stage: Stage =
        stage_name
            .parse()
            .map_err(|error: handoff::domain::stored_text::UnknownWord| {
                invalid_input(error.to_string())
            })?;
    if stage != Stage::FullAuto && QaStage::of(stage).is_none() {
        return Err(CodedError {
            code: ErrorCode::InvalidInput,
            message: format!("{stage} is not a QA stage"),
            fix: None,
        });
    }
    let repo = repo_named(core, repo_name).await?;
    let begun = begin_qa(
        core,
        &repo.name,
        number,
        stage,
        QaOptions {
            force,
            ..QaOptions::default()
        },
    )
    .await?;
    let run_id = begun.run_id();
    begun.drive_in_background();
    Ok(run_id)
}

/// PR `number` of `repo` with its QA stages, its comments and its test results, as the
/// mirror holds them (the last sync's, or the window's last read).
async fn mirrored_workspace(
    core: &AppCore,
    repo: &Repo,
    number: u64,
) -> Result<PullRequestWorkspace, CodedError> {
    let pull = core
        .store
        .pull_requests()
        .pull_request(repo.id, number)
        .await?
        .ok_or_else(|| StoreError::PullRequestNotFound {
            repo: repo.name.full_name(),
            number,
        })?;
    Ok(pull_request_workspace(&core.store, repo, pull).await?)
}

/// PR `number` of repository `repo` with its QA stages, as the mirror holds it.
pub async fn workspace_in_the_mirror(
    core: &AppCore,
    repo: &RepoName,
    number: u64,
) -> Result<PullRequestWorkspace, CodedError> {
    let repo = core.store.repositories().repo_by_name(repo).await?;
    mirrored_workspace(core, &repo, number).await
}

/// Begins QA stage `stage` (or the chain of them, `full-auto`) on PR `number` of `repo`
/// for the caller to drive: refused before anything is spent when the PR is not open,
/// the stage would replace the owner's edit of its comment (unless `options.force`),
/// or someone else's code would run without a sandbox.
pub async fn begin_qa(
    core: &AppCore,
    repo: &RepoName,
    number: u64,
    stage: Stage,
    options: QaOptions,
) -> Result<QaToDrive, CodedError> {
    let pipeline = core.pipeline().await?;
    let begun = pipeline
        .qa_runs()
        .begin_qa(repo, number, stage, options)
        .await?;
    Ok(QaToDrive::new(begun, &pipeline))
}

/// The runs of the stages of chain `run_id` (full auto), in order.
pub async fn stage_runs_of_chain(core: &AppCore, run_id: i64) -> Result<Vec<Run>, CodedError> {
    Ok(core.store.stage_runs().child_runs(RunId(run_id)).await?)
}
