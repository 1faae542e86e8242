//! What a job's container is made with: its network (none, or the repository's
//! internal network behind its egress gate, which is told the rules and the run's key),
//! the item's kept working copy mounted as `repo/`, and the limits that make the
//! container the boundary (see the parent module).

use std::collections::HashMap;

use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType, ResourcesUlimits};

use super::*;
use crate::build_network::BuildNetwork;

impl DockerSandbox {
    /// The network mode of `job`'s container and its environment. With a network, the
    /// repository's gate is told the rules, and the run's key when it has one (then
    /// `gate_holds_key` says so, for the key to be taken back at the end).
    pub(super) async fn network_for(
        &self,
        job: &SandboxJob,
        gate_holds_key: &mut Option<HeldKey>,
    ) -> Result<(String, Vec<String>), SandboxError> {
        let mut environment = vec![
            format!("HANDOFF_WORKSPACE={WORKSPACE}"),
            format!("HOME={SCRATCH}/home"),
        ];
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
                let gate = self.configured_gate().await?;
                // The agent's key stays outside: its provider calls go to the gate's
                // key forwarder, which adds it and reserves each call through the link
                // it holds the key on.
                if let Some(key) = &job.agent_key {
                    let for_gate = KeyForTheGate::of(
                        key,
                        &docker_gate::upstream_seen_from_the_gate(&key.upstream),
                        job.timeout + KEY_MARGIN,
                    );
                    *gate_holds_key = Some(gate.hold_key(for_gate, key.meter.clone()).await?);
                    environment.extend(
                        key.sandbox_environment(Some(&docker_gate::forwarder_address()))
                            .into_iter()
                            .map(|(name, value)| format!("{name}={value}")),
                    );
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
        Ok((network_mode, environment))
    }

    /// The network an environment's image for this repository is built on: what its
    /// runs get (none, or its internal network behind its egress gate, told the same
    /// rules as a run), with no key.
    pub async fn build_network(&self) -> Result<BuildNetwork, SandboxError> {
        Ok(match self.network.mode {
            NetworkMode::None => BuildNetwork::none(),
            NetworkMode::Open | NetworkMode::Allowlist => {
                let gate = self.configured_gate().await?;
                let words = match self.network.mode {
                    NetworkMode::Allowlist if self.network.allowed.is_empty() => {
                        "the repository's allow-list, which is empty: nothing is reached".to_owned()
                    }
                    NetworkMode::Allowlist => format!(
                        "the repository's allow-list ({}), through its egress gate",
                        self.network
                            .allowed
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => "any public address, through the repository's egress gate".to_owned(),
                };
                BuildNetwork::behind_gate(
                    gate.network(),
                    &docker_gate::proxy_address(),
                    docker_gate::GATE_ALIAS,
                    words,
                )
            }
        })
    }

    /// The item's kept working copy: a volume of its own, mounted as `repo/`.
    pub(super) async fn kept_copy_mount(
        &self,
        job: &SandboxJob,
    ) -> Result<Option<Vec<Mount>>, SandboxError> {
        Ok(match job.kept_copy {
            Some(item) => Some(vec![Mount {
                target: Some(KEPT_REPO.to_owned()),
                source: Some(self.ensure_kept_copy(item).await?),
                typ: Some(MountType::VOLUME),
                ..Mount::default()
            }]),
            None => None,
        })
    }

    /// The container of `job`, running as `owner` (uid, gid).
    pub(super) fn container_body(
        &self,
        job: &SandboxJob,
        (uid, gid): (u64, u64),
        network_mode: String,
        environment: Vec<String>,
        mounts: Option<Vec<Mount>>,
    ) -> ContainerCreateBody {
        let mut labels = HashMap::new();
        labels.insert(RUN_LABEL.to_owned(), job.run_id.to_string());
        labels.insert(INSTALLATION_LABEL.to_owned(), self.installation.clone());
        ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(vec![
                "sh".to_owned(),
                "-c".to_owned(),
                format!("mkdir -p \"$HOME\" && exec sh {WORKSPACE}/handoff/job.sh"),
            ]),
            env: Some(environment),
            user: Some(format!("{uid}:{gid}")),
            working_dir: Some(WORKSPACE.to_owned()),
            labels: Some(labels),
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
        }
    }
}
