//! A repository's egress gate on a Docker engine: the container its sandboxes' traffic
//! leaves through, and the internal network they share with it.
//!
//! The agent's container sits on the repository's internal network: the network has no
//! route out and no address on the host (`inhibit_ipv4`), so neither the internet, nor
//! the cloud's metadata address, nor any service of the host, nor another repository's
//! sandbox can be reached from it. The one other thing on that network is the gate
//! (`handoff-gate` there), a container on the internal network and on the engine's
//! default network that runs Handoff's own `handoff-egress` program (see
//! [`crate::egress`]): the allow-list proxy on port 3128 and the agent's key forwarder
//! on port 3129. The gate runs from the repository's image with no capabilities, a
//! read-only root and an unprivileged user; its program is copied in through the engine,
//! so a remote engine runs it too.
//!
//! Handoff sets the gate's rules and hands it a run's key by running
//! `handoff-egress configure` in the gate's container through the engine; the key
//! travels only in memory, and the agent's container cannot reach the control socket.
//! The gate and its network outlive a run: the next run of the repository finds them,
//! updates the rules in place and goes on, and a gate with nothing to do stops itself
//! after half an hour (the next run starts it again). A gate whose program changed is
//! made anew.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::{
    ContainerCreateBody, EndpointSettings, ExecConfig, HostConfig, NetworkConnectRequest,
};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use futures::StreamExt as _;
use tokio::io::AsyncWriteExt as _;

use super::docker::INSTALLATION_LABEL;
use super::SandboxError;
use crate::domain::{RepoId, SandboxBackend};
use crate::egress::gate_control::GateCommand;
use crate::egress::{FORWARDER_PORT, PROXY_PORT};

/// The label of a gate and of its network, with the repository's id.
pub const GATE_LABEL: &str = "dev.handoff.gate";
/// The label telling which program a gate runs (its size and time), so a gate of an
/// older program is made anew.
const GATE_PROGRAM_LABEL: &str = "dev.handoff.gate-program";
/// The gate's name on the repository's internal network.
pub const GATE_ALIAS: &str = "handoff-gate";
/// The program's name, beside Handoff's own programs and in the gate.
pub const GATE_PROGRAM: &str = "handoff-egress";
/// The variable that names the program when it is elsewhere.
pub const GATE_PROGRAM_VARIABLE: &str = "HANDOFF_EGRESS_PROGRAM";
/// Where the program is in the gate's container (a volume of the gate's own).
const PROGRAM_DIR: &str = "/handoff-gate";
/// The control socket's folder (a tmpfs only the gate's user can enter).
const CONTROL_DIR: &str = "/run/handoff-gate";
/// How long a gate with nothing to do keeps running.
const IDLE_EXIT: Duration = Duration::from_secs(30 * 60);
/// The user the gate runs as.
const GATE_USER: &str = "65534:65534";

fn unavailable(detail: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::Docker,
        detail: detail.into(),
    }
}

/// The `handoff-egress` program this installation copies into its gates.
#[derive(Debug, Clone)]
pub struct GateProgram {
    pub path: PathBuf,
    /// Its size and modification time: a new build is a new gate.
    pub stamp: String,
}

