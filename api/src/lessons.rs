//! Lessons in the window and on the command line: a repository's proposals (each with
//! the corrections it came from, as diffs), its accepted lessons (on or off, when each
//! last reached a prompt, where it came from, flagged when its paths vanished or when it
//! went unused for long), the corrections waiting for the next lessons run, starting
//! one, the owner's decisions and edits, and the repository's lesson settings.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::runs_to_drive::LessonsToDrive;
use super::{invalid_input, AppCore};
use handoff::comment_diff::{text_line_changes, LineChange};
use handoff::domain::lesson::prompt_line;
use handoff::domain::lesson::{
    lesson_paths, one_paragraph, Correction, CorrectionText, Lesson, LessonId, LessonState,
    RULE_MAX_CHARS, WHY_MAX_CHARS,
};
use handoff::domain::RepoName;
use handoff::error_code::CodedError;
use handoff::github::endpoints::GithubEndpoints;
use handoff::pipeline::lessons_file::{LessonsFileAction, LessonsFileReport};
use handoff::pipeline::lessons_run::LessonsOptions;
use handoff::revealed_text::{reveal_hidden_parts, RevealedText};
use handoff::store::{LessonDecision, LessonEdit, LessonSettings};

/// One line of a correction's diff.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CorrectionLine {
    /// "same", "added" (the owner's) or "removed" (the agent's).
    pub change: String,
    pub text: String,
}

/// A correction of the owner's, as a lesson's source.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CorrectionRecord {
    /// `edit-12` or `follow-up-7`.
    pub id: String,
    /// "Your edit of the review on PR #7", "Your follow-up on f2c-… (PR #7)".
    pub words: String,
    /// An edit's lines, the agent's text against the owner's; empty for a follow-up.
    pub lines: Vec<CorrectionLine>,
    /// A follow-up's text; empty for an edit.
    pub text: String,
    pub created_at: String,
}

impl From<&Correction> for CorrectionRecord {
    fn from(correction: &Correction) -> Self {
        let on_pr = correction
            .pr_number
            .map(|number| format!(" on PR #{number}"))
            .unwrap_or_default();
        let (words, lines, text) = match &correction.text {
            CorrectionText::CommentEdit {
                comment,
                agent_text,
                owner_text,
            } => (
                format!("Your edit of the {comment}{on_pr}"),
                text_line_changes(agent_text, owner_text)
                    .into_iter()
                    .map(|line| CorrectionLine {
                        change: match line.change {
                            LineChange::Same => "same",
                            LineChange::Added => "added",
                            LineChange::Removed => "removed",
                        }
                        .to_owned(),
                        text: line.text,
                    })
                    .collect(),
                String::new(),
            ),
            CorrectionText::FollowUp { item, text } => (
                format!("Your follow-up on {item}{on_pr}"),
                Vec::new(),
                text.clone(),
            ),
        };
        CorrectionRecord {
            id: correction.id.to_string(),
            words,
            lines,
            text,
            created_at: correction.created_at.to_rfc3339(),
        }
    }
}

/// A lesson as the window shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LessonRecord {
    pub id: i64,
    pub rule: String,
    pub why: String,
    pub paths: Vec<String>,
    /// "proposed", "accepted" or "rejected".
    pub state: String,
    pub enabled: bool,
    /// Whether the next run carries it.
    pub carried: bool,
    /// Where it came from: "proposed by lessons run 12", "edited by you".
    pub origin: String,
    pub edited_by_owner: bool,
    pub proposed_by_run_id: Option<i64>,
    pub decided_at: Option<String>,
    /// When a run last carried it in its prompt.
    pub last_carried_at: Option<String>,
    /// Paths gone from the base branch: it is left out until the owner looks.
    pub vanished_paths: Vec<String>,
    /// Unused for 90 days: the window asks whether to keep it.
    pub asks_to_keep: bool,
    /// The corrections it came from.
    pub sources: Vec<CorrectionRecord>,
    /// The lesson as every later prompt gets it (its rule and paths), with what a
    /// rendered view would hide marked: what accepting it lets through.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::RevealedTextShape")
    )]
    pub rule_raw: RevealedText,
}

