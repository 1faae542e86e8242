//! The commands the page may invoke: each one a call into `handoff_api`. This file
//! holds the board's, the items', the runs' and the settings' own; the environment's,
//! the lessons' and the updates' are beside it.

mod environment;
mod lessons;
mod updates;
pub use environment::*;
pub use lessons::*;
pub use updates::*;

use handoff_api::agent_forks::{self, ForkPlacesView};
use handoff_api::archive;
use handoff_api::comments::{self, EditPreview, HistoryEntry, SaveResult, VersionComparison};
use handoff_api::core_types::LogLevel;
use handoff_api::core_types::{CodedError, ErrorCode};
use handoff_api::feedback_view::{self, FeedbackDetail, NewFeedbackInput};
use handoff_api::log::log_folder;
use handoff_api::log::{self as log_commands, LogView};
use handoff_api::outbox::{self, OutboxItem};
use handoff_api::pull_request_workspace::{self, WorkspaceView};
use handoff_api::pull_requests::{self, PullRequestQuery, PullRequestRow};
use handoff_api::queue_slots::{self, QueueSlotsInput, QueueSlotsRecord};
use handoff_api::records::{BoardView, FeedbackRecord, LogChunkRecord, RepoRecord};
use handoff_api::repositories::{self, RepoSettingsInput, RepoSettingsView, RepositoryChoice};
use handoff_api::run_queue::{self, BulkRunRecord, NewItemsRecord};
use handoff_api::session::{self, SessionStatus};
use handoff_api::setup::{self, DeviceSignIn, KeyState};
use handoff_api::spend::{self, AgentStepRecord, BudgetSettingsInput, SpendView};
use handoff_api::{runs, AppInfo, DashboardQuery};
use tauri::ipc::Channel;
use tauri::State;
use tauri_plugin_opener::OpenerExt as _;

use crate::desktop_state::DesktopState;

pub(crate) type Answer<T> = Result<T, CodedError>;

#[tauri::command]
pub fn app_info(state: State<'_, DesktopState>) -> AppInfo {
    handoff_api::app_info(&state.data_dir)
}

/// The page painted its first board (said once in the log, with the time it took).
#[tauri::command]
pub fn window_painted(state: State<'_, DesktopState>) {
    state.say_first_paint();
}

#[tauri::command]
pub async fn dashboard(state: State<'_, DesktopState>, query: DashboardQuery) -> Answer<BoardView> {
    handoff_api::dashboard(state.core()?, &query).await
}

#[tauri::command]
pub async fn repos(state: State<'_, DesktopState>) -> Answer<Vec<RepoRecord>> {
    handoff_api::repos(state.core()?).await
}

#[tauri::command]
pub async fn feedback_detail(
    state: State<'_, DesktopState>,
    feedback_id: i64,
) -> Answer<FeedbackDetail> {
    feedback_view::feedback_detail(state.core()?, feedback_id).await
}

#[tauri::command]
pub async fn add_feedback(
    state: State<'_, DesktopState>,
    input: NewFeedbackInput,
) -> Answer<FeedbackRecord> {
    feedback_view::add_feedback(state.core()?, &input).await
}

#[tauri::command]
pub async fn add_follow_up(
    state: State<'_, DesktopState>,
    feedback_id: i64,
    text: String,
) -> Answer<()> {
    feedback_view::add_follow_up(state.core()?, feedback_id, &text).await
}

#[tauri::command]
pub async fn include_follow_up(state: State<'_, DesktopState>, follow_up_id: i64) -> Answer<()> {
    feedback_view::include_follow_up(state.core()?, follow_up_id).await
}

#[tauri::command]
pub async fn approve_feedback(state: State<'_, DesktopState>, feedback_id: i64) -> Answer<()> {
    feedback_view::approve_feedback(state.core()?, feedback_id).await
}

#[tauri::command]
pub async fn approve_comment_version(
    state: State<'_, DesktopState>,
    version_id: i64,
) -> Answer<()> {
    feedback_view::approve_comment_version(state.core()?, version_id).await
}

#[tauri::command]
pub async fn start_run(
    state: State<'_, DesktopState>,
    feedback_id: i64,
    instructions: Option<String>,
) -> Answer<i64> {
    runs::start_code_run(state.core()?, feedback_id, instructions).await
}

#[tauri::command]
pub async fn cancel_run(state: State<'_, DesktopState>, run_id: i64) -> Answer<()> {
    runs::cancel_run(state.core()?, run_id).await.map(|_| ())
}