/// Finds the program: `HANDOFF_EGRESS_PROGRAM`, else beside the running program (or one
/// folder up, where a test's program sits below the built programs).
pub fn gate_program() -> Result<GateProgram, String> {
    static FOUND: OnceLock<Result<GateProgram, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let candidates: Vec<PathBuf> = match std::env::var_os(GATE_PROGRAM_VARIABLE) {
                Some(path) => vec![PathBuf::from(path)],
                None => {
                    let running = std::env::current_exe()
                        .map_err(|error| format!("cannot tell where Handoff runs from: {error}"))?;
                    running
                        .ancestors()
                        .skip(1)
                        .take(2)
                        .map(|folder| folder.join(GATE_PROGRAM))
                        .collect()
                }
            };
            for candidate in &candidates {
                if let Ok(metadata) = std::fs::metadata(candidate) {
                    if metadata.is_file() {
                        let modified = metadata
                            .modified()
                            .ok()
                            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                            .map_or(0, |since| since.as_nanos());
                        return Ok(GateProgram {
                            path: candidate.clone(),
                            stamp: format!("{}-{modified}", metadata.len()),
                        });
                    }
                }
            }
            Err(format!(
                "the egress gate's program {GATE_PROGRAM} is not installed (looked at {})",
                candidates
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
        .clone()
}

/// The addresses of this machine, which a sandbox never reaches unless the owner
/// listed one.
pub fn this_machines_addresses() -> Vec<IpAddr> {
    static FOUND: OnceLock<Vec<IpAddr>> = OnceLock::new();
    FOUND
        .get_or_init(|| match if_addrs::get_if_addrs() {
            Ok(interfaces) => interfaces.into_iter().map(|interface| interface.ip()).collect(),
            Err(error) => {
                tracing::warn!(%error, "this machine's addresses cannot be read; the gate refuses private ones all the same");
                Vec::new()
            }
        })
        .clone()
}

/// Where the gate reaches `upstream`: a provider address on this machine's loopback
/// (a local stand-in) is reached through the engine's host gateway.
pub fn upstream_seen_from_the_gate(upstream: &str) -> String {
    let Ok(mut address) = url::Url::parse(upstream) else {
        return upstream.to_owned();
    };
    let on_loopback = match address.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(v4)) => v4.is_loopback(),
        Some(url::Host::Ipv6(v6)) => v6.is_loopback(),
        None => false,
    };
    if on_loopback && address.set_host(Some("host.docker.internal")).is_ok() {
        return address.as_str().trim_end_matches('/').to_owned();
    }
    upstream.to_owned()
}

/// The proxy's address for the agent.
pub fn proxy_address() -> String {
    format!("http://{GATE_ALIAS}:{PROXY_PORT}")
}

/// The key forwarder's address for the agent.
pub fn forwarder_address() -> String {
    format!("http://{GATE_ALIAS}:{FORWARDER_PORT}")
}

/// A repository's running gate.
#[derive(Debug, Clone)]
pub struct EgressGate {
    docker: Docker,
    id: String,
    network: String,
    program: GateProgram,
}

impl EgressGate {
    /// The repository's gate, running: found as it is, started again, or made (with its
    /// network) from `image`.
    pub async fn ensure(
        docker: &Docker,
        installation: &str,
        repo: RepoId,
        image: &str,
    ) -> Result<EgressGate, SandboxError> {
        let program = gate_program().map_err(unavailable)?;
        let name = format!("handoff-{installation}-gate-{}", repo.0);
        let network = format!("{name}-net");
        let labels = HashMap::from([
            (INSTALLATION_LABEL.to_owned(), installation.to_owned()),
            (GATE_LABEL.to_owned(), repo.0.to_string()),
        ]);
        ensure_network(docker, &network, &labels).await?;
        for _ in 0..3 {
            match docker
                .inspect_container(
                    &name,
                    None::<bollard::query_parameters::InspectContainerOptions>,
                )
                .await
            {
                Ok(container) => {
                    let id = container.id.clone().unwrap_or_else(|| name.clone());
                    let stamp = container
                        .config
                        .as_ref()
                        .and_then(|config| config.labels.as_ref())
                        .and_then(|labels| labels.get(GATE_PROGRAM_LABEL))
                        .cloned();
                    if stamp.as_deref() != Some(program.stamp.as_str()) {
                        tracing::info!(gate = %name, "the egress gate runs an older program; it is made anew");
                        remove_container(docker, &id).await;
                        continue;
                    }
                    // A gate holds on to its image; when the repository's image was built
                    // again, the gate moves to the new one so the old can go.
                    let current_image = docker
                        .inspect_image(image)
                        .await
                        .ok()
                        .and_then(|inspected| inspected.id);
                    if current_image.is_some() && current_image != container.image {
                        tracing::info!(gate = %name, "the repository's image changed; the egress gate is made anew from it");
                        remove_container(docker, &id).await;
                        continue;
                    }
                    let running = container
                        .state
                        .and_then(|state| state.running)
                        .unwrap_or(false);
                    if !running {
                        docker.start_container(&id, None).await.map_err(|error| {
                            unavailable(format!("cannot start the egress gate again: {error}"))
                        })?;
                    }
                    return Ok(EgressGate {
                        docker: docker.clone(),
                        id,
                        network,
                        program,
                    });
                }
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => {
                    match create_gate(docker, &name, &network, image, &labels, &program).await {
                        Ok(id) => {
                            return Ok(EgressGate {
                                docker: docker.clone(),
                                id,
                                network,
                                program,
                            })
                        }
                        // Another run made it at the same moment: use that one.
                        Err(GateCreation::NameTaken) => continue,
                        Err(GateCreation::Failed(error)) => return Err(error),
                    }
                }
                Err(error) => {
                    return Err(unavailable(format!(
                        "cannot look for the egress gate: {error}"
                    )))
                }
            }
        }
        Err(unavailable(
            "the egress gate could not be made (it kept changing while Handoff looked)",
        ))
    }

