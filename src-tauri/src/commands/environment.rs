//! The Environment section's commands: a repository's environment, its rebuild and
//! last build's log, and its test-only settings.

use handoff_api::environments::{self, EnvironmentBuilt, EnvironmentRecord};
use handoff_api::test_settings::{self, TestSettingView};
use tauri::ipc::Channel;
use tauri::State;

use super::Answer;
use crate::desktop_state::DesktopState;

/// A repository's environment: the recipe its base branch names, what its image is
/// keyed on, and where its image stands.
#[tauri::command]
pub async fn environment_view(
    state: State<'_, DesktopState>,
    repo: String,
) -> Answer<EnvironmentRecord> {
    environments::environment_of(state.core()?, &repo).await
}

/// Builds a repository's environment again ("Rebuild"), sending the build's output to
/// the page line by line.
#[tauri::command]
pub async fn rebuild_environment(
    state: State<'_, DesktopState>,
    repo: String,
    on_line: Channel<String>,
) -> Answer<Option<EnvironmentBuilt>> {
    environments::build_environment(state.core()?, &repo, true, &mut |line| {
        if let Err(error) = on_line.send(line.to_owned()) {
            tracing::debug!(%error, "the page stopped following the environment's build");
        }
    })
    .await
}

/// The whole log of a repository's last environment build.
#[tauri::command]
pub async fn environment_log(state: State<'_, DesktopState>, repo: String) -> Answer<String> {
    environments::last_build_log(state.core()?, &repo).await
}

/// A repository's test-only settings: the variables its tests get in the sandbox.
#[tauri::command]
pub async fn test_settings(
    state: State<'_, DesktopState>,
    repo: String,
) -> Answer<Vec<TestSettingView>> {
    test_settings::test_settings_of(state.core()?, &repo).await
}

/// Sets one of a repository's test-only settings; returns them all.
#[tauri::command]
pub async fn set_test_setting(
    state: State<'_, DesktopState>,
    repo: String,
    name: String,
    value: String,
) -> Answer<Vec<TestSettingView>> {
    test_settings::set_test_setting(state.core()?, &repo, &name, &value).await
}

/// Removes one of a repository's test-only settings; returns those left.
#[tauri::command]
pub async fn remove_test_setting(
    state: State<'_, DesktopState>,
    repo: String,
    name: String,
) -> Answer<Vec<TestSettingView>> {
    test_settings::remove_test_setting(state.core()?, &repo, &name).await
}
