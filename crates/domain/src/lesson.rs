//! Lessons: short rules drawn from the owner's own corrections, which every later run of
//! the repository carries once the owner accepts them.
//!
//! This file owns the words and rules: what a correction is and how it is named, what a
//! lesson is and when it reaches a prompt (accepted, on, and with every path it names
//! still on the base branch), when an unused one asks whether to keep it, how the
//! lessons run's output is read (strictly: malformed output fails the run), and the
//! section of standing instructions a prompt gets (short: the newest win, and it says
//! how many were left out).

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::comment_version::CommentVersionId;
use super::follow_up::FollowUpId;
use super::ids::{RepoId, RunId};

/// The row id of a lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct LessonId(pub i64);

impl fmt::Display for LessonId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

crate::stored_text_enum! {
    /// Where a lesson stands with the owner.
    pub enum LessonState as "lesson state" {
        /// Proposed by a lessons run; reaches no prompt until the owner accepts it.
        Proposed => "proposed",
        /// Accepted by the owner: carried by every later run while it is on.
        Accepted => "accepted",
        /// Rejected by the owner; kept so that the history of proposals stays.
        Rejected => "rejected",
    }
}

/// How a correction is named in a lesson's sources and in the lessons run's input:
/// `edit-12` (the owner's version 12 of a managed comment) or `follow-up-7`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CorrectionId {
    /// The owner's edit of a comment the agent wrote, by the id of the owner's version.
    Edit(CommentVersionId),
    /// The owner's follow-up instruction on an item whose PR was open.
    FollowUp(FollowUpId),
}

impl fmt::Display for CorrectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorrectionId::Edit(version) => write!(f, "edit-{}", version.0),
            CorrectionId::FollowUp(follow_up) => write!(f, "follow-up-{}", follow_up.0),
        }
    }
}

/// A correction name that is not `edit-N` or `follow-up-N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} names no correction (they are named edit-N or follow-up-N)")]
pub struct NotACorrectionId(pub String);

impl FromStr for CorrectionId {
    type Err = NotACorrectionId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let number = |rest: &str| rest.parse::<i64>().ok().filter(|n| *n > 0);
        if let Some(id) = text.strip_prefix("edit-").and_then(number) {
            return Ok(CorrectionId::Edit(CommentVersionId(id)));
        }
        if let Some(id) = text.strip_prefix("follow-up-").and_then(number) {
            return Ok(CorrectionId::FollowUp(FollowUpId(id)));
        }
        Err(NotACorrectionId(text.to_owned()))
    }
}

impl Serialize for CorrectionId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What the owner corrected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CorrectionText {
    /// The owner changed the agent's text of a PR comment.
    CommentEdit {
        /// The comment's kind in words: "review", "plan", "results".
        comment: String,
        agent_text: String,
        owner_text: String,
    },
    /// The owner told the agent what to change on an item whose PR was open.
    FollowUp { item: String, text: String },
}

/// One correction of the owner's. Only the owner's own text is ever one: a visitor's
/// follow-up, or an edit by anyone else, never is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Correction {
    pub id: CorrectionId,
    pub pr_number: Option<u64>,
    pub text: CorrectionText,
    pub created_at: DateTime<Utc>,
}

impl Correction {
    /// The correction as the lessons run reads it: its name, where it was made, and the
    /// agent's text against the owner's (a unified diff) or the instruction.
    pub fn for_prompt(&self) -> String {
        let place = self
            .pr_number
            .map(|number| format!(" on PR #{number}"))
            .unwrap_or_default();
        match &self.text {
            CorrectionText::CommentEdit {
                comment,
                agent_text,
                owner_text,
            } => format!(
                "## {}: the owner edited the agent's {comment} comment{place}\n\n```diff\n{}```\n",
                self.id,
                unified_text_diff(agent_text, owner_text)
            ),
            CorrectionText::FollowUp { item, text } => format!(
                "## {}: the owner's follow-up instruction on item {item}{place}\n\n{}\n",
                self.id,
                text.trim()
            ),
        }
    }
}