    /// The gate's container.
    pub fn container_id(&self) -> &str {
        &self.id
    }

    /// The repository's internal network, which the agent's container joins.
    pub fn network(&self) -> &str {
        &self.network
    }

    /// Sends `commands` to the gate; fails unless each one was carried out.
    pub async fn configure(&self, commands: &[GateCommand]) -> Result<(), SandboxError> {
        let program_in_gate = format!("{PROGRAM_DIR}/{GATE_PROGRAM}");
        let control = format!("{CONTROL_DIR}/control.sock");
        let exec = self
            .docker
            .create_exec(
                &self.id,
                ExecConfig {
                    attach_stdin: Some(true),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    user: Some(GATE_USER.to_owned()),
                    cmd: Some(vec![
                        program_in_gate,
                        "configure".to_owned(),
                        "--control".to_owned(),
                        control,
                    ]),
                    ..ExecConfig::default()
                },
            )
            .await
            .map_err(|error| unavailable(format!("cannot reach the egress gate: {error}")))?;
        let started = self
            .docker
            .start_exec(&exec.id, None::<StartExecOptions>)
            .await
            .map_err(|error| unavailable(format!("cannot reach the egress gate: {error}")))?;
        let StartExecResults::Attached {
            mut output,
            mut input,
        } = started
        else {
            return Err(unavailable("the egress gate's settings could not be sent"));
        };
        let mut lines = String::new();
        for command in commands {
            // The line may hold a key: it goes to the gate and nowhere else.
            let line = serde_json::to_string(command).map_err(|error| {
                unavailable(format!("cannot write the gate's settings: {error}"))
            })?;
            lines.push_str(&line);
            lines.push('\n');
        }
        let sent = async {
            input.write_all(lines.as_bytes()).await?;
            input.shutdown().await
        };
        if let Err(error) = sent.await {
            return Err(unavailable(format!(
                "the egress gate's settings could not be sent: {error}"
            )));
        }
        drop(lines);
        let mut said = String::new();
        while let Some(next) = output.next().await {
            match next {
                Ok(piece) => said.push_str(&String::from_utf8_lossy(&piece.into_bytes())),
                Err(error) => {
                    tracing::warn!(%error, "the egress gate's answer broke off");
                    break;
                }
            }
        }
        let exit = self
            .docker
            .inspect_exec(&exec.id)
            .await
            .ok()
            .and_then(|inspected| inspected.exit_code);
        if exit == Some(0) {
            return Ok(());
        }
        Err(unavailable(format!(
            "the egress gate ({}) did not take its settings: {}",
            self.program.path.display(),
            said.trim()
        )))
    }
}

enum GateCreation {
    NameTaken,
    Failed(SandboxError),
}

