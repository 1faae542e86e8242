//! Which sandbox a run gets: the backend asked for (or the repository's), set up from
//! this installation's settings and the keyring.

use super::agent_presets::CUSTOM_IMAGE_PRESET;
use super::{Pipeline, PipelineError};
use crate::domain::{Repo, SandboxBackend};
use crate::sandbox::docker::DockerSandbox;
use crate::sandbox::e2b::{E2bSandbox, DEFAULT_TEMPLATE};
use crate::sandbox::local_process::LocalSandbox;
use crate::sandbox::Sandbox;
use crate::secrets::SecretName;

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
                let installation = self.store.installation_id().await?;
                Sandbox::Docker(DockerSandbox::connect(&image, &installation)?)
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
                Sandbox::E2b(E2bSandbox::new(settings, key))
            }
        })
    }
}