/// A unified diff of two texts (the agent's, then the owner's), lines marked `-` and `+`.
pub fn unified_text_diff(from: &str, to: &str) -> String {
    let from = format!("{}\n", from.trim_end_matches('\n'));
    let to = format!("{}\n", to.trim_end_matches('\n'));
    similar::TextDiff::from_lines(&from, &to)
        .unified_diff()
        .header("the agent's text", "the owner's text")
        .to_string()
}

/// A lesson as the mirror holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lesson {
    pub id: LessonId,
    pub repo_id: RepoId,
    pub rule: String,
    pub why: String,
    pub paths: Vec<String>,
    pub sources: Vec<CorrectionId>,
    pub state: LessonState,
    pub enabled: bool,
    pub proposed_by_run_id: Option<RunId>,
    pub edited_by_owner: bool,
    pub created_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
    pub last_carried_at: Option<DateTime<Utc>>,
    /// Paths found missing on the base branch before a run, until the owner looks.
    pub missing_paths: Option<Vec<String>>,
    pub kept_at: Option<DateTime<Utc>>,
}

/// How long an accepted lesson may go without reaching a prompt before it asks whether
/// to keep it.
pub const UNUSED_LESSON_DAYS: i64 = 90;

impl Lesson {
    /// Whether the next run carries it: accepted, on, and not flagged for vanished paths.
    pub fn is_carried(&self) -> bool {
        self.state == LessonState::Accepted && self.enabled && self.missing_paths.is_none()
    }

    /// Whether it asks the owner to keep it: accepted and on, but in no prompt for
    /// [`UNUSED_LESSON_DAYS`] (counted from its last use, its acceptance or the owner's
    /// last "keep", whichever is latest).
    pub fn asks_to_keep(&self, now: DateTime<Utc>) -> bool {
        if self.state != LessonState::Accepted || !self.enabled {
            return false;
        }
        let since = [self.last_carried_at, self.decided_at, self.kept_at]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(self.created_at);
        now - since > Duration::days(UNUSED_LESSON_DAYS)
    }
}

/// What a lessons run proposes, read from its `lessons.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LessonProposal {
    pub rule: String,
    pub why: String,
    pub sources: Vec<CorrectionId>,
    pub paths: Vec<String>,
}

/// The most proposals one lessons run may make.
pub const MOST_PROPOSALS: usize = 20;
/// The longest rule, in characters.
pub const RULE_MAX_CHARS: usize = 500;
/// The longest reason, in characters.
pub const WHY_MAX_CHARS: usize = 2_000;
/// The most paths a lesson may name, and the longest path.
pub const MOST_PATHS: usize = 20;
const PATH_MAX_CHARS: usize = 300;

