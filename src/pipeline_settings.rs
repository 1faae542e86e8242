//! How the pipeline works on this installation: the agent's commit author, the sandbox
//! limits, the default Docker image and E2B's addresses, read from the settings.

use std::time::Duration;

use crate::domain::agent_presets::AgentKey;
use crate::sandbox::e2b::E2bSettings;
use crate::sandbox::ResourceLimits;
use crate::secrets::{SecretName, SecretStore};
use crate::store::{SettingKey, Store, StoreError};

/// How long an item's working copy is kept after its last run unless a setting says
/// otherwise: two weeks.
pub const DEFAULT_KEPT_COPY_RETENTION: Duration = Duration::from_secs(14 * 24 * 3600);

/// The retention a `workspace.kept_copy_days` setting asks for: whole days, 0 for none.
pub fn kept_copy_retention_from_days(text: &str) -> Result<Option<Duration>, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(days) if days <= 3650 => Ok(Some(Duration::from_secs(u64::from(days) * 24 * 3600))),
        _ => Err(format!(
            "{text:?} is not a number of days: a whole number from 0 (keep no copies) to 3650"
        )),
    }
}

/// How the pipeline works on this installation.
#[derive(Debug, Clone)]
pub struct PipelineSettings {
    /// The author of the commits Handoff makes for the agent.
    pub git_name: String,
    pub git_email: String,
    /// How often a running pipeline shows it is alive (and looks for a cancel).
    pub heartbeat_interval: Duration,
    pub limits: ResourceLimits,
    /// The image Docker runs use when the repository names none; `None`: the image
    /// Handoff builds for the repository's agent (`handoff-agent:<preset>`).
    pub default_docker_image: Option<String>,
    pub e2b: E2bSettings,
    /// Keep each run's workspace after the run (to look at what the agent saw).
    pub keep_workspaces: bool,
    /// How long a feedback item's working copy is kept for its next run after its last
    /// one; `None`: not kept (every run makes a fresh copy).
    pub kept_copy_retention: Option<Duration>,
    /// Where a provider's API is reached, by provider (`anthropic`, `openai`), when not
    /// at `https://{its API host}`.
    pub provider_api_bases: Vec<(String, String)>,
}

impl Default for PipelineSettings {
    fn default() -> Self {
        PipelineSettings {
            git_name: "Handoff agent".to_owned(),
            git_email: "agent@handoff.invalid".to_owned(),
            heartbeat_interval: Duration::from_secs(2),
            limits: ResourceLimits::default(),
            default_docker_image: None,
            e2b: E2bSettings::default(),
            keep_workspaces: false,
            kept_copy_retention: Some(DEFAULT_KEPT_COPY_RETENTION),
            provider_api_bases: Vec::new(),
        }
    }
}

impl PipelineSettings {
    /// The image a repository that names none runs in, for an agent installed by the
    /// `image_preset` recipe.
    pub fn docker_image_for(&self, image_preset: &str) -> String {
        self.default_docker_image
            .clone()
            .unwrap_or_else(|| crate::domain::agent_presets::default_image(image_preset))
    }

    /// Where the requests (and the key) of `provider` go: its own setting, else
    /// `https://{default_host}`.
    pub fn provider_api_base_of(&self, provider: &str, default_host: &str) -> String {
        self.provider_api_bases
            .iter()
            .find(|(named, _)| named == provider)
            .map(|(_, base)| base.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("https://{default_host}"))
    }

    /// The keyring entry of `provider`'s key for the API address in use, so that a
    /// changed address finds no key to send there.
    pub fn agent_key_name(&self, provider: &str) -> SecretName {
        let default_host =
            crate::domain::agent_presets::default_api_host(provider).unwrap_or(provider);
        let base = self.provider_api_base_of(provider, default_host);
        SecretName::AgentApiKey {
            provider: provider.to_owned(),
            api_host: crate::service_address::authority_of(&base).unwrap_or(base),
        }
    }

