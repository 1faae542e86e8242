//! The `docker` backend: a container on a real Docker engine — the local socket,
//! or a remote engine through `DOCKER_HOST` — so nothing is bind-mounted: the workspace
//! goes in and `out/` comes back as tar archives. It is removed in every outcome, panics
//! included (after `run` returns, before the run ends: see [`teardown`]), and carries
//! labels that let a restart find it.
//!
//! The container is the boundary, so it gets as little as the job can work with:
//! - an unprivileged user (the image's agent user, or `nobody`), no capabilities, no new
//!   privileges;
//! - a read-only root; the workspace (an anonymous volume of its own, removed with the
//!   container) is the only place that takes writes besides `/tmp`, a size-capped tmpfs
//!   that is also the agent's home; a feedback item's code run mounts the item's kept
//!   working copy as `repo/`, a volume of that item's alone that outlives the container
//!   (see the pipeline's `kept_copy`);
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
//!
//! - this file: [`DockerSandbox`] and a job's run from start to removal;
//! - [`container_setup`]: the container's network, kept copy and limits;
//! - [`job_in_container`]: the workspace in, the output followed, the end, `out/` back;
//! - [`leftovers`]: removing containers, a run's leftovers, and kept copies;
//! - [`ready_container`]: the container made ahead for an item's next run, which an
//!   iterate starts in instead of making its own;
//! - [`ready_streams`]: a run in such a container, its files in and `out/` back through
//!   the container's standard streams;
//! - [`teardown`]: the run's containers removed once it has what it needs, while the
//!   host pushes;
//! - [`test_services`]: the services a job's tests reach by name, on the run's own
//!   internal network.

mod container_setup;
mod job_in_container;
mod leftovers;
mod ready_container;
mod ready_streams;
mod teardown;
mod test_services;

pub use ready_container::READY_LABEL;

pub use test_services::ServiceContainer;

use std::collections::HashMap;
use std::time::Duration;

use bollard::query_parameters::CreateContainerOptionsBuilder;
use bollard::Docker;
use futures::{FutureExt as _, StreamExt as _};

