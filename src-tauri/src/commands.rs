//! The commands the page may invoke: each one a call into `handoff::app_commands`.

use handoff::app_commands::{self, AppInfo, DashboardQuery};
use handoff::dashboard::Dashboard;
use handoff::domain::Repo;
use handoff::error_code::{CodedError, ErrorCode};
use tauri::State;
use tauri_plugin_opener::OpenerExt as _;

use crate::desktop_state::DesktopState;

#[tauri::command]
pub fn app_info(state: State<'_, DesktopState>) -> AppInfo {
    app_commands::app_info(&state.data_dir)
}

#[tauri::command]
pub async fn dashboard(
    state: State<'_, DesktopState>,
    query: DashboardQuery,
) -> Result<Dashboard, CodedError> {
    app_commands::dashboard(state.store()?, &query).await
}

#[tauri::command]
pub async fn repos(state: State<'_, DesktopState>) -> Result<Vec<Repo>, CodedError> {
    app_commands::repos(state.store()?).await
}

/// Opens the item's PR in the browser; the URL comes from the store, not the page.
#[tauri::command]
pub async fn open_pull_request(
    app: tauri::AppHandle,
    state: State<'_, DesktopState>,
    feedback_id: i64,
) -> Result<(), CodedError> {
    let url = app_commands::pull_request_url(state.store()?, feedback_id).await?;
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|error| CodedError {
            code: ErrorCode::InvalidInput,
            message: format!("cannot open the browser: {error}"),
        })
}