#[tauri::command]
pub async fn start_code_runs(
    state: State<'_, DesktopState>,
    feedback_ids: Vec<i64>,
) -> Answer<BulkRunRecord> {
    run_queue::start_code_runs(state.core()?, &feedback_ids).await
}

#[tauri::command]
pub async fn run_all_new(state: State<'_, DesktopState>, repo: String) -> Answer<BulkRunRecord> {
    run_queue::run_all_new(state.core()?, &repo).await
}

#[tauri::command]
pub async fn new_items_by_repo(state: State<'_, DesktopState>) -> Answer<Vec<NewItemsRecord>> {
    run_queue::new_items_by_repo(state.core()?).await
}

#[tauri::command]
pub async fn queue_slots(state: State<'_, DesktopState>) -> Answer<QueueSlotsRecord> {
    queue_slots::queue_slots(state.core()?).await
}

#[tauri::command]
pub async fn set_queue_slots(
    state: State<'_, DesktopState>,
    slots: QueueSlotsInput,
) -> Answer<QueueSlotsRecord> {
    queue_slots::set_queue_slots(state.core()?, &slots).await
}

#[tauri::command]
pub async fn archive_item(
    state: State<'_, DesktopState>,
    feedback_id: i64,
    how: String,
) -> Answer<FeedbackRecord> {
    archive::archive_item(state.core()?, feedback_id, &how).await
}

#[tauri::command]
pub async fn restore_item(
    state: State<'_, DesktopState>,
    feedback_id: i64,
) -> Answer<FeedbackRecord> {
    archive::restore_item(state.core()?, feedback_id).await
}

#[tauri::command]
pub async fn held_commits(
    state: State<'_, DesktopState>,
    run_id: i64,
) -> Answer<runs::HeldCommitsRecord> {
    runs::held_commits(state.core()?, run_id).await
}

#[tauri::command]
pub async fn push_held_run(
    state: State<'_, DesktopState>,
    run_id: i64,
    end_sha: String,
) -> Answer<runs::HeldPushRecord> {
    runs::push_held_run_for_the_page(state.core()?, run_id, &end_sha).await
}

/// Streams a run's log to the page until the run ends.
#[tauri::command]
pub fn follow_run_log(
    state: State<'_, DesktopState>,
    run_id: i64,
    on_chunk: Channel<LogChunkRecord>,
) -> Answer<()> {
    let core = state.core()?.clone();
    tauri::async_runtime::spawn(runs::follow_log(core, run_id, move |chunk| {
        on_chunk.send(chunk).is_ok()
    }));
    Ok(())
}

#[tauri::command]
pub fn preview_edit(text: String, agent_original: Option<String>) -> EditPreview {
    comments::preview_edit(&text, agent_original.as_deref())
}

#[tauri::command]
pub async fn comment_history(
    state: State<'_, DesktopState>,
    repo: String,
    pr_number: u64,
    kind: String,
) -> Answer<Vec<HistoryEntry>> {
    comments::comment_history(state.core()?, &repo, pr_number, &kind).await
}

#[tauri::command]
pub async fn compare_versions(
    state: State<'_, DesktopState>,
    first: i64,
    second: i64,
) -> Answer<VersionComparison> {
    comments::compare_versions(state.core()?, first, second).await
}

#[tauri::command]
pub async fn pull_request_list(
    state: State<'_, DesktopState>,
    query: PullRequestQuery,
) -> Answer<Vec<PullRequestRow>> {
    pull_requests::pull_request_list(state.core()?, &query).await
}

#[tauri::command]
pub async fn open_workspace(
    state: State<'_, DesktopState>,
    repo: String,
    number: u64,
    refresh: bool,
) -> Answer<WorkspaceView> {
    pull_request_workspace::open_workspace(state.core()?, &repo, number, refresh).await
}

#[tauri::command]
pub async fn start_qa_stage(
    state: State<'_, DesktopState>,
    repo: String,
    number: u64,
    stage: String,
    force: bool,
) -> Answer<i64> {
    pull_request_workspace::start_qa_stage(state.core()?, &repo, number, &stage, force).await
}

#[tauri::command]
pub async fn outbox_items(state: State<'_, DesktopState>) -> Answer<Vec<OutboxItem>> {
    outbox::outbox(state.core()?).await
}

#[tauri::command]
pub async fn send_outbox_entry(
    state: State<'_, DesktopState>,
    entry_id: i64,
) -> Answer<SaveResult> {
    outbox::send_outbox_entry(state.core()?, entry_id).await
}

#[tauri::command]
pub async fn discard_outbox_entry(state: State<'_, DesktopState>, entry_id: i64) -> Answer<()> {
    outbox::discard_outbox_entry(state.core()?, entry_id)
        .await
        .map(|_| ())
}