async fn ensure_network(
    docker: &Docker,
    name: &str,
    labels: &HashMap<String, String>,
) -> Result<(), SandboxError> {
    if docker
        .inspect_network(
            name,
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
        .is_ok()
    {
        return Ok(());
    }
    // No address for the host on this network: the host's services cannot be reached.
    let options = HashMap::from([(
        "com.docker.network.bridge.inhibit_ipv4".to_owned(),
        "true".to_owned(),
    )]);
    match docker
        .create_network(bollard::models::NetworkCreateRequest {
            name: name.to_owned(),
            driver: Some("bridge".to_owned()),
            internal: Some(true),
            options: Some(options),
            labels: Some(labels.clone()),
            ..Default::default()
        })
        .await
    {
        Ok(_) => Ok(()),
        // Made at the same moment by another run.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409, ..
        }) => Ok(()),
        Err(error) => Err(unavailable(format!(
            "cannot make the sandbox's internal network: {error}"
        ))),
    }
}

async fn create_gate(
    docker: &Docker,
    name: &str,
    network: &str,
    image: &str,
    labels: &HashMap<String, String>,
    program: &GateProgram,
) -> Result<String, GateCreation> {
    let failed = |detail: String| GateCreation::Failed(unavailable(detail));
    let mut labels = labels.clone();
    labels.insert(GATE_PROGRAM_LABEL.to_owned(), program.stamp.clone());
    let body = ContainerCreateBody {
        image: Some(image.to_owned()),
        cmd: Some(vec![
            format!("{PROGRAM_DIR}/{GATE_PROGRAM}"),
            "serve".to_owned(),
            "--control".to_owned(),
            format!("{CONTROL_DIR}/control.sock"),
            "--idle-exit".to_owned(),
            IDLE_EXIT.as_secs().to_string(),
        ]),
        entrypoint: Some(Vec::new()),
        user: Some(GATE_USER.to_owned()),
        labels: Some(labels),
        volumes: Some(vec![PROGRAM_DIR.to_owned()]),
        host_config: Some(HostConfig {
            memory: Some(256 * 1024 * 1024),
            memory_swap: Some(256 * 1024 * 1024),
            pids_limit: Some(256),
            cap_drop: Some(vec!["ALL".to_owned()]),
            readonly_rootfs: Some(true),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            network_mode: Some("bridge".to_owned()),
            tmpfs: Some(HashMap::from([(
                CONTROL_DIR.to_owned(),
                "rw,nosuid,nodev,noexec,size=1m,uid=65534,gid=65534,mode=0700".to_owned(),
            )])),
            // A provider stand-in on this machine's loopback is reached through here.
            extra_hosts: Some(vec!["host.docker.internal:host-gateway".to_owned()]),
            ..HostConfig::default()
        }),
        ..ContainerCreateBody::default()
    };
    let created = match docker
        .create_container(
            Some(CreateContainerOptionsBuilder::default().name(name).build()),
            body,
        )
        .await
    {
        Ok(created) => created,
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 409, ..
        }) => return Err(GateCreation::NameTaken),
        Err(error) => return Err(failed(format!("cannot create the egress gate: {error}"))),
    };
    let made = async {
        let archive = program_archive(&program.path)
            .map_err(|error| format!("cannot read the gate's program: {error}"))?;
        docker
            .upload_to_container(
                &created.id,
                Some(
                    bollard::query_parameters::UploadToContainerOptionsBuilder::default()
                        .path(PROGRAM_DIR)
                        .build(),
                ),
                bollard::body_full(archive.into()),
            )
            .await
            .map_err(|error| format!("cannot copy the gate's program in: {error}"))?;
        docker
            .connect_network(
                network,
                NetworkConnectRequest {
                    container: created.id.clone(),
                    endpoint_config: Some(EndpointSettings {
                        aliases: Some(vec![GATE_ALIAS.to_owned()]),
                        ..EndpointSettings::default()
                    }),
                },
            )
            .await
            .map_err(|error| {
                format!("cannot put the egress gate on the internal network: {error}")
            })?;
        docker
            .start_container(&created.id, None)
            .await
            .map_err(|error| format!("cannot start the egress gate in the image {image}: {error}"))
    };
    match made.await {
        Ok(()) => Ok(created.id),
        Err(detail) => {
            remove_container(docker, &created.id).await;
            Err(failed(detail))
        }
    }
}

