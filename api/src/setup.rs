//! Setting up from the window: signing in with GitHub's device flow (the code to show,
//! the page to open, waiting that can be cancelled) or a pasted token, signing out; the
//! agents' and E2B's keys (into the keyring, and only "set" or "not set" back); Check
//! setup; and building an agent image with its progress passed on line by line.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::watch;

use super::agent_images::{build_agent_images, AgentImageRequest};
use super::session::{session_status, SessionStatus};
use super::{invalid_input, AppCore};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::endpoints::GithubEndpoints;
use handoff::github::sign_in::{
    auth_status, finish_device_flow, sign_in_with_token, sign_out as forget_token,
    start_device_flow, AuthStatus, DeviceCode,
};
use handoff::pipeline::PipelineSettings;
use handoff::secrets::{Secret, SecretName};
use handoff::setup_check::{CheckLine, CheckStatus, Fix, SetupCheck, SetupReport};
use handoff::store::SettingKey;

/// Device-flow sign-ins that are waiting for the owner, by id, with what cancels them.
#[derive(Debug, Clone, Default)]
pub struct PendingSignIns {
    flows: Arc<Mutex<HashMap<u64, PendingSignIn>>>,
    next: Arc<Mutex<u64>>,
}

#[derive(Debug, Clone)]
struct PendingSignIn {
    endpoints: GithubEndpoints,
    client_id: String,
    code: DeviceCode,
    cancel: watch::Sender<bool>,
}

/// What the window shows while the owner signs in on GitHub.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DeviceSignIn {
    pub flow_id: u64,
    pub user_code: String,
    pub verification_uri: String,
    pub expires_in_seconds: u64,
}

fn endpoints_for(api_base: Option<&str>) -> Result<Option<GithubEndpoints>, CodedError> {
    match api_base.map(str::trim).filter(|base| !base.is_empty()) {
        Some(base) => Ok(Some(GithubEndpoints::new(base)?)),
        None => Ok(None),
    }
}

/// Starts GitHub's device flow. The OAuth app's client id comes from `client_id` (saved
/// as the setting) or the setting; without either, the answer says what is missing.
pub async fn start_device_sign_in(
    core: &AppCore,
    api_base: Option<&str>,
    client_id: Option<&str>,
) -> Result<DeviceSignIn, CodedError> {
    let endpoints = match endpoints_for(api_base)? {
        Some(endpoints) => endpoints,
        None => GithubEndpoints::configured(&core.store).await?,
    };
    let client_id = match client_id.map(str::trim).filter(|id| !id.is_empty()) {
        Some(id) => {
            core.store
                .settings()
                .set_setting(SettingKey::GithubDeviceClientId, id)
                .await?;
            id.to_owned()
        }
        None => core
            .store
            .settings()
            .setting(SettingKey::GithubDeviceClientId)
            .await?
            .ok_or_else(|| CodedError {
                code: ErrorCode::NeedsClientId,
                message: "signing in in the browser needs the client id of a GitHub OAuth app \
                          with the device flow turned on (GitHub → Settings → Developer \
                          settings → OAuth Apps)"
                    .to_owned(),
                fix: None,
            })?,
    };
    let code = start_device_flow(&endpoints, &client_id).await?;
    let flow_id = {
        let mut next = core.sign_ins.next.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        *next
    };
    let (cancel, _) = watch::channel(false);
    core.sign_ins
        .flows
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(
            flow_id,
            PendingSignIn {
                endpoints,
                client_id,
                code: code.clone(),
                cancel,
            },
        );
    Ok(DeviceSignIn {
        flow_id,
        user_code: code.user_code,
        verification_uri: code.verification_uri,
        expires_in_seconds: code.expires_in,
    })
}

/// Waits until the owner approved the code on GitHub (then keeps the token and returns
/// who is signed in), refused it, let it expire, or cancelled the wait.
pub async fn finish_device_sign_in(
    core: &AppCore,
    flow_id: u64,
) -> Result<SessionStatus, CodedError> {
    let pending = core
        .sign_ins
        .flows
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&flow_id)
        .cloned()
        .ok_or_else(|| invalid_input(format!("no sign-in {flow_id} is waiting")))?;
    let mut cancelled = pending.cancel.subscribe();
    let waited = tokio::select! {
        token = finish_device_flow(&pending.endpoints, &pending.client_id, &pending.code) => Some(token),
        _ = cancelled.wait_for(|cancelled| *cancelled) => None,
    };
    core.sign_ins
        .flows
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&flow_id);
    let Some(token) = waited else {
        return Err(CodedError {
            code: ErrorCode::Cancelled,
            message: "sign-in cancelled".to_owned(),
            fix: None,
        });
    };
    sign_in_with_token(&core.store, &core.secrets, pending.endpoints, token?).await?;
    session_status(core).await
}