#[tauri::command]
pub async fn save_comment(
    state: State<'_, DesktopState>,
    repo: String,
    pr_number: u64,
    kind: String,
    content: String,
    based_on: i64,
) -> Answer<SaveResult> {
    comments::save_comment(state.core()?, &repo, pr_number, &kind, &content, based_on).await
}

#[tauri::command]
pub async fn resolve_comment_conflict(
    state: State<'_, DesktopState>,
    entry_id: i64,
    keep_mine: bool,
) -> Answer<SaveResult> {
    comments::resolve_comment_conflict(state.core()?, entry_id, keep_mine).await
}

/// The daemon (`handoff serve`) that serves this data folder, if one does.
#[tauri::command]
pub fn daemon_status(state: State<'_, DesktopState>) -> Option<handoff_api::daemon::DaemonState> {
    handoff_api::daemon::daemon_serving(&state.data_dir)
}

#[tauri::command]
pub async fn session_status(state: State<'_, DesktopState>) -> Answer<SessionStatus> {
    session::session_status(state.core()?).await
}

#[tauri::command]
pub async fn sign_in(
    state: State<'_, DesktopState>,
    token: String,
    api_base: Option<String>,
) -> Answer<SessionStatus> {
    setup::sign_in_with_pasted_token(state.core()?, &token, api_base.as_deref()).await
}

#[tauri::command]
pub async fn start_device_sign_in(
    state: State<'_, DesktopState>,
    api_base: Option<String>,
    client_id: Option<String>,
) -> Answer<DeviceSignIn> {
    setup::start_device_sign_in(state.core()?, api_base.as_deref(), client_id.as_deref()).await
}

#[tauri::command]
pub async fn finish_device_sign_in(
    state: State<'_, DesktopState>,
    flow_id: u64,
) -> Answer<SessionStatus> {
    setup::finish_device_sign_in(state.core()?, flow_id).await
}

#[tauri::command]
pub fn cancel_device_sign_in(state: State<'_, DesktopState>, flow_id: u64) -> Answer<()> {
    setup::cancel_device_sign_in(state.core()?, flow_id);
    Ok(())
}

#[tauri::command]
pub async fn sign_out(state: State<'_, DesktopState>) -> Answer<SessionStatus> {
    setup::sign_out(state.core()?).await
}

#[tauri::command]
pub async fn key_states(state: State<'_, DesktopState>) -> Answer<Vec<KeyState>> {
    setup::key_states(state.core()?).await
}

#[tauri::command]
pub async fn set_key(
    state: State<'_, DesktopState>,
    name: String,
    value: String,
) -> Answer<Vec<KeyState>> {
    setup::set_key(state.core()?, &name, &value).await
}

#[tauri::command]
pub async fn remove_key(state: State<'_, DesktopState>, name: String) -> Answer<Vec<KeyState>> {
    setup::remove_key(state.core()?, &name).await
}

#[tauri::command]
pub async fn check_setup(state: State<'_, DesktopState>) -> Answer<setup::SetupView> {
    setup::check_setup(state.core()?).await
}

/// Builds an agent image, sending the build's output to the page line by line.
#[tauri::command]
pub async fn build_agent_image(
    state: State<'_, DesktopState>,
    preset: String,
    on_line: Channel<String>,
) -> Answer<String> {
    setup::build_agent_image(state.core()?, &preset, &mut |line| {
        if let Err(error) = on_line.send(line.to_owned()) {
            tracing::debug!(%error, "the page stopped following the image build");
        }
    })
    .await
}

#[tauri::command]
pub async fn repository_choices(
    state: State<'_, DesktopState>,
    search: String,
) -> Answer<Vec<RepositoryChoice>> {
    repositories::repository_choices(state.core()?, &search).await
}

#[tauri::command]
pub async fn connect_repository(
    state: State<'_, DesktopState>,
    full_name: String,
) -> Answer<RepoRecord> {
    repositories::connect_repository(state.core()?, &full_name).await
}

#[tauri::command]
pub async fn repo_settings(
    state: State<'_, DesktopState>,
    full_name: String,
) -> Answer<RepoSettingsView> {
    repositories::repo_settings(state.core()?, &full_name).await
}

#[tauri::command]
pub async fn save_repo_settings(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    full_name: String,
    input: RepoSettingsInput,
) -> Answer<RepoSettingsView> {
    let core = state.core()?;
    let confirmed = match repositories::confirmation_needed(core, &full_name, &input).await? {
        Some(question) => crate::native_confirmation::owner_confirms(&app, question).await,
        None => false,
    };
    repositories::save_repo_settings(core, &full_name, &input, confirmed).await
}