/// A repository's lessons.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LessonsView {
    pub repo: String,
    pub proposals: Vec<LessonRecord>,
    pub accepted: Vec<LessonRecord>,
    pub rejected: Vec<LessonRecord>,
    /// The corrections a lessons run would read now.
    pub new_corrections: Vec<CorrectionRecord>,
    /// The lessons run going now, if one is.
    pub active_run_id: Option<i64>,
    /// The last lessons run, and how it ended.
    pub last_run_id: Option<i64>,
    pub last_run_words: Option<String>,
    pub after_corrections: Option<u32>,
    pub lessons_file: String,
    /// The pull request that last carried the lessons file, and its address.
    pub lessons_file_pr_number: Option<u64>,
    pub lessons_file_pr_url: Option<String>,
}

/// How "Write to AGENTS.md" ended.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LessonsFileRecord {
    /// "opened", "updated" or "in_step".
    pub action: String,
    pub path: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
}

/// Brings `repo`'s lessons file in step with its accepted lessons through a PR; with
/// `replace_edits`, over an edit of its section made on GitHub (refused with
/// `owner_edits` otherwise).
pub async fn write_lessons_file(
    core: &AppCore,
    repo: &str,
    replace_edits: bool,
) -> Result<LessonsFileRecord, CodedError> {
    let report = write_lessons_file_of(core, &repo_name(repo)?, replace_edits).await?;
    Ok(LessonsFileRecord {
        action: match report.action {
            LessonsFileAction::Opened => "opened",
            LessonsFileAction::Updated => "updated",
            LessonsFileAction::InStep => "in_step",
        }
        .to_owned(),
        path: report.path,
        pr_number: report.pr_number,
        pr_url: report.pr_url,
    })
}

/// `lesson` as the window shows it, its sources read from the mirror.
pub async fn lesson_record(core: &AppCore, lesson: &Lesson) -> Result<LessonRecord, CodedError> {
    let corrections = core
        .store
        .lessons()
        .corrections_of(lesson.repo_id, None)
        .await?;
    Ok(record_of(lesson, &corrections, core.store.now()))
}

/// `lesson` as the window shows it, its sources found among `corrections` (those of its
/// repository; a source no longer found is left out), as it stands at `now`.
fn record_of(lesson: &Lesson, corrections: &[Correction], now: DateTime<Utc>) -> LessonRecord {
    let sources = lesson
        .sources
        .iter()
        .filter_map(|id| corrections.iter().find(|correction| correction.id == *id))
        .map(CorrectionRecord::from)
        .collect();
    let origin = match (lesson.proposed_by_run_id, lesson.edited_by_owner) {
        (Some(run), false) => format!("proposed by lessons run {run}"),
        (Some(run), true) => format!("proposed by lessons run {run}, edited by you"),
        (None, _) => "written by you".to_owned(),
    };
    LessonRecord {
        id: lesson.id.0,
        rule: lesson.rule.clone(),
        why: lesson.why.clone(),
        paths: lesson.paths.clone(),
        state: lesson.state.to_string(),
        enabled: lesson.enabled,
        carried: lesson.is_carried(),
        origin,
        edited_by_owner: lesson.edited_by_owner,
        proposed_by_run_id: lesson.proposed_by_run_id.map(|run| run.0),
        decided_at: lesson.decided_at.map(|at| at.to_rfc3339()),
        last_carried_at: lesson.last_carried_at.map(|at| at.to_rfc3339()),
        vanished_paths: lesson.missing_paths.clone().unwrap_or_default(),
        asks_to_keep: lesson.asks_to_keep(now),
        sources,
        rule_raw: reveal_hidden_parts(&prompt_line(lesson)),
    }
}

fn repo_name(text: &str) -> Result<RepoName, CodedError> {
    text.parse::<RepoName>()
        .map_err(|error| invalid_input(error.to_string()))
}