/// A tar archive holding the program, executable by anyone.
fn program_archive(path: &Path) -> std::io::Result<Vec<u8>> {
    let program = std::fs::read(path)?;
    let mut archive = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(program.len() as u64);
    header.set_mode(0o555);
    header.set_uid(0);
    header.set_gid(0);
    header.set_cksum();
    archive.append_data(&mut header, GATE_PROGRAM, program.as_slice())?;
    archive.into_inner()
}

async fn remove_container(docker: &Docker, id: &str) {
    if let Err(error) = docker
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
        tracing::warn!(container = id, %error, "the egress gate could not be removed");
    }
}

/// Removes this installation's gates and their networks (of one repository, or all).
pub async fn remove_gates(
    docker: &Docker,
    installation: &str,
    repo: Option<RepoId>,
) -> Result<(), SandboxError> {
    let labels = vec![
        format!("{INSTALLATION_LABEL}={installation}"),
        match repo {
            Some(repo) => format!("{GATE_LABEL}={}", repo.0),
            None => GATE_LABEL.to_owned(),
        },
    ];
    let filters = HashMap::from([("label".to_owned(), labels)]);
    let containers = docker
        .list_containers(Some(
            bollard::query_parameters::ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|error| unavailable(format!("cannot list the egress gates: {error}")))?;
    for container in containers {
        if let Some(id) = container.id {
            remove_container(docker, &id).await;
        }
    }
    let networks = docker
        .list_networks(Some(
            bollard::query_parameters::ListNetworksOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|error| unavailable(format!("cannot list the gates' networks: {error}")))?;
    for network in networks.into_iter().filter_map(|network| network.name) {
        if let Err(error) = docker.remove_network(&network).await {
            tracing::warn!(%network, %error, "a gate's network could not be removed");
        }
    }
    Ok(())
}

/// The address containers on the engine's default network reach this machine at: the
/// network's gateway, or, for engines that leave it out, its range's first address.
pub async fn machine_address_on_default_network(docker: &Docker) -> Result<IpAddr, SandboxError> {
    let bridge = docker
        .inspect_network(
            "bridge",
            None::<bollard::query_parameters::InspectNetworkOptions>,
        )
        .await
        .map_err(|error| {
            unavailable(format!("cannot read the engine's default network: {error}"))
        })?;
    let config = bridge
        .ipam
        .and_then(|ipam| ipam.config)
        .and_then(|configs| {
            configs.into_iter().find(|config| {
                config
                    .subnet
                    .as_deref()
                    .is_some_and(|subnet| subnet.contains('.'))
            })
        })
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    if let Some(gateway) = config.gateway.and_then(|gateway| gateway.parse().ok()) {
        return Ok(gateway);
    }
    let first = config
        .subnet
        .as_deref()
        .and_then(|subnet| subnet.split('/').next())
        .and_then(|network| network.parse::<Ipv4Addr>().ok())
        .ok_or_else(|| unavailable("the engine's default network has no IPv4 address range"))?;
    Ok(IpAddr::V4(Ipv4Addr::from(u32::from(first) + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_on_this_machines_loopback_is_reached_through_the_host_gateway() {
        assert_eq!(
            upstream_seen_from_the_gate("http://127.0.0.1:4000"),
            "http://host.docker.internal:4000"
        );
        assert_eq!(
            upstream_seen_from_the_gate("http://localhost:4000/prefix"),
            "http://host.docker.internal:4000/prefix"
        );
        assert_eq!(
            upstream_seen_from_the_gate("https://api.anthropic.com"),
            "https://api.anthropic.com"
        );
    }
}
