//! How the pipeline works on this installation: the agent's commit author, the sandbox
//! limits, the default Docker image and E2B's addresses, read from the settings.

use std::time::Duration;

use super::agent_presets::AgentKey;
use crate::sandbox::e2b::E2bSettings;
use crate::sandbox::ResourceLimits;
use crate::store::{SettingKey, Store, StoreError};

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
            .unwrap_or_else(|| crate::agent_image::default_image(image_preset))
    }

    /// Where the agent's key and its requests go for `key`'s provider.
    pub fn provider_api_base(&self, key: &AgentKey) -> String {
        self.provider_api_bases
            .iter()
            .find(|(provider, _)| provider == key.provider)
            .map(|(_, base)| base.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("https://{}", key.api_host))
    }

    /// The defaults, with what this installation's settings change.
    pub async fn configured(store: &Store) -> Result<Self, StoreError> {
        let mut settings = PipelineSettings::default();
        if let Some(name) = store.setting(SettingKey::AgentGitName).await? {
            settings.git_name = name;
        }
        if let Some(email) = store.setting(SettingKey::AgentGitEmail).await? {
            settings.git_email = email;
        }
        if let Some(image) = store.setting(SettingKey::DockerDefaultImage).await? {
            settings.default_docker_image = Some(image).filter(|image| !image.trim().is_empty());
        }
        if let Some(base) = store.setting(SettingKey::E2bApiBase).await? {
            settings.e2b.api_base = base.trim_end_matches('/').to_owned();
        }
        if let Some(template) = store.setting(SettingKey::E2bEnvdUrl).await? {
            settings.e2b.envd_url_template = template;
        }
        for (provider, key) in [
            ("anthropic", SettingKey::AnthropicApiBase),
            ("openai", SettingKey::OpenaiApiBase),
        ] {
            if let Some(base) = store.setting(key).await? {
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