/// `repo`'s lessons, proposals and waiting corrections.
pub async fn lessons_view(core: &AppCore, repo: &str) -> Result<LessonsView, CodedError> {
    let repo = core
        .store
        .repositories()
        .repo_by_name(&repo_name(repo)?)
        .await?;
    let latest_run = core.store.lessons().latest_lessons_run(repo.id).await?;
    // The corrections a lessons run still going reads do not wait for the next one: it
    // may have recorded its proposals already. Should it fail, they wait again.
    let waiting = match &latest_run {
        Some(run) if run.status.is_active() => {
            core.store
                .lessons()
                .corrections_of(repo.id, Some(run.created_at))
                .await?
        }
        _ => core.store.lessons().new_corrections(repo.id).await?,
    };
    let mut view = LessonsView {
        repo: repo.name.full_name(),
        proposals: Vec::new(),
        accepted: Vec::new(),
        rejected: Vec::new(),
        new_corrections: waiting.iter().map(CorrectionRecord::from).collect(),
        active_run_id: None,
        last_run_id: None,
        last_run_words: None,
        after_corrections: None,
        lessons_file: String::new(),
        lessons_file_pr_number: None,
        lessons_file_pr_url: None,
    };
    // Every correction is read once; each lesson finds its sources among them.
    let corrections = core.store.lessons().corrections_of(repo.id, None).await?;
    for lesson in core.store.lessons().lessons_of(repo.id).await? {
        let record = record_of(&lesson, &corrections, core.store.now());
        match lesson.state {
            LessonState::Proposed => view.proposals.push(record),
            LessonState::Accepted => view.accepted.push(record),
            LessonState::Rejected => view.rejected.push(record),
        }
    }
    if let Some(run) = latest_run {
        if run.status.is_active() {
            view.active_run_id = Some(run.id.0);
        }
        view.last_run_id = Some(run.id.0);
        let output = core.store.runs().run_texts(run.id).await?.output;
        view.last_run_words = Some(match (&run.failure_message, &output) {
            (Some(failure), _) => format!("run {} failed: {failure}", run.id),
            (None, Some(output)) => format!("run {}: {output}", run.id),
            (None, None) => format!("run {} is {}", run.id, run.status),
        });
    }
    let settings = core.store.lessons().lesson_settings(repo.id).await?;
    view.after_corrections = settings.after_corrections;
    view.lessons_file = settings.file;
    if let Some(number) = core
        .store
        .lessons()
        .last_lessons_file_write(repo.id, true)
        .await?
        .and_then(|write| write.pr_number)
    {
        let web_base = GithubEndpoints::configured(&core.store)
            .await
            .map(|endpoints| endpoints.web_base)
            .map_err(CodedError::from)?;
        view.lessons_file_pr_number = Some(number);
        view.lessons_file_pr_url = Some(format!(
            "{web_base}/{}/pull/{number}",
            repo.name.full_name()
        ));
    }
    Ok(view)
}

/// Starts a lessons run on `repo` and drives it in the background; returns its id.
pub async fn suggest_lessons(core: &AppCore, repo: &str) -> Result<i64, CodedError> {
    let begun = begin_lessons(core, &repo_name(repo)?, LessonsOptions::default()).await?;
    let run_id = begun.run_id();
    begun.drive_in_background();
    Ok(run_id)
}

/// Begins a lessons run on `repo` for the caller to drive: it reads the owner's
/// corrections since the last one and proposes rules; refused before anything is spent
/// when there is nothing new to learn from.
pub async fn begin_lessons(
    core: &AppCore,
    repo: &RepoName,
    options: LessonsOptions,
) -> Result<LessonsToDrive, CodedError> {
    let pipeline = core.pipeline().await?;
    let begun = pipeline.lessons().begin_lessons(repo, options).await?;
    Ok(LessonsToDrive::new(begun, &pipeline))
}

