//! The app's session with GitHub: who is signed in, a sync now or on the timer, and the
//! run events that become notifications. (Signing in and out is in [`super::setup`].)

use serde::Serialize;

use super::AppCore;
use crate::domain::run_event::RunEvent;
use crate::error_code::CodedError;
use crate::github::sign_in::auth_status;
use crate::github::sync::{sync, SyncReport};
use crate::pipeline::reconcile::Reconciled;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    pub signed_in: bool,
    pub login: Option<String>,
    pub api_base: String,
    /// Whether the OAuth app's client id for signing in in the browser is set.
    pub device_client_id_set: bool,
    /// Connected repositories, for the first steps the window shows.
    pub connected_repos: usize,
}

pub async fn session_status(core: &AppCore) -> Result<SessionStatus, CodedError> {
    let status = auth_status(&core.store, &core.secrets, false).await?;
    Ok(SessionStatus {
        signed_in: status.token_stored,
        login: status.login,
        api_base: status.api_base,
        device_client_id_set: core
            .store
            .setting(crate::store::SettingKey::GithubDeviceClientId)
            .await?
            .is_some(),
        connected_repos: core.store.repos().await?.len(),
    })
}

/// One sync with GitHub.
pub async fn sync_now(core: &AppCore) -> Result<SyncReport, CodedError> {
    let github = core.github().await?;
    Ok(sync(&github, &core.store, None).await?)
}

/// Events not yet shown (each handed out once).
pub async fn take_run_events(core: &AppCore) -> Result<Vec<RunEvent>, CodedError> {
    Ok(core.store.take_unseen_run_events().await?)
}

/// Ends runs a crash left behind (P7); used when the app starts.
pub async fn reconcile_abandoned_runs(core: &AppCore) -> Result<Vec<Reconciled>, CodedError> {
    let pipeline = core.pipeline().await?;
    Ok(pipeline.reconcile_silent_runs().await?)
}
