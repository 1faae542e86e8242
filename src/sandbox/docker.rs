//! The `docker` backend: a container on a real Docker engine — the local socket,
//! or a remote engine through `DOCKER_HOST` — so nothing is bind-mounted: the workspace
//! goes in and `out/` comes back as tar archives. It is removed in every outcome, panics
//! included, and carries labels that let a restart find it.
//!
//! The container is the boundary, so it gets as little as the job can work with:
//! - an unprivileged user (the image's agent user, or `nobody`), no capabilities, no new
//!   privileges;
//! - a read-only root; the workspace (an anonymous volume of its own, removed with the
//!   container) is the only place that takes writes besides `/tmp`, a size-capped tmpfs
//!   that is also the agent's home; a feedback item's code run mounts the item's kept
//!   working copy as `repo/`, a volume of that item's alone that outlives the container
//!   (see [`crate::pipeline::kept_copy`]);
//! - memory with no swap beyond it, CPUs, processes, and a cap on the size of any one
//!   file it writes (the engine caps the volume's total only where its storage driver
//!   can, which is not assumed);
//! - the repository's network mode: none, or the repository's internal network whose
//!   only way out is its egress gate (see [`super::docker_gate`]), which lets through
//!   the hosts on the list, or in open mode any public address, and never this
//!   machine, its networks or the metadata address;
//! - no API key: the agent's key variable holds a placeholder and its provider's base
//!   address names the key forwarder in the repository's egress gate (see
//!   [`super::key_forwarding`]), which adds the key on the way out.

use std::collections::HashMap;
use std::time::Duration;

use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType, ResourcesUlimits};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    KillContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use bollard::Docker;
use futures::{FutureExt as _, StreamExt as _};

use super::docker_gate::{self, EgressGate};
use super::tar_transfer::{pack_dir_owned_by, unpack_into};
use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use crate::domain::{FeedbackId, NetworkMode, NetworkPolicy, RepoId, RunId, SandboxBackend};
use crate::egress::gate_control::{set_rules, GateCommand, KeyForTheGate};

/// The label every Handoff container carries, with the run's id as value.
pub const RUN_LABEL: &str = "dev.handoff.run";
/// The label naming the installation (data folder) a container belongs to.
pub const INSTALLATION_LABEL: &str = "dev.handoff.installation";
/// The label of a feedback item's kept working copy (a volume), with the item's id.
pub const KEPT_COPY_LABEL: &str = "dev.handoff.kept-copy";