    /// `provider`'s key for the API address in use; a key kept by an older version
    /// (not per address) counts for the provider's own API host only.
    pub async fn agent_key(
        &self,
        secrets: &SecretStore,
        provider: &str,
    ) -> Result<Option<crate::secrets::Secret>, crate::secrets::SecretError> {
        let name = self.agent_key_name(provider);
        if let Some(key) = secrets.get(&name).await? {
            return Ok(Some(key));
        }
        let own_host = crate::domain::agent_presets::default_api_host(provider);
        match (&name, own_host) {
            (SecretName::AgentApiKey { api_host, .. }, Some(own)) if api_host == own => {
                secrets
                    .get(&SecretName::AgentApiKeyOfOldVersions {
                        provider: provider.to_owned(),
                    })
                    .await
            }
            _ => Ok(None),
        }
    }

    /// The keyring entry of the Claude plan token for Anthropic's API address in use.
    pub fn claude_plan_token_name(&self) -> SecretName {
        let key = &crate::domain::claude_plan::PLAN_KEY;
        let base = self.provider_api_base(key);
        SecretName::ClaudePlanToken {
            api_host: crate::service_address::authority_of(&base).unwrap_or(base),
        }
    }

    /// The Claude plan token for Anthropic's API address in use, if one is kept.
    pub async fn claude_plan_token(
        &self,
        secrets: &SecretStore,
    ) -> Result<Option<crate::secrets::Secret>, crate::secrets::SecretError> {
        secrets.get(&self.claude_plan_token_name()).await
    }

    /// Where the agent's key and its requests go for `key`'s provider.
    pub fn provider_api_base(&self, key: &AgentKey) -> String {
        self.provider_api_base_of(key.provider, key.api_host)
    }

    /// The defaults, with what this installation's settings change.
    pub async fn configured(store: &Store) -> Result<Self, StoreError> {
        let mut settings = PipelineSettings::default();
        if let Some(name) = store.settings().setting(SettingKey::AgentGitName).await? {
            settings.git_name = name;
        }
        if let Some(email) = store.settings().setting(SettingKey::AgentGitEmail).await? {
            settings.git_email = email;
        }
        if let Some(image) = store
            .settings()
            .setting(SettingKey::DockerDefaultImage)
            .await?
        {
            settings.default_docker_image = Some(image).filter(|image| !image.trim().is_empty());
        }
        if let Some(base) = store.settings().setting(SettingKey::E2bApiBase).await? {
            settings.e2b.api_base = base.trim_end_matches('/').to_owned();
        }
        if let Some(template) = store.settings().setting(SettingKey::E2bEnvdUrl).await? {
            settings.e2b.envd_url_template = template;
        }
        if let Some(days) = store.settings().setting(SettingKey::KeptCopyDays).await? {
            match kept_copy_retention_from_days(&days) {
                Ok(retention) => settings.kept_copy_retention = retention,
                Err(refusal) => {
                    tracing::warn!(%refusal, "the kept copies' retention setting is not understood; the default is used")
                }
            }
        }
        for (provider, key) in [
            ("anthropic", SettingKey::AnthropicApiBase),
            ("openai", SettingKey::OpenaiApiBase),
        ] {
            if let Some(base) = store.settings().setting(key).await? {
                if !base.trim().is_empty() {
                    settings
                        .provider_api_bases
                        .push((provider.to_owned(), base.trim().to_owned()));
                }
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_copy_days_are_whole_days_and_zero_keeps_none() {
        assert_eq!(kept_copy_retention_from_days("0"), Ok(None));
        assert_eq!(
            kept_copy_retention_from_days(" 14 "),
            Ok(Some(DEFAULT_KEPT_COPY_RETENTION))
        );
        for wrong in ["", "-1", "1.5", "two", "3651"] {
            assert!(kept_copy_retention_from_days(wrong).is_err(), "{wrong:?}");
        }
    }
}
