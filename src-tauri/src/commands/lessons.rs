//! The Lessons tab's commands: a repository's lessons, a lessons run, the owner's
//! decisions and words, the lessons file and the lesson settings.

use handoff_api::lessons::{
    self, LessonDecisionWord, LessonEditInput, LessonRecord, LessonSettingsInput,
    LessonsFileRecord, LessonsView,
};
use tauri::State;

use super::Answer;
use crate::desktop_state::DesktopState;

/// A repository's lessons: proposals with their sources, accepted and rejected ones,
/// and the corrections waiting for the next lessons run.
#[tauri::command]
pub async fn lessons_view(state: State<'_, DesktopState>, repo: String) -> Answer<LessonsView> {
    lessons::lessons_view(state.core()?, &repo).await
}

/// Starts a lessons run on the repository ("Suggest lessons"); returns its id.
#[tauri::command]
pub async fn suggest_lessons(state: State<'_, DesktopState>, repo: String) -> Answer<i64> {
    lessons::suggest_lessons(state.core()?, &repo).await
}

/// Accepts, rejects, turns on or off, or keeps a lesson.
#[tauri::command]
pub async fn decide_lesson(
    state: State<'_, DesktopState>,
    id: i64,
    decision: LessonDecisionWord,
) -> Answer<LessonRecord> {
    lessons::decide_lesson(state.core()?, id, decision).await
}

/// Saves the owner's words for a lesson.
#[tauri::command]
pub async fn edit_lesson(
    state: State<'_, DesktopState>,
    id: i64,
    input: LessonEditInput,
) -> Answer<LessonRecord> {
    lessons::edit_lesson(state.core()?, id, &input).await
}

/// "Write to AGENTS.md": the lessons file brought in step through a PR.
#[tauri::command]
pub async fn write_lessons_file(
    state: State<'_, DesktopState>,
    repo: String,
    replace_edits: bool,
) -> Answer<LessonsFileRecord> {
    lessons::write_lessons_file(state.core()?, &repo, replace_edits).await
}

/// Saves a repository's lesson settings.
#[tauri::command]
pub async fn set_lesson_settings(
    state: State<'_, DesktopState>,
    repo: String,
    input: LessonSettingsInput,
) -> Answer<()> {
    lessons::set_lesson_settings(state.core()?, &repo, &input).await
}
