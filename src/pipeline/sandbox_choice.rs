//! Which sandbox a run gets: the backend asked for (or the repository's), set up from
//! this installation's settings and the keyring.

use super::{Pipeline, PipelineError};
use crate::domain::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET};
use crate::domain::{AllowedHost, NetworkPolicy, Repo, SandboxBackend};
use crate::sandbox::docker::DockerSandbox;
use crate::sandbox::e2b::{E2bSandbox, DEFAULT_TEMPLATE};
use crate::sandbox::local_process::LocalSandbox;
use crate::sandbox::Sandbox;
use crate::secrets::SecretName;

/// What `repo`'s sandboxes may reach: its mode, and in allow-list mode its own hosts
/// plus the API host of the agent it runs.
pub fn network_policy_of(repo: &Repo) -> NetworkPolicy {
    let mut allowed = repo.allowed_hosts.clone();
    if let Ok(agent) = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref()) {
        if let Some(key) = agent.api_key() {
            allowed.push(AllowedHost {
                host: key.api_host.to_owned(),
                port: Some(443),
                pinned: None,
            });
        }
    }
    NetworkPolicy {
        mode: repo.network_mode,
        allowed,
    }
}

impl Pipeline {
    /// The image `repo`'s Docker runs use, and the recipe Handoff builds it from (`None`
    /// when the repository names its own image).
    pub fn docker_image_of(&self, repo: &Repo) -> (String, Option<String>) {
        crate::setup_check::docker_image_of(&self.settings, repo)
    }

    /// The sandbox of `backend` for runs of `repo` (`None`: for cleaning up only).
    pub async fn sandbox_for(
        &self,
        backend: SandboxBackend,
        repo: Option<&Repo>,
    ) -> Result<Sandbox, PipelineError> {
        Ok(match backend {
            SandboxBackend::Local => Sandbox::Local(LocalSandbox),
            SandboxBackend::Docker => {
                let image = match repo {
                    Some(repo) => self.docker_image_of(repo).0,
                    None => self.settings.docker_image_for(CUSTOM_IMAGE_PRESET),
                };
                let installation = self.store.settings().installation_id().await?;
                let sandbox = DockerSandbox::connect(&image, &installation)?;
                Sandbox::Docker(match repo {
                    Some(repo) => sandbox.for_repository(repo.id, network_policy_of(repo)),
                    None => sandbox,
                })
            }
            SandboxBackend::E2b => {
                let mut settings = self.settings.e2b.clone();
                settings.template = repo
                    .and_then(|repo| repo.e2b_template.clone())
                    .unwrap_or_else(|| DEFAULT_TEMPLATE.to_owned());
                let key = self
                    .secrets
                    .get(&SecretName::E2bApiKey {
                        api_host: settings.api_host(),
                    })
                    .await?;
                let sandbox = E2bSandbox::new(settings, key);
                Sandbox::E2b(match repo {
                    Some(repo) => sandbox.with_network(network_policy_of(repo)),
                    None => sandbox,
                })
            }
        })
    }
}