#[tauri::command]
pub async fn set_stage_prompt(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    full_name: String,
    stage: String,
    template: Option<String>,
) -> Answer<RepoSettingsView> {
    let core = state.core()?;
    let template = template.as_deref();
    let confirmed =
        match repositories::stage_prompt_confirmation_needed(core, &full_name, &stage, template)
            .await?
        {
            Some(question) => crate::native_confirmation::owner_confirms(&app, question).await,
            None => false,
        };
    repositories::set_stage_prompt(core, &full_name, &stage, template, confirmed).await
}

#[tauri::command]
pub async fn fork_places(state: State<'_, DesktopState>) -> Answer<ForkPlacesView> {
    agent_forks::fork_places(state.core()?).await
}

#[tauri::command]
pub async fn make_agent_fork(
    state: State<'_, DesktopState>,
    full_name: String,
    place: String,
) -> Answer<RepoSettingsView> {
    repositories::make_agent_fork(state.core()?, &full_name, &place).await
}

#[tauri::command]
pub async fn disconnect_repository(
    state: State<'_, DesktopState>,
    full_name: String,
) -> Answer<()> {
    repositories::disconnect_repository(state.core()?, &full_name).await
}

#[tauri::command]
pub async fn sync_now(state: State<'_, DesktopState>) -> Answer<session::SyncSummary> {
    session::sync_now(state.core()?).await
}

/// Opens the item's PR in the browser; the URL comes from the store, not the page.
#[tauri::command]
pub async fn open_pull_request(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    feedback_id: i64,
) -> Answer<()> {
    let url = handoff_api::pull_request_url(state.core()?, feedback_id).await?;
    open_in_browser(&app, url)
}

/// Opens a PR in the browser; the address is built from the stored GitHub address.
#[tauri::command]
pub async fn open_workspace_pull_request(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    repo: String,
    number: u64,
) -> Answer<()> {
    let view = pull_request_workspace::open_workspace(state.core()?, &repo, number, false).await?;
    open_in_browser(&app, handoff_api::checked_link(&view.pr_url)?)
}

/// Opens a link from rendered markdown in the browser (http and https only).
#[tauri::command]
pub fn open_link(app: tauri::AppHandle, url: String) -> Answer<()> {
    open_in_browser(&app, handoff_api::checked_link(&url)?)
}

fn open_in_browser(app: &tauri::AppHandle, url: String) -> Answer<()> {
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|error| CodedError {
            code: ErrorCode::InvalidInput,
            message: format!("cannot open the browser: {error}"),
            fix: None,
        })
}

/// The log's folder, level and last lines, for the settings' Log tab.
#[tauri::command]
pub async fn log_view(state: State<'_, DesktopState>) -> Answer<LogView> {
    log_commands::log_view(state.core()?).await
}

/// Stores the log level and applies it to the running app at once.
#[tauri::command]
pub async fn set_log_level(state: State<'_, DesktopState>, level: LogLevel) -> Answer<()> {
    log_commands::set_log_level(state.core()?, level).await?;
    state.apply_log_level(level);
    Ok(())
}

/// Opens the log folder in the system's file manager.
#[tauri::command]
pub fn open_log_folder(app: tauri::AppHandle, state: State<'_, DesktopState>) -> Answer<()> {
    let folder = log_folder(&state.data_dir);
    app.opener()
        .open_path(folder.display().to_string(), None::<&str>)
        .map_err(|error| CodedError {
            code: ErrorCode::DataFolder,
            message: format!("cannot open the log folder {}: {error}", folder.display()),
            fix: None,
        })
}

/// The Spend tab: the month of `repo` (every repository when empty), the budgets and
/// the prices.
#[tauri::command]
pub async fn spend_view(state: State<'_, DesktopState>, repo: Option<String>) -> Answer<SpendView> {
    spend::spend_view(state.core()?, repo).await
}

/// Saves the budgets and the owner's prices.
#[tauri::command]
pub async fn save_budget_settings(
    state: State<'_, DesktopState>,
    input: BudgetSettingsInput,
    repo: Option<String>,
) -> Answer<SpendView> {
    spend::save_budget_settings(state.core()?, &input, repo).await
}

/// A run's steps, as its key forwarder saw them.
#[tauri::command]
pub async fn run_steps(
    state: State<'_, DesktopState>,
    run_id: i64,
) -> Answer<Vec<AgentStepRecord>> {
    spend::run_steps(state.core()?, run_id).await
}
