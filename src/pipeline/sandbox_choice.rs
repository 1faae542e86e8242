//! Which sandbox a run gets: the backend asked for (or the repository's), set up from
//! this installation's settings and the keyring.

use super::{Pipeline, PipelineError};
use crate::domain::{Repo, SandboxBackend};
use crate::sandbox::docker::DockerSandbox;
use crate::sandbox::e2b::{E2bSandbox, DEFAULT_TEMPLATE};
use crate::sandbox::local_process::LocalSandbox;
use crate::sandbox::Sandbox;
use crate::secrets::SecretName;

impl Pipeline {
    /// The sandbox of `backend` for runs of `repo` (`None`: for cleaning up only).
    pub async fn sandbox_for(
        &self,
        backend: SandboxBackend,
        repo: Option<&Repo>,
    ) -> Result<Sandbox, PipelineError> {
        Ok(match backend {
            SandboxBackend::Local => Sandbox::Local(LocalSandbox),
            SandboxBackend::Docker => {
                let image = repo
                    .and_then(|repo| repo.docker_image.clone())
                    .unwrap_or_else(|| self.settings.default_docker_image.clone());
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