/// Brings `repo`'s lessons file in step with its accepted lessons through a PR (see
/// [`write_lessons_file`]); what was done, as the pipeline reports it.
pub async fn write_lessons_file_of(
    core: &AppCore,
    repo: &RepoName,
    replace_edits: bool,
) -> Result<LessonsFileReport, CodedError> {
    Ok(core
        .pipeline()
        .await?
        .lessons()
        .write_lessons_file(repo, replace_edits)
        .await?)
}

/// What the owner decides, as the page sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum LessonDecisionWord {
    Accept,
    Reject,
    Enable,
    Disable,
    Keep,
}

/// Records the owner's decision about lesson `id`.
pub async fn decide_lesson(
    core: &AppCore,
    id: i64,
    decision: LessonDecisionWord,
) -> Result<LessonRecord, CodedError> {
    let decision = match decision {
        LessonDecisionWord::Accept => LessonDecision::Accept,
        LessonDecisionWord::Reject => LessonDecision::Reject,
        LessonDecisionWord::Enable => LessonDecision::Enable(true),
        LessonDecisionWord::Disable => LessonDecision::Enable(false),
        LessonDecisionWord::Keep => LessonDecision::Keep,
    };
    let lesson = core
        .store
        .lessons()
        .decide_lesson(LessonId(id), decision)
        .await?;
    lesson_record(core, &lesson).await
}

/// The owner's words for a lesson, as the page sends them (a field left out stays as it
/// is).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct LessonEditInput {
    pub rule: Option<String>,
    pub why: Option<String>,
    pub paths: Option<Vec<String>>,
}

/// Saves the owner's words for lesson `id`, checked as a proposal's are.
pub async fn edit_lesson(
    core: &AppCore,
    id: i64,
    input: &LessonEditInput,
) -> Result<LessonRecord, CodedError> {
    let rule = input.rule.as_deref().map(one_paragraph);
    if let Some(rule) = &rule {
        if rule.is_empty() {
            return Err(invalid_input("a lesson needs a rule".to_owned()));
        }
        if rule.chars().count() > RULE_MAX_CHARS {
            return Err(invalid_input(format!(
                "a rule is at most {RULE_MAX_CHARS} characters"
            )));
        }
    }
    let why = input.why.as_deref().map(|why| why.trim().to_owned());
    if why
        .as_ref()
        .is_some_and(|why| why.chars().count() > WHY_MAX_CHARS)
    {
        return Err(invalid_input(format!(
            "a reason is at most {WHY_MAX_CHARS} characters"
        )));
    }
    let paths = input
        .paths
        .as_ref()
        .map(|paths| {
            let given: Vec<String> = paths
                .iter()
                .filter(|path| !path.trim().is_empty())
                .cloned()
                .collect();
            lesson_paths(&given).map_err(|path| {
                invalid_input(format!(
                    "{path:?} is not a path inside the repository (relative, no ..)"
                ))
            })
        })
        .transpose()?;
    let lesson = core
        .store
        .lessons()
        .edit_lesson(LessonId(id), &LessonEdit { rule, why, paths })
        .await?;
    lesson_record(core, &lesson).await
}

/// A repository's lesson settings, as the page sends them.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LessonSettingsInput {
    /// After how many new corrections a lessons run starts by itself; none: on demand.
    pub after_corrections: Option<u32>,
    pub lessons_file: String,
}

/// Sets `repo`'s lesson settings.
pub async fn set_lesson_settings(
    core: &AppCore,
    repo: &str,
    input: &LessonSettingsInput,
) -> Result<(), CodedError> {
    let repo = core
        .store
        .repositories()
        .repo_by_name(&repo_name(repo)?)
        .await?;
    if input.after_corrections == Some(0) {
        return Err(invalid_input(
            "lessons start by themselves after one correction or more; leave it empty for on demand only"
                .to_owned(),
        ));
    }
    Ok(core
        .store
        .lessons()
        .set_lesson_settings(
            repo.id,
            &LessonSettings {
                after_corrections: input.after_corrections,
                file: input.lessons_file.clone(),
            },
        )
        .await?)
}
