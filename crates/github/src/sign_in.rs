//! Signing in to GitHub: a pasted token, checked against `GET /user` before it is
//! kept, or GitHub's device flow; the token goes to the OS keyring and nowhere else.

use std::time::Duration;

use http::Method;
use http_body_util::BodyExt as _;
use octocrab::Octocrab;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::client::{GithubClient, RequestPolicy};
use super::endpoints::GithubEndpoints;
use super::error::GithubError;
use super::token_scopes::TokenScopes;
use super::wire::WireUser;
use handoff_store::secrets::{Secret, SecretName, SecretStore};
use handoff_store::{SettingKey, Store};

/// Who is signed in where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuthStatus {
    pub api_base: String,
    pub login: Option<String>,
    pub token_stored: bool,
    /// Whether GitHub accepted the token just now (`None` when not checked).
    pub token_accepted: Option<bool>,
}

fn token_name(endpoints: &GithubEndpoints) -> SecretName {
    SecretName::GithubToken {
        api_host: endpoints.api_host(),
    }
}

/// Who signed in, and what the owner should know about the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub login: String,
    pub scopes: TokenScopes,
}

impl SignedIn {
    /// What the owner should know about the token's scopes, if anything.
    pub fn token_warning(&self) -> Option<String> {
        self.scopes.warning()
    }
}

/// Checks `token` with GitHub, then keeps it in the keyring and remembers the login, the
/// token's scopes and the endpoints. A refused token is not kept.
pub async fn sign_in_with_token(
    store: &Store,
    secrets: &SecretStore,
    endpoints: GithubEndpoints,
    token: Secret,
) -> Result<SignedIn, GithubError> {
    if token.expose().trim().is_empty() || token.expose().contains(char::is_whitespace) {
        return Err(GithubError::SignIn(
            "the token is empty or has spaces in it; paste it again".to_owned(),
        ));
    }
    let client = GithubClient::new(endpoints.clone(), token.clone(), RequestPolicy::default())?;
    let answer = match client
        .send(Method::GET, "/user", None, http::HeaderMap::new())
        .await
    {
        Ok(answer) => answer,
        Err(GithubError::Unauthorized { .. }) => {
            return Err(GithubError::SignIn(
                "GitHub refused the token; nothing was stored".to_owned(),
            ))
        }
        Err(error) => return Err(error),
    };
    let user: WireUser = client.parse_json(&Method::GET, "/user", &answer.headers, &answer.body)?;
    let scopes = TokenScopes::from_headers(&answer.headers);
    secrets.set(&token_name(&endpoints), &token).await?;
    endpoints.save(store).await?;
    store
        .settings()
        .set_setting(SettingKey::GithubLogin, &user.login)
        .await?;
    store
        .settings()
        .set_setting(SettingKey::GithubTokenScopes, &scopes.stored())
        .await?;
    if let Some(warning) = scopes.warning() {
        tracing::warn!(login = %user.login, "signed in: {warning}");
    }
    Ok(SignedIn {
        login: user.login,
        scopes,
    })
}

/// What the owner should know about the stored token's scopes, as they were at sign-in.
pub async fn stored_token_warning(store: &Store) -> Result<Option<String>, GithubError> {
    Ok(store
        .settings()
        .setting(SettingKey::GithubTokenScopes)
        .await?
        .and_then(|stored| TokenScopes::from_stored(&stored).warning()))
}

/// Whether the token kept at sign-in has the `workflow` scope, as GitHub listed it then.
pub async fn stored_token_may_change_workflows(store: &Store) -> Result<bool, GithubError> {
    Ok(store
        .settings()
        .setting(SettingKey::GithubTokenScopes)
        .await?
        .is_some_and(|stored| {
            TokenScopes::from_stored(&stored).can_change_workflows() == Some(true)
        }))
}

/// A client for the configured endpoints with the token from the keyring.
pub async fn connect(
    store: &Store,
    secrets: &SecretStore,
    policy: RequestPolicy,
) -> Result<GithubClient, GithubError> {
    let endpoints = GithubEndpoints::configured(store).await?;
    let token =
        secrets
            .get(&token_name(&endpoints))
            .await?
            .ok_or_else(|| GithubError::NotSignedIn {
                api_base: endpoints.api_base.clone(),
            })?;
    GithubClient::new(endpoints, token, policy)
}

/// The GitHub token kept for the configured API address, if one is.
pub async fn stored_token(
    store: &Store,
    secrets: &SecretStore,
) -> Result<Option<Secret>, GithubError> {
    let endpoints = GithubEndpoints::configured(store).await?;
    Ok(secrets.get(&token_name(&endpoints)).await?)
}