/// Stops waiting for the owner on GitHub.
pub fn cancel_device_sign_in(core: &AppCore, flow_id: u64) {
    if let Some(pending) = core
        .sign_ins
        .flows
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&flow_id)
    {
        pending.cancel.send_replace(true);
    }
}

/// Forgets the token (and who was signed in).
pub async fn sign_out(core: &AppCore) -> Result<SessionStatus, CodedError> {
    forget_github_token(core).await?;
    session_status(core).await
}

/// Forgets the token (and who was signed in); whether there was one to forget.
pub async fn forget_github_token(core: &AppCore) -> Result<bool, CodedError> {
    Ok(forget_token(&core.store, &core.secrets).await?)
}

/// Who is signed in to which GitHub, and, when `ask_github`, whether GitHub accepts the
/// token now.
pub async fn github_sign_in_state(
    core: &AppCore,
    ask_github: bool,
) -> Result<AuthStatus, CodedError> {
    Ok(auth_status(&core.store, &core.secrets, ask_github).await?)
}

/// Signs in with a pasted token (checked with GitHub first).
pub async fn sign_in_with_pasted_token(
    core: &AppCore,
    token: &str,
    api_base: Option<&str>,
) -> Result<SessionStatus, CodedError> {
    let endpoints = match endpoints_for(api_base)? {
        Some(endpoints) => endpoints,
        None => GithubEndpoints::configured(&core.store).await?,
    };
    sign_in_with_token(
        &core.store,
        &core.secrets,
        endpoints,
        Secret::new(token.trim()),
    )
    .await?;
    session_status(core).await
}

/// A key the window offers: whether it is set, never its value.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct KeyState {
    /// `e2b`, or an agent provider (`anthropic`, `openai`).
    pub name: String,
    pub label: String,
    pub set: bool,
    /// Where the E2B key is used (its keyring entry is per E2B address).
    pub for_host: Option<String>,
    /// Whether Handoff works without it (a plan token, used instead of an API key).
    pub optional: bool,
    /// What to paste, for the empty field.
    pub placeholder: String,
}

/// The keys there are, each "set" or "not set".
pub async fn key_states(core: &AppCore) -> Result<Vec<KeyState>, CodedError> {
    let mut states = Vec::new();
    for (name, label) in [
        ("anthropic", "Anthropic (claude, opencode)"),
        (
            "claude-plan",
            "Claude Pro or Max plan (claude only; used instead of the Anthropic key)",
        ),
        ("openai", "OpenAI (codex, aider)"),
        ("e2b", "E2B sandboxes"),
    ] {
        let (secret, for_host) = key_name(core, name).await?;
        let optional = name == "claude-plan";
        states.push(KeyState {
            name: name.to_owned(),
            label: label.to_owned(),
            set: core.secrets.get(&secret).await?.is_some(),
            for_host,
            optional,
            placeholder: if optional {
                "Paste what `claude setup-token` prints (sk-ant-oat01-…)".to_owned()
            } else {
                format!("Paste the {name} key")
            },
        });
    }
    Ok(states)
}

pub(crate) async fn key_name(
    core: &AppCore,
    name: &str,
) -> Result<(SecretName, Option<String>), CodedError> {
    match name {
        "e2b" => {
            let host = PipelineSettings::configured(&core.store)
                .await?
                .e2b
                .api_host();
            Ok((
                SecretName::E2bApiKey {
                    api_host: host.clone(),
                },
                Some(host),
            ))
        }
        "claude-plan" => {
            let name = PipelineSettings::configured(&core.store)
                .await?
                .claude_plan_token_name();
            let host = match &name {
                SecretName::ClaudePlanToken { api_host } => Some(api_host.clone()),
                _ => None,
            };
            Ok((name, host))
        }
        "anthropic" | "openai" => {
            let name = handoff::pipeline::PipelineSettings::configured(&core.store)
                .await?
                .agent_key_name(name);
            let host = match &name {
                SecretName::AgentApiKey { api_host, .. } => Some(api_host.clone()),
                _ => None,
            };
            Ok((name, host))
        }
        other => Err(invalid_input(format!(
            "unknown key {other:?}: anthropic, claude-plan, openai or e2b"
        ))),
    }
}