use super::docker_gate::{self, EgressGate, HeldKey};
use super::docker_labels::{AGENT_USER_LABEL, INSTALLATION_LABEL, KEPT_COPY_LABEL, RUN_LABEL};
use super::tar_transfer::{pack_dir_owned_by, unpack_into};
use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use handoff_domain::{FeedbackId, NetworkMode, NetworkPolicy, RepoId, RunId, SandboxBackend};
use handoff_egress::gate_control::{set_rules, KeyForTheGate};

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
    /// The image the repository's egress gate runs from, when the jobs run in another
    /// (a repository's environment): the gate outlives runs, and an environment's image
    /// changes with its key.
    gate_image: Option<String>,
    /// The services the jobs' tests reach by name (a repository's environment).
    services: Vec<ServiceContainer>,
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
    /// Connects to this machine's engine (found as the `docker` command finds it), for
    /// the installation `installation` (its containers carry that label).
    pub fn connect(image: &str, installation: &str) -> Result<Self, SandboxError> {
        let engine = crate::docker_engine::this_machines_engine();
        let docker = Docker::connect_with_host(&engine.address).map_err(|error| {
            unavailable(format!(
                "cannot reach the Docker engine at {}: {error}",
                engine.describe()
            ))
        })?;
        Ok(DockerSandbox {
            docker,
            image: image.to_owned(),
            installation: installation.to_owned(),
            network: NetworkPolicy::default(),
            repository: None,
            gate_image: None,
            services: Vec::new(),
        })
    }

    /// The sandbox for `repository`'s jobs, with `network` as what they may reach
    /// through the repository's egress gate.
    pub fn for_repository(mut self, repository: RepoId, network: NetworkPolicy) -> Self {
        self.repository = Some(repository);
        self.network = network;
        self
    }

    /// The same sandbox in a repository's environment: its jobs run in `image` when it
    /// names one (its egress gate stays on the image it had), with `services` beside
    /// them.
    pub fn with_environment(
        mut self,
        image: Option<&str>,
        services: Vec<ServiceContainer>,
    ) -> Self {
        if let Some(image) = image {
            let before = std::mem::replace(&mut self.image, image.to_owned());
            self.gate_image.get_or_insert(before);
        }
        self.services = services;
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
        let label = image.config?.labels?.get(AGENT_USER_LABEL)?.clone();
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
        // A run whose job starts again (its kept copy could not be used) makes a
        // container of the same name: the first one is gone before.
        self.teardown_done(job.run_id).await;
        // In an image Handoff built, the agent runs as its own user; in any other, as
        // nobody. The workspace is handed to that user.
        let owner = self.agent_user().await.unwrap_or(NOBODY);

        // Whatever happens from here — an error, a panic — the containers go.
        let mut started = Vec::new();
        let mut gate_holds_key: Option<HeldKey> = None;
        let mut next_ready = None;
        let outcome = std::panic::AssertUnwindSafe(async {
            let services_network = self.start_services(job, &mut started).await?;
            let (mut network_mode, mut environment) =
                self.network_for(job, &mut gate_holds_key).await?;
            // With no network, the job's only one is its services'; with one, the job
            // joins the services' too, and reaches them past the proxy.
            let join_services = match services_network {
                Some(network) if network_mode == "none" => {
                    network_mode = network;
                    None
                }
                Some(network) => {
                    self.services_past_the_proxy(&mut environment);
                    Some(network)
                }
                None => None,
            };
            // A run whose gate stops can no longer be metered: it is stopped too.
            let control = match &gate_holds_key {
                Some(held) => JobControl {
                    cancel: held.stop_with(control.cancel.clone()),
                    events: control.events,
                },
                None => control,
            };
            let mounts = self.kept_copy_mount(job).await?;
            let body = self.container_body(job, owner, network_mode, environment.clone(), mounts);
            let (id, taken, ready) = self.container_for(job, &name, body, owner).await?;
            next_ready = ready;
            started.push(id.clone());
            if let Some(network) = &join_services {
                self.join_services(&id, network).await?;
            }
            control.report(SandboxEvent::Started {
                sandbox_id: id.clone(),
            });
            if taken {
                self.run_in_ready(&id, job, control, &environment).await
            } else {
                self.run_in(&id, job, control, owner).await
            }
        })
        .catch_unwind()
        .await;
        // The gate stays for the repository's next run; the run's key does not. What
        // the job's model calls spent reached its meter as they ended. The key goes
        // back before the run returns, the containers after (see `teardown`).
        if let Some(held) = gate_holds_key {
            held.release().await;
        }
        self.tear_down_later(
            job.run_id,
            teardown::RunLeftovers {
                containers: started,
                services_network: (!self.services.is_empty()).then(|| self.services_network(job)),
                next_ready,
            },
        );
        match outcome {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The container `job` runs in (made as `body`): the one made ahead for its item
    /// when it is running and made the same way (then `true`), else a new one named
    /// `name`; with the container to make ahead for the item's next run.
    async fn container_for(
        &self,
        job: &SandboxJob,
        name: &str,
        body: bollard::models::ContainerCreateBody,
        owner: (u64, u64),
    ) -> Result<
        (
            String,
            bool,
            Option<(FeedbackId, ready_container::ReadyContainer)>,
        ),
        SandboxError,
    > {
        let ready = match job.kept_copy {
            Some(item) => Some((item, self.ready_container_like(item, &body, owner).await)),
            None => None,
        };
        if let Some((item, wanted)) = &ready {
            if let Some(id) = self.take_ready(*item, wanted).await {
                return Ok((id, true, ready));
            }
        }
        let created = self
            .docker
            .create_container(
                Some(CreateContainerOptionsBuilder::default().name(name).build()),
                body,
            )
            .await
            .map_err(|error| failed(format!("cannot create the container: {error}")))?;
        Ok((created.id, false, ready))
    }

    /// The repository's egress gate, running.
    async fn gate(&self) -> Result<EgressGate, SandboxError> {
        let repository = self.repository.ok_or_else(|| {
            unavailable("a sandbox with a network needs its repository's egress gate")
        })?;
        let image = self.gate_image.as_deref().unwrap_or(&self.image);
        EgressGate::ensure(&self.docker, &self.installation, repository, image).await
    }

    /// The repository's egress gate, running, told this sandbox's network rules.
    async fn configured_gate(&self) -> Result<EgressGate, SandboxError> {
        let gate = self.gate().await?;
        gate.tell_rules(set_rules(
            &self.network,
            docker_gate::this_machines_addresses(),
        ))
        .await?;
        Ok(gate)
    }
}