/// Why a lessons run's output was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LessonsOutputError {
    #[error("lessons.json is not the JSON asked for: {0}")]
    NotJson(String),
    #[error("lessons.json proposes {count} lessons; at most {MOST_PROPOSALS} are taken")]
    TooMany { count: usize },
    #[error("lesson {position} has no rule")]
    EmptyRule { position: usize },
    #[error("lesson {position}'s rule is {chars} characters long; at most {RULE_MAX_CHARS}")]
    RuleTooLong { position: usize, chars: usize },
    #[error("lesson {position}'s reason is {chars} characters long; at most {WHY_MAX_CHARS}")]
    WhyTooLong { position: usize, chars: usize },
    #[error("lesson {position} names no correction it comes from")]
    NoSources { position: usize },
    #[error(
        "lesson {position} names {source_name:?}, which is not one of the corrections it was given"
    )]
    UnknownSource {
        position: usize,
        source_name: String,
    },
    #[error(
        "lesson {position} names the path {path:?}, which is not a path inside the repository"
    )]
    BadPath { position: usize, path: String },
    #[error("lesson {position} names {count} paths; at most {MOST_PATHS}")]
    TooManyPaths { position: usize, count: usize },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonsFile {
    lessons: Vec<ProposedLesson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposedLesson {
    rule: String,
    #[serde(default)]
    why: String,
    sources: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

/// Reads a lessons run's `lessons.json` (`{"lessons": [{"rule", "why", "sources",
/// "paths"}]}`), refusing anything malformed: a rule must be there and short, every
/// source must be one of the corrections the run was `given`, every path relative and
/// inside the repository. An empty list is an answer: nothing to learn.
pub fn read_lesson_proposals(
    text: &str,
    given: &[CorrectionId],
) -> Result<Vec<LessonProposal>, LessonsOutputError> {
    let file: LessonsFile = serde_json::from_str(text)
        .map_err(|error| LessonsOutputError::NotJson(error.to_string()))?;
    if file.lessons.len() > MOST_PROPOSALS {
        return Err(LessonsOutputError::TooMany {
            count: file.lessons.len(),
        });
    }
    file.lessons
        .into_iter()
        .enumerate()
        .map(|(index, proposed)| {
            let position = index + 1;
            let rule = one_paragraph(&proposed.rule);
            if rule.is_empty() {
                return Err(LessonsOutputError::EmptyRule { position });
            }
            let chars = rule.chars().count();
            if chars > RULE_MAX_CHARS {
                return Err(LessonsOutputError::RuleTooLong { position, chars });
            }
            let why = proposed.why.trim().to_owned();
            let chars = why.chars().count();
            if chars > WHY_MAX_CHARS {
                return Err(LessonsOutputError::WhyTooLong { position, chars });
            }
            if proposed.sources.is_empty() {
                return Err(LessonsOutputError::NoSources { position });
            }
            let mut sources = Vec::new();
            for name in &proposed.sources {
                let known = name
                    .trim()
                    .parse::<CorrectionId>()
                    .ok()
                    .filter(|id| given.contains(id));
                match known {
                    Some(id) if !sources.contains(&id) => sources.push(id),
                    Some(_) => {}
                    None => {
                        return Err(LessonsOutputError::UnknownSource {
                            position,
                            source_name: name.clone(),
                        })
                    }
                }
            }
            let paths = lesson_paths(&proposed.paths)
                .map_err(|path| LessonsOutputError::BadPath { position, path })?;
            if paths.len() > MOST_PATHS {
                return Err(LessonsOutputError::TooManyPaths {
                    position,
                    count: paths.len(),
                });
            }
            Ok(LessonProposal {
                rule,
                why,
                sources,
                paths,
            })
        })
        .collect()
}

/// `paths` checked and tidied (no leading `./`, no trailing `/`, no repeats); the first
/// that is not a relative path inside the repository is the error.
pub fn lesson_paths(paths: &[String]) -> Result<Vec<String>, String> {
    let mut tidy = Vec::new();
    for path in paths {
        let trimmed = path.trim().trim_start_matches("./").trim_end_matches('/');
        let inside = !trimmed.is_empty()
            && trimmed.chars().count() <= PATH_MAX_CHARS
            && !trimmed.starts_with('/')
            && !trimmed.contains('\\')
            && !trimmed.chars().any(char::is_control)
            && trimmed
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
        if !inside {
            return Err(path.clone());
        }
        if !tidy.iter().any(|known: &String| known == trimmed) {
            tidy.push(trimmed.to_owned());
        }
    }
    Ok(tidy)
}

/// `text` on one line, its runs of whitespace made single spaces.
pub fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The most lessons a prompt carries, and the most characters of them.
pub const MOST_CARRIED_LESSONS: usize = 15;
pub const CARRIED_LESSONS_MAX_CHARS: usize = 3_000;

/// The section of standing instructions a prompt gets, and which lessons it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingInstructions {
    pub text: String,
    pub carried: Vec<LessonId>,
    pub left_out: usize,
}

/// A lesson's line in every later prompt: its rule, and the paths it concerns.
pub fn prompt_line(lesson: &Lesson) -> String {
    match lesson.paths.as_slice() {
        [] => format!("- {}", lesson.rule),
        paths => format!("- {} (concerns: {})", lesson.rule, paths.join(", ")),
    }
}

/// The owner's standing instructions from `lessons` (those the next run carries, in any
/// order): the newest accepted first, up to [`MOST_CARRIED_LESSONS`] and
/// [`CARRIED_LESSONS_MAX_CHARS`]; the section says how many were left out. `None` when
/// there is none to carry.
pub fn standing_instructions(lessons: &[Lesson]) -> Option<StandingInstructions> {
    let mut carried: Vec<&Lesson> = lessons.iter().filter(|l| l.is_carried()).collect();
    if carried.is_empty() {
        return None;
    }
    carried.sort_by_key(|lesson| std::cmp::Reverse((lesson.decided_at, lesson.id)));
    let total = carried.len();
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    let mut chars = 0;
    for lesson in carried {
        let line = prompt_line(lesson);
        let line_chars = line.chars().count() + 1;
        if ids.len() == MOST_CARRIED_LESSONS || chars + line_chars > CARRIED_LESSONS_MAX_CHARS {
            break;
        }
        chars += line_chars;
        lines.push(line);
        ids.push(lesson.id);
    }
    let left_out = total - ids.len();
    let mut text = String::from(
        "Standing instructions from the repository owner: lessons they drew from their own \
         corrections of earlier runs. Follow them.\n\n",
    );
    text.push_str(&lines.join("\n"));
    text.push('\n');
    if left_out > 0 {
        text.push_str(&format!(
            "\n({left_out} older {} left out to keep this short.)\n",
            if left_out == 1 {
                "lesson was"
            } else {
                "lessons were"
            }
        ));
    }
    Some(StandingInstructions {
        text,
        carried: ids,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(id: i64, rule: &str, day: u32) -> Lesson {
        let at = DateTime::parse_from_rfc3339(&format!("2026-11-{day:02}T10:00:00Z"))
            .unwrap()
            .with_timezone(&Utc);
        Lesson {
            id: LessonId(id),
            repo_id: RepoId(1),
            rule: rule.to_owned(),
            why: String::new(),
            paths: Vec::new(),
            sources: Vec::new(),
            state: LessonState::Accepted,
            enabled: true,
            proposed_by_run_id: None,
            edited_by_owner: false,
            created_at: at,
            decided_at: Some(at),
            last_carried_at: None,
            missing_paths: None,
            kept_at: None,
        }
    }

    #[test]
    fn correction_names_read_back_as_they_are_written() {
        for id in [
            CorrectionId::Edit(CommentVersionId(12)),
            CorrectionId::FollowUp(FollowUpId(7)),
        ] {
            assert_eq!(id.to_string().parse::<CorrectionId>(), Ok(id));
        }
        for bad in ["edit-", "edit-0", "edit--3", "follow-up-x", "comment-3", ""] {
            assert!(bad.parse::<CorrectionId>().is_err(), "{bad}");
        }
    }

    #[test]
    fn proposals_name_only_the_corrections_they_were_given() {
        let given = [CorrectionId::Edit(CommentVersionId(3))];
        let good = r#"{"lessons": [{"rule": "  Never  use\nunwrap. ", "why": "twice", "sources": ["edit-3"], "paths": ["./src/", "src"]}]}"#;
        let read = read_lesson_proposals(good, &given).unwrap();
        assert_eq!(read[0].rule, "Never use unwrap.");
        assert_eq!(read[0].paths, vec!["src".to_owned()]);
        let unknown = r#"{"lessons": [{"rule": "r", "sources": ["edit-4"]}]}"#;
        assert!(matches!(
            read_lesson_proposals(unknown, &given),
            Err(LessonsOutputError::UnknownSource { position: 1, .. })
        ));
        let none = r#"{"lessons": [{"rule": "r", "sources": []}]}"#;
        assert_eq!(
            read_lesson_proposals(none, &given),
            Err(LessonsOutputError::NoSources { position: 1 })
        );
    }

    #[test]
    fn malformed_lessons_output_is_refused_with_what_is_wrong() {
        let given = [CorrectionId::FollowUp(FollowUpId(1))];
        assert!(matches!(
            read_lesson_proposals("Lessons:\n- be nice", &given),
            Err(LessonsOutputError::NotJson(_))
        ));
        assert!(matches!(
            read_lesson_proposals(
                r#"{"lessons": [{"rule": "r", "sources": ["follow-up-1"], "extra": 1}]}"#,
                &given
            ),
            Err(LessonsOutputError::NotJson(_))
        ));
        assert_eq!(
            read_lesson_proposals(
                r#"{"lessons": [{"rule": "  ", "sources": ["follow-up-1"]}]}"#,
                &given
            ),
            Err(LessonsOutputError::EmptyRule { position: 1 })
        );
        for path in ["../etc/passwd", "/etc", "a/../../b", "a\\b"] {
            let text = format!(
                r#"{{"lessons": [{{"rule": "r", "sources": ["follow-up-1"], "paths": [{}]}}]}}"#,
                serde_json::to_string(path).unwrap()
            );
            assert!(
                matches!(
                    read_lesson_proposals(&text, &given),
                    Err(LessonsOutputError::BadPath { .. })
                ),
                "{path}"
            );
        }
        assert_eq!(
            read_lesson_proposals(r#"{"lessons": []}"#, &given),
            Ok(Vec::new())
        );
    }

    #[test]
    fn the_prompt_carries_the_newest_lessons_up_to_its_cap_and_says_how_many_were_left_out() {
        let lessons: Vec<Lesson> = (1..=20)
            .map(|n| lesson(n, &format!("Rule number {n}."), n as u32))
            .collect();
        let section = standing_instructions(&lessons).unwrap();
        assert_eq!(section.carried.len(), MOST_CARRIED_LESSONS);
        assert_eq!(section.carried[0], LessonId(20));
        assert!(!section.carried.contains(&LessonId(1)));
        assert_eq!(section.left_out, 5);
        assert!(
            section.text.contains("(5 older lessons were left out"),
            "{}",
            section.text
        );

        let long: Vec<Lesson> = (1..=10)
            .map(|n| lesson(n, &"x".repeat(RULE_MAX_CHARS), n as u32))
            .collect();
        let section = standing_instructions(&long).unwrap();
        assert!(section.text.chars().count() < CARRIED_LESSONS_MAX_CHARS + 400);
        assert_eq!(section.carried.len() + section.left_out, 10);
        assert!(section.left_out > 0);
    }

    #[test]
    fn lessons_off_flagged_or_not_accepted_stay_out_of_the_prompt() {
        let mut off = lesson(1, "Off.", 1);
        off.enabled = false;
        let mut flagged = lesson(2, "Flagged.", 2);
        flagged.missing_paths = Some(vec!["gone.rs".to_owned()]);
        let mut proposed = lesson(3, "Proposed.", 3);
        proposed.state = LessonState::Proposed;
        assert_eq!(standing_instructions(&[off, flagged, proposed]), None);
    }

    #[test]
    fn a_lesson_unused_for_ninety_days_asks_to_be_kept() {
        let mut old = lesson(1, "Old.", 1);
        let now = old.decided_at.unwrap() + Duration::days(UNUSED_LESSON_DAYS + 1);
        assert!(old.asks_to_keep(now));
        old.last_carried_at = Some(now - Duration::days(2));
        assert!(!old.asks_to_keep(now));
        old.last_carried_at = None;
        old.kept_at = Some(now);
        assert!(!old.asks_to_keep(now));
    }
}