/// The volume mounted in the container; the workspace is a folder in it, so that the
/// folder itself belongs to the agent's user.
const VOLUME: &str = "/sandbox";
/// Where the workspace lives inside the container.
const WORKSPACE: &str = "/sandbox/workspace";
/// Where a feedback item's kept working copy (a volume of its own) is mounted.
const KEPT_REPO: &str = "/sandbox/workspace/repo";
/// Scratch space and the agent's home (a tmpfs).
const SCRATCH: &str = "/tmp";
/// The user a job runs as when the image names no agent user.
const NOBODY: (u64, u64) = (65534, 65534);
/// Size of the scratch tmpfs.
const SCRATCH_BYTES: u64 = 1024 * 1024 * 1024;
/// How long the egress gate keeps a run's key beyond the run's time limit, should the
/// run never give it back.
const KEY_MARGIN: Duration = Duration::from_secs(10 * 60);
/// The largest file a job may write.
const LARGEST_FILE_BYTES: i64 = 8 * 1024 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct DockerSandbox {
    docker: Docker,
    image: String,
    installation: String,
    network: NetworkPolicy,
    /// The repository whose egress gate the jobs' traffic leaves through.
    repository: Option<RepoId>,
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
            network: NetworkPolicy::default(),
            repository: None,
        })
    }

    /// The sandbox for `repository`'s jobs, with `network` as what they may reach
    /// through the repository's egress gate.
    pub fn for_repository(mut self, repository: RepoId, network: NetworkPolicy) -> Self {
        self.repository = Some(repository);
        self.network = network;
        self
    }

    /// The engine this sandbox talks to.
    pub fn engine(&self) -> &Docker {
        &self.docker
    }

    /// The installation whose containers this sandbox makes.
    pub fn installation(&self) -> &str {
        &self.installation
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
        let mut environment = vec![
            format!("HANDOFF_WORKSPACE={WORKSPACE}"),
            format!("HOME={SCRATCH}/home"),
        ];
        // In an image Handoff built, the agent runs as its own user; in any other, as
        // nobody. The workspace is handed to that user.
        let (uid, gid) = self.agent_user().await.unwrap_or(NOBODY);

        // Whatever happens from here — an error, a panic — the containers go.
        let mut started = Vec::new();
        let mut gate_holds_key: Option<(EgressGate, String)> = None;
        let outcome = std::panic::AssertUnwindSafe(async {
            let network_mode = match self.network.mode {
                NetworkMode::None => {
                    if let Some(key) = &job.agent_key {
                        environment.extend(
                            key.sandbox_environment(None)
                                .into_iter()
                                .map(|(name, value)| format!("{name}={value}")),
                        );
                    }
                    "none".to_owned()
                }
                NetworkMode::Open | NetworkMode::Allowlist => {
                    let gate = self.gate().await?;
                    let mut commands = vec![set_rules(
                        &self.network,
                        docker_gate::this_machines_addresses(),
                    )];
                    // The agent's key stays outside: its provider calls go to the gate's
                    // key forwarder, which adds it.
                    if let Some(key) = &job.agent_key {
                        commands.push(GateCommand::AddKey {
                            key: KeyForTheGate::of(
                                key,
                                &docker_gate::upstream_seen_from_the_gate(&key.upstream),
                                job.timeout + KEY_MARGIN,
                            ),
                        });
                        environment.extend(
                            key.sandbox_environment(Some(&docker_gate::forwarder_address()))
                                .into_iter()
                                .map(|(name, value)| format!("{name}={value}")),
                        );
                    }
                    gate.configure(&commands).await?;
                    if let Some(key) = &job.agent_key {
                        gate_holds_key = Some((gate.clone(), key.placeholder.clone()));
                    }
                    let proxy = docker_gate::proxy_address();
                    for variable in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
                        environment.push(format!("{variable}={proxy}"));
                    }
                    // The key forwarder is reached directly, not through the proxy.
                    for variable in ["NO_PROXY", "no_proxy"] {
                        environment.push(format!("{variable}={}", docker_gate::GATE_ALIAS));
                    }
                    gate.network().to_owned()
                }
            };
            // The item's kept working copy: a volume of its own, mounted as repo/.
            let mounts = match job.kept_copy {
                Some(item) => Some(vec![Mount {
                    target: Some(KEPT_REPO.to_owned()),
                    source: Some(self.ensure_kept_copy(item).await?),
                    typ: Some(MountType::VOLUME),
                    ..Mount::default()
                }]),
                None => None,
            };
            let body = ContainerCreateBody {
                image: Some(self.image.clone()),
                cmd: Some(vec![
                    "sh".to_owned(),
                    "-c".to_owned(),
                    format!("mkdir -p \"$HOME\" && exec sh {WORKSPACE}/handoff/job.sh"),
                ]),
                env: Some(environment),
                user: Some(format!("{uid}:{gid}")),
                working_dir: Some(WORKSPACE.to_owned()),
                labels: Some(labels.clone()),
                volumes: Some(vec![VOLUME.to_owned()]),
                host_config: Some(HostConfig {
                    memory: Some(job.limits.memory_bytes),
                    // No swap beyond the memory limit.
                    memory_swap: Some(job.limits.memory_bytes),
                    nano_cpus: Some((job.limits.cpus * 1e9) as i64),
                    pids_limit: Some(job.limits.max_processes),
                    security_opt: Some(vec!["no-new-privileges".to_owned()]),
                    cap_drop: Some(vec!["ALL".to_owned()]),
                    readonly_rootfs: Some(true),
                    tmpfs: Some(HashMap::from([(
                        SCRATCH.to_owned(),
                        format!("rw,nosuid,nodev,size={SCRATCH_BYTES},mode=1777"),
                    )])),
                    ulimits: Some(vec![ResourcesUlimits {
                        name: Some("fsize".to_owned()),
                        soft: Some(LARGEST_FILE_BYTES),
                        hard: Some(LARGEST_FILE_BYTES),
                    }]),
                    network_mode: Some(network_mode),
                    mounts,
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
            started.push(id.clone());
            control.report(SandboxEvent::Started {
                sandbox_id: id.clone(),
            });
            self.run_in(&id, job, control, (uid, gid)).await
        })
        .catch_unwind()
        .await;
        for id in started.iter().rev() {
            self.remove(id).await;
        }
        // The gate stays for the repository's next run; the run's key does not.
        if let Some((gate, placeholder)) = gate_holds_key {
            if let Err(error) = gate
                .configure(&[GateCommand::RemoveKey { placeholder }])
                .await
            {
                tracing::warn!(%error, "the egress gate could not be told to forget a run's key; it holds it until it stops");
            }
        }
        match outcome {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The repository's egress gate, running.
    async fn gate(&self) -> Result<EgressGate, SandboxError> {
        let repository = self.repository.ok_or_else(|| {
            unavailable("a sandbox with a network needs its repository's egress gate")
        })?;
        EgressGate::ensure(&self.docker, &self.installation, repository, &self.image).await
    }

    async fn run_in(
        &self,
        id: &str,
        job: &SandboxJob,
        mut control: JobControl,
        owner: (u64, u64),
    ) -> Result<SandboxEnd, SandboxError> {
        let archive = pack_dir_owned_by(&job.workspace, "workspace", false, Some(owner)).map_err(
            |error| SandboxError::Transfer(format!("cannot pack the workspace: {error}")),
        )?;
        // Into the volume: the root is read-only.
        self.docker
            .upload_to_container(
                id,
                Some(
                    UploadToContainerOptionsBuilder::default()
                        .path(VOLUME)
                        .build(),
                ),
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
                while let Some(next) = stream.next().await {
                    let output = match next {
                        Ok(output) => output,
                        Err(error) => {
                            // The job goes on and its end is still awaited; only its
                            // output stops reaching the run's log.
                            tracing::warn!(%error, "the container's output stream broke; the rest of its output is not in the run's log");
                            control.report(SandboxEvent::Output {
                                stream: OutputStream::Stderr,
                                bytes: format!("handoff: the sandbox's output could not be read further ({error})\n").into_bytes(),
                            });
                            break;
                        }
                    };
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
        // Networks of their own that runs of earlier versions made.
        for network in self.networks_of(Some(run_id)).await? {
            if let Err(error) = self.docker.remove_network(&network).await {
                tracing::warn!(%network, %error, "a run's network could not be removed");
            }
        }
        Ok(())
    }

    /// Names of this installation's networks (of one run, or all of them).
    pub async fn networks_of(&self, run_id: Option<RunId>) -> Result<Vec<String>, SandboxError> {
        let networks = self
            .docker
            .list_networks(Some(
                bollard::query_parameters::ListNetworksOptionsBuilder::default()
                    .filters(&self.label_filters(run_id))
                    .build(),
            ))
            .await
            .map_err(|error| unavailable(format!("cannot list networks: {error}")))?;
        Ok(networks
            .into_iter()
            .filter_map(|network| network.name)
            .collect())
    }

    /// The label filter that finds this installation's things (of one run, or all).
    fn label_filters(&self, run_id: Option<RunId>) -> HashMap<String, Vec<String>> {
        let mut labels = vec![format!("{INSTALLATION_LABEL}={}", self.installation)];
        labels.push(match run_id {
            Some(run) => format!("{RUN_LABEL}={run}"),
            None => RUN_LABEL.to_owned(),
        });
        HashMap::from([("label".to_owned(), labels)])
    }

    /// The volume that holds `item`'s kept working copy on this engine.
    pub fn kept_copy_volume(&self, item: FeedbackId) -> String {
        format!("handoff-{}-item-{}", self.installation, item.0)
    }

    /// `item`'s kept-copy volume, made (with the labels that find it) if missing.
    async fn ensure_kept_copy(&self, item: FeedbackId) -> Result<String, SandboxError> {
        let name = self.kept_copy_volume(item);
        let labels = HashMap::from([
            (INSTALLATION_LABEL.to_owned(), self.installation.clone()),
            (KEPT_COPY_LABEL.to_owned(), item.0.to_string()),
        ]);
        self.docker
            .create_volume(bollard::models::VolumeCreateRequest {
                name: Some(name.clone()),
                labels: Some(labels),
                ..Default::default()
            })
            .await
            .map_err(|error| {
                failed(format!(
                    "cannot make the volume {name} of the item's working copy: {error}"
                ))
            })?;
        Ok(name)
    }

    /// Removes `item`'s kept-copy volume; nothing to do when there is none.
    pub async fn remove_kept_copy(&self, item: FeedbackId) -> Result<(), SandboxError> {
        let name = self.kept_copy_volume(item);
        match self
            .docker
            .remove_volume(
                &name,
                None::<bollard::query_parameters::RemoveVolumeOptions>,
            )
            .await
        {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(error) => Err(unavailable(format!(
                "cannot remove the volume {name}: {error}"
            ))),
        }
    }

    /// The items whose kept copies have a volume of this installation on the engine.
    pub async fn kept_copies(&self) -> Result<Vec<FeedbackId>, SandboxError> {
        let filters = HashMap::from([(
            "label".to_owned(),
            vec![
                format!("{INSTALLATION_LABEL}={}", self.installation),
                KEPT_COPY_LABEL.to_owned(),
            ],
        )]);
        let listed = self
            .docker
            .list_volumes(Some(
                bollard::query_parameters::ListVolumesOptionsBuilder::default()
                    .filters(&filters)
                    .build(),
            ))
            .await
            .map_err(|error| unavailable(format!("cannot list volumes: {error}")))?;
        Ok(listed
            .volumes
            .unwrap_or_default()
            .into_iter()
            .filter_map(|volume| volume.labels.get(KEPT_COPY_LABEL)?.parse().ok())
            .map(FeedbackId)
            .collect())
    }

    /// Ids of this installation's containers (of one run, or all of them).
    pub async fn containers_of(&self, run_id: Option<RunId>) -> Result<Vec<String>, SandboxError> {
        let filters = self.label_filters(run_id);
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