/// Forgets the token (and the login); true if there was a token.
pub async fn sign_out(store: &Store, secrets: &SecretStore) -> Result<bool, GithubError> {
    let endpoints = GithubEndpoints::configured(store).await?;
    let removed = secrets.delete(&token_name(&endpoints)).await?;
    store
        .settings()
        .remove_setting(SettingKey::GithubLogin)
        .await?;
    store
        .settings()
        .remove_setting(SettingKey::GithubTokenScopes)
        .await?;
    Ok(removed)
}

/// Who is signed in; with `check`, asks GitHub whether the token still works.
pub async fn auth_status(
    store: &Store,
    secrets: &SecretStore,
    check: bool,
) -> Result<AuthStatus, GithubError> {
    let endpoints = GithubEndpoints::configured(store).await?;
    let token = secrets.get(&token_name(&endpoints)).await?;
    let login = store.settings().setting(SettingKey::GithubLogin).await?;
    let token_accepted = match (&token, check) {
        (Some(token), true) => {
            let client =
                GithubClient::new(endpoints.clone(), token.clone(), RequestPolicy::default())?;
            match client.get_json::<WireUser>("/user").await {
                Ok(_) => Some(true),
                Err(GithubError::Unauthorized { .. }) => Some(false),
                Err(error) => return Err(error),
            }
        }
        _ => None,
    };
    Ok(AuthStatus {
        api_base: endpoints.api_base,
        login,
        token_stored: token.is_some(),
        token_accepted,
    })
}

/// The codes GitHub hands out at the start of the device flow.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DeviceCode {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    pub expires_in: u64,
    pub interval: u64,
}

/// POSTs a form-like JSON body to the web base and reads the JSON answer.
async fn post_to_web(
    endpoints: &GithubEndpoints,
    path: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value, GithubError> {
    let request = format!("POST {path}");
    let octocrab = Octocrab::builder()
        .base_uri(endpoints.web_base.as_str())
        .map_err(|_| GithubError::BadAddress(endpoints.web_base.clone()))?
        .build()
        .map_err(|error| GithubError::BadAddress(error.to_string()))?;
    let builder = http::Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(http::header::ACCEPT, "application/json");
    let unreachable = |error: octocrab::Error| GithubError::Unreachable {
        request: request.clone(),
        detail: error
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    let http_request = octocrab
        .build_request(builder, Some(&body))
        .map_err(unreachable)?;
    let response = octocrab.execute(http_request).await.map_err(unreachable)?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(unreachable)?
        .to_bytes();
    if !status.is_success() {
        return Err(GithubError::SignIn(format!("{request} answered {status}")));
    }
    serde_json::from_slice(&bytes).map_err(|error| GithubError::MalformedAnswer {
        request,
        detail: error.to_string(),
    })
}

/// Starts the device flow for OAuth app `client_id`.
pub async fn start_device_flow(
    endpoints: &GithubEndpoints,
    client_id: &str,
) -> Result<DeviceCode, GithubError> {
    let answer = post_to_web(
        endpoints,
        "/login/device/code",
        json!({ "client_id": client_id, "scope": "repo" }),
    )
    .await?;
    serde_json::from_value(answer).map_err(|error| GithubError::MalformedAnswer {
        request: "POST /login/device/code".to_owned(),
        detail: error.to_string(),
    })
}

/// Polls until the owner has entered the code (or the code expires, or they refuse),
/// then returns the token.
pub async fn finish_device_flow(
    endpoints: &GithubEndpoints,
    client_id: &str,
    code: &DeviceCode,
) -> Result<Secret, GithubError> {
    let mut interval = Duration::from_secs(code.interval.max(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(code.expires_in.max(1));
    loop {
        tokio::time::sleep(interval).await;
        let answer = post_to_web(
            endpoints,
            "/login/oauth/access_token",
            json!({
                "client_id": client_id,
                "device_code": code.device_code,
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            }),
        )
        .await?;
        if let Some(token) = answer.get("access_token").and_then(|t| t.as_str()) {
            return Ok(Secret::new(token));
        }
        match answer.get("error").and_then(|e| e.as_str()) {
            Some("authorization_pending") => {}
            Some("slow_down") => interval += Duration::from_secs(5),
            Some("expired_token") => {
                return Err(GithubError::SignIn(
                    "the code expired; start again".to_owned(),
                ))
            }
            Some("access_denied") => {
                return Err(GithubError::SignIn(
                    "access was denied on GitHub".to_owned(),
                ))
            }
            Some(other) => return Err(GithubError::SignIn(format!("GitHub said {other}"))),
            None => {
                return Err(GithubError::MalformedAnswer {
                    request: "POST /login/oauth/access_token".to_owned(),
                    detail: "neither a token nor an error".to_owned(),
                })
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(GithubError::SignIn(
                "the code expired; start again".to_owned(),
            ));
        }
    }
}