/// Keeps a key in the keyring (replacing the one there).
pub async fn set_key(core: &AppCore, name: &str, value: &str) -> Result<Vec<KeyState>, CodedError> {
    let value = value.trim();
    if value.is_empty() || value.contains(char::is_whitespace) {
        return Err(invalid_input(
            "the key is empty or has spaces in it; paste it again".to_owned(),
        ));
    }
    let (secret, _) = key_name(core, name).await?;
    check_key_shape(&secret, value).map_err(invalid_input)?;
    core.secrets.set(&secret, &Secret::new(value)).await?;
    key_states(core).await
}

/// Refuses a key pasted in the wrong place: a plan token must be one, and an API key
/// must not be a plan token (which only Claude Code may carry).
pub fn check_key_shape(name: &SecretName, value: &str) -> Result<(), String> {
    use handoff::domain::claude_plan::{check_plan_token, PLAN_TOKEN_PREFIX};
    match name {
        SecretName::ClaudePlanToken { .. } => {
            check_plan_token(value).map_err(|error| error.to_string())
        }
        SecretName::AgentApiKey { .. } if value.trim().starts_with(PLAN_TOKEN_PREFIX) => Err(
            "this is a Claude plan token, not an API key: keep it as the claude-plan key, \
             which only the claude agent uses"
                .to_owned(),
        ),
        _ => Ok(()),
    }
}

/// Removes a key from the keyring.
pub async fn remove_key(core: &AppCore, name: &str) -> Result<Vec<KeyState>, CodedError> {
    let (secret, _) = key_name(core, name).await?;
    core.secrets.delete(&secret).await?;
    key_states(core).await
}

/// Check setup, as the window shows it.
pub async fn check_setup(core: &AppCore) -> Result<SetupView, CodedError> {
    Ok(setup_report(core).await?.into())
}

/// Check setup: a line per check, each with the step that fixes it when it is not ok.
pub async fn setup_report(core: &AppCore) -> Result<SetupReport, CodedError> {
    let settings = PipelineSettings::configured(&core.store).await?;
    let mut report = SetupCheck {
        store: &core.store,
        secrets: &core.secrets,
        data_dir: &core.data_dir,
        settings: &settings,
    }
    .run()
    .await?;
    // The environments are read from each repository's base branch, through the
    // pipeline: a use case above the core's checks.
    report
        .lines
        .extend(crate::environments::environment_check_lines(core).await);
    Ok(report)
}

/// Check setup's answer: a line per check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SetupView {
    pub lines: Vec<SetupLine>,
    /// The worst status of all the lines.
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::SetupCheckStatusShape")
    )]
    pub status: CheckStatus,
}

/// One check: what was checked, how it stands, and what fixes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SetupLine {
    pub id: String,
    pub subject: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "crate::page_contract::SetupCheckStatusShape")
    )]
    pub status: CheckStatus,
    pub detail: String,
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::FixShape>")
    )]
    pub fix: Option<Fix>,
    pub fix_sentence: Option<String>,
}

impl From<SetupReport> for SetupView {
    fn from(report: SetupReport) -> Self {
        SetupView {
            status: report.status(),
            lines: report.lines.into_iter().map(SetupLine::from).collect(),
        }
    }
}

impl From<CheckLine> for SetupLine {
    fn from(line: CheckLine) -> Self {
        SetupLine {
            id: line.id,
            subject: line.subject,
            status: line.status,
            detail: line.detail,
            fix: line.fix,
            fix_sentence: line.fix_sentence,
        }
    }
}

/// Builds the agent image of `preset` with the engine, passing the build's output to
/// `progress` line by line; the image's name.
pub async fn build_agent_image(
    core: &AppCore,
    preset: &str,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<String, CodedError> {
    let request = AgentImageRequest {
        preset: Some(preset.to_owned()),
        ..AgentImageRequest::default()
    };
    let built = build_agent_images(core, &request, progress).await?;
    Ok(built
        .into_iter()
        .map(|(tag, _)| tag)
        .next()
        .unwrap_or_default())
}
