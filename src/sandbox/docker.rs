//! The `docker` backend: a container on a real Docker engine — the local socket,
//! or a remote engine through `DOCKER_HOST` — so nothing is bind-mounted: the workspace
//! goes in and `out/` comes back as tar archives. The container has memory, CPU and
//! process limits, no new privileges, a wall-clock timeout, and labels that let a
//! restart find it; it is removed in every outcome, panics included.

use std::collections::HashMap;
use std::time::Duration;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    KillContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use bollard::Docker;
use futures::{FutureExt as _, StreamExt as _};

use super::tar_transfer::{pack_dir_owned_by, unpack_into};
use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use crate::domain::{RunId, SandboxBackend};

/// The label every Handoff container carries, with the run's id as value.
pub const RUN_LABEL: &str = "dev.handoff.run";
/// The label naming the installation (data folder) a container belongs to.
pub const INSTALLATION_LABEL: &str = "dev.handoff.installation";

/// Where the workspace lives inside the container.
const WORKSPACE: &str = "/workspace";

#[derive(Debug, Clone)]
pub struct DockerSandbox {
    docker: Docker,
    image: String,
    installation: String,
}

fn unavailable(detail: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::Docker,
        detail: detail.into(),
    }
}

fn failed(detail: impl Into<String>) -> SandboxError {
    SandboxError::Failed {
        backend: SandboxBackend::Docker,
        detail: detail.into(),
    }
}

impl DockerSandbox {
    /// Connects to the engine named by `DOCKER_HOST`, or the default socket, for the
    /// installation `installation` (its containers carry that label).
    pub fn connect(image: &str, installation: &str) -> Result<Self, SandboxError> {
        let docker = Docker::connect_with_defaults()
            .map_err(|error| unavailable(format!("cannot reach the Docker engine: {error}")))?;
        Ok(DockerSandbox {
            docker,
            image: image.to_owned(),
            installation: installation.to_owned(),
        })
    }

    pub fn image(&self) -> &str {
        &self.image
    }

    /// The user (uid, gid) the image runs its agent as, when Handoff built the image.
    async fn agent_user(&self) -> Option<(u64, u64)> {
        let image = match self.docker.inspect_image(&self.image).await {
            Ok(image) => image,
            Err(error) => {
                tracing::warn!(image = %self.image, %error, "the image's agent user cannot be read; the agent runs as the image's user");
                return None;
            }
        };
        let label = image
            .config?
            .labels?
            .get(crate::agent_image::AGENT_USER_LABEL)?
            .clone();
        let (uid, gid) = label.split_once(':')?;
        Some((uid.parse().ok()?, gid.parse().ok()?))
    }

    pub async fn preflight(&self) -> Result<(), SandboxError> {
        self.docker
            .ping()
            .await
            .map_err(|error| unavailable(format!("the Docker engine does not answer: {error}")))?;
        self.docker.inspect_image(&self.image).await.map_err(|_| {
            unavailable(format!(
                "the image {} is not on this engine (no registry is used: build or load it first)",
                self.image
            ))
        })?;
        Ok(())
    }

