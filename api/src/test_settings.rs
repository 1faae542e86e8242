//! A repository's test-only settings (say `DATABASE_URL`): the variables its tests get
//! in the agent's sandbox, listed, set and removed for the CLI and the window, which
//! mark them test-only. A setting is checked before it is kept: a name that carries a
//! credential or that Handoff sets itself is refused, and so is a value that holds any
//! secret this installation keeps (the GitHub token, a provider's key, a plan's token,
//! the E2B key), read from the keyring for the check and never kept beside it.

use serde::Serialize;

use handoff::domain::test_setting::{check_test_setting, TestSetting};
use handoff::error_code::CodedError;
use handoff::github::sign_in::stored_token;
use handoff::secrets::Secret;
use handoff::store::SetTestSettingError;

use crate::pull_request_workspace::repo_named;
use crate::setup::key_name;
use crate::{invalid_input, AppCore};

/// One test-only setting, as the owner reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TestSettingView {
    pub name: String,
    pub value: String,
}

fn views(settings: Vec<TestSetting>) -> Vec<TestSettingView> {
    settings
        .into_iter()
        .map(|setting| TestSettingView {
            name: setting.name,
            value: setting.value,
        })
        .collect()
}

/// `repo`'s test-only settings, by name.
pub async fn test_settings_of(
    core: &AppCore,
    repo: &str,
) -> Result<Vec<TestSettingView>, CodedError> {
    let repo = repo_named(core, repo).await?;
    Ok(views(
        core.store.test_settings().test_settings(repo.id).await?,
    ))
}

/// Sets `name` to `value` for `repo`'s tests (replacing one of that name); refused,
/// with nothing kept, when it is not a test-only setting. Returns them all.
pub async fn set_test_setting(
    core: &AppCore,
    repo: &str,
    name: &str,
    value: &str,
) -> Result<Vec<TestSettingView>, CodedError> {
    let repo = repo_named(core, repo).await?;
    let name = name.trim();
    let kept = kept_secrets(core).await?;
    let kept: Vec<&str> = kept.iter().map(Secret::expose).collect();
    check_test_setting(name, value, &kept).map_err(|error| invalid_input(error.to_string()))?;
    let setting = TestSetting {
        name: name.to_owned(),
        value: value.to_owned(),
    };
    match core
        .store
        .test_settings()
        .set_test_setting(repo.id, &setting)
        .await
    {
        Ok(()) => {}
        Err(SetTestSettingError::Refused(error)) => return Err(invalid_input(error.to_string())),
        Err(SetTestSettingError::Store(error)) => return Err(error.into()),
    }
    tracing::info!(repo = %repo.name.full_name(), %name, "a test-only setting was set");
    test_settings_of(core, &repo.name.full_name()).await
}

/// Removes `repo`'s test-only setting `name`; returns those left.
pub async fn remove_test_setting(
    core: &AppCore,
    repo: &str,
    name: &str,
) -> Result<Vec<TestSettingView>, CodedError> {
    let repo = repo_named(core, repo).await?;
    if !core
        .store
        .test_settings()
        .remove_test_setting(repo.id, name)
        .await?
    {
        return Err(CodedError::new(
            handoff::error_code::ErrorCode::NotFound,
            format!("{} has no test-only setting {name}", repo.name.full_name()),
        ));
    }
    test_settings_of(core, &repo.name.full_name()).await
}

/// Every secret this installation keeps, for a value to be checked against.
async fn kept_secrets(core: &AppCore) -> Result<Vec<Secret>, CodedError> {
    let mut kept: Vec<Secret> = stored_token(&core.store, &core.secrets)
        .await?
        .into_iter()
        .collect();
    for name in ["anthropic", "openai", "claude-plan", "e2b"] {
        let (secret_name, _) = key_name(core, name).await?;
        kept.extend(core.secrets.get(&secret_name).await?);
    }
    Ok(kept)
}