    pub async fn run(
        &self,
        job: &SandboxJob,
        control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let name = format!("handoff-{}-run-{}", self.installation, job.run_id);
        let mut labels = HashMap::new();
        labels.insert(RUN_LABEL.to_owned(), job.run_id.to_string());
        labels.insert(INSTALLATION_LABEL.to_owned(), self.installation.clone());
        let mut environment = vec![format!("HANDOFF_WORKSPACE={WORKSPACE}")];
        environment.extend(
            job.environment
                .iter()
                .map(|(name, value)| format!("{name}={}", value.expose())),
        );
        let body = ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(vec!["sh".to_owned(), format!("{WORKSPACE}/handoff/job.sh")]),
            env: Some(environment),
            working_dir: Some(WORKSPACE.to_owned()),
            labels: Some(labels),
            host_config: Some(HostConfig {
                memory: Some(job.limits.memory_bytes),
                nano_cpus: Some((job.limits.cpus * 1e9) as i64),
                pids_limit: Some(job.limits.max_processes),
                security_opt: Some(vec!["no-new-privileges".to_owned()]),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        };
        let created = self
            .docker
            .create_container(
                Some(CreateContainerOptionsBuilder::default().name(&name).build()),
                body,
            )
            .await
            .map_err(|error| failed(format!("cannot create the container: {error}")))?;
        let id = created.id;
        control.report(SandboxEvent::Started {
            sandbox_id: id.clone(),
        });

        // Whatever happens inside — an error, a panic — the container goes.
        let outcome = std::panic::AssertUnwindSafe(self.run_in(&id, job, control))
            .catch_unwind()
            .await;
        self.remove(&id).await;
        match outcome {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    async fn run_in(
        &self,
        id: &str,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        // In an image Handoff built, the agent runs as its own user: the workspace is
        // handed to that user, so that a non-root agent can work in it.
        let owner = self.agent_user().await;
        let archive =
            pack_dir_owned_by(&job.workspace, "workspace", false, owner).map_err(|error| {
                SandboxError::Transfer(format!("cannot pack the workspace: {error}"))
            })?;
        self.docker
            .upload_to_container(
                id,
                Some(UploadToContainerOptionsBuilder::default().path("/").build()),
                bollard::body_full(archive.into()),
            )
            .await
            .map_err(|error| {
                SandboxError::Transfer(format!("cannot copy the workspace in: {error}"))
            })?;
        self.docker
            .start_container(id, None)
            .await
            .map_err(|error| failed(format!("cannot start the container: {error}")))?;

        let logs = {
            let mut stream = self.docker.logs(
                id,
                Some(
                    LogsOptionsBuilder::default()
                        .follow(true)
                        .stdout(true)
                        .stderr(true)
                        .build(),
                ),
            );
            let control = control.clone();
            tokio::spawn(async move {
                while let Some(Ok(output)) = stream.next().await {
                    let (stream, bytes) = match output {
                        bollard::container::LogOutput::StdErr { message } => {
                            (OutputStream::Stderr, message)
                        }
                        bollard::container::LogOutput::StdOut { message }
                        | bollard::container::LogOutput::Console { message } => {
                            (OutputStream::Stdout, message)
                        }
                        bollard::container::LogOutput::StdIn { .. } => continue,
                    };
                    control.report(SandboxEvent::Output {
                        stream,
                        bytes: bytes.to_vec(),
                    });
                }
            })
        };

        let mut wait = self.docker.wait_container(
            id,
            Some(
                WaitContainerOptionsBuilder::default()
                    .condition("not-running")
                    .build(),
            ),
        );
        let end = tokio::select! {
            result = wait.next() => match result {
                Some(Ok(response)) => SandboxEnd::Exited(response.status_code),
                // A non-zero exit comes back as an error carrying the code.
                Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => SandboxEnd::Exited(code),
                Some(Err(error)) => return Err(failed(format!("lost the container while waiting: {error}"))),
                None => return Err(failed("the engine stopped answering while the job ran")),
            },
            _ = tokio::time::sleep(job.timeout) => {
                self.kill(id).await;
                SandboxEnd::TimedOut
            }
            _ = control.cancelled() => {
                self.kill(id).await;
                SandboxEnd::Cancelled
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), logs)
            .await
            .is_err()
        {
            tracing::warn!(
                container = id,
                "the container's log did not end within 10 s; its tail may be missing"
            );
        }

        let mut download = self.docker.download_from_container(
            id,
            Some(
                DownloadFromContainerOptionsBuilder::default()
                    .path(&format!("{WORKSPACE}/out"))
                    .build(),
            ),
        );
        let mut archive = Vec::new();
        while let Some(chunk) = download.next().await {
            match chunk {
                Ok(bytes)
                    if (archive.len() + bytes.len()) as u64 > job.limits.output.archive_bytes() =>
                {
                    return Err(SandboxError::Transfer(format!(
                        "cannot copy out/ back: it is over the cap of {} bytes",
                        job.limits.output.total_bytes
                    )))
                }
                Ok(bytes) => archive.extend_from_slice(&bytes),
                // No out/ at all (the job never got that far): nothing to bring back.
                Err(_) if archive.is_empty() => return Ok(end),
                Err(error) => {
                    return Err(SandboxError::Transfer(format!(
                        "cannot copy out/ back: {error}"
                    )))
                }
            }
        }
        // The archive holds `out/...`; the host workspace gets it as `out/`.
        unpack_into(&archive, &job.workspace, 0, false, &job.limits.output)
            .map_err(|error| SandboxError::Transfer(format!("cannot unpack out/: {error}")))?;
        Ok(end)
    }

    async fn kill(&self, id: &str) {
        if let Err(error) = self
            .docker
            .kill_container(
                id,
                Some(
                    KillContainerOptionsBuilder::default()
                        .signal("KILL")
                        .build(),
                ),
            )
            .await
        {
            // Already stopped is the usual reason; anything else is worth a line.
            tracing::debug!(container = id, %error, "killing the container");
        }
    }

    async fn remove(&self, id: &str) {
        if let Err(error) = self
            .docker
            .remove_container(
                id,
                Some(
                    RemoveContainerOptionsBuilder::default()
                        .force(true)
                        .v(true)
                        .build(),
                ),
            )
            .await
        {
            tracing::warn!(container = id, %error, "the container could not be removed");
        }
    }

    /// Removes every container of run `run_id` (found by its label).
    pub async fn remove_leftover(&self, run_id: RunId) -> Result<(), SandboxError> {
        for id in self.containers_of(Some(run_id)).await? {
            self.remove(&id).await;
        }
        Ok(())
    }

    /// Ids of this installation's containers (of one run, or all of them).
    pub async fn containers_of(&self, run_id: Option<RunId>) -> Result<Vec<String>, SandboxError> {
        let mut labels = vec![format!("{INSTALLATION_LABEL}={}", self.installation)];
        labels.push(match run_id {
            Some(run) => format!("{RUN_LABEL}={run}"),
            None => RUN_LABEL.to_owned(),
        });
        let mut filters = HashMap::new();
        filters.insert("label".to_owned(), labels);
        let containers = self
            .docker
            .list_containers(Some(
                ListContainersOptionsBuilder::default()
                    .all(true)
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(|error| unavailable(format!("cannot list containers: {error}")))?;
        Ok(containers
            .into_iter()
            .filter_map(|container| container.id)
            .collect())
    }
}
