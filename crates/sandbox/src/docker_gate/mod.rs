//! A repository's egress gate on a Docker engine: the container its sandboxes' traffic
//! leaves through, and the internal network they share with it.
//!
//! The agent's container sits on the repository's internal network: the network has no
//! route out and no address on the host (`inhibit_ipv4`), so neither the internet, nor
//! the cloud's metadata address, nor any service of the host, nor another repository's
//! sandbox can be reached from it. The one other thing on that network is the gate
//! (`handoff-gate` there), a container on the internal network and on the engine's
//! default network that runs Handoff's own `handoff-egress` program (see
//! [`handoff_egress`]): the allow-list proxy on port 3128 and the agent's key forwarder
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
//! made anew. Runs that start at once (the run queue lets several go) make or check
//! the gate one at a time, under a lock file of this machine: the engine would
//! otherwise let each make a network of the same name.
//!
//! - this file: [`EgressGate`], found or made, and told its rules and keys;
//! - [`gate_program`]: the `handoff-egress` program copied into the gate, a Linux program
//!   for the engine's machine;
//! - [`gate_addresses`]: where the sandbox finds the gate, and what the gate must
//!   never reach on this machine;
//! - [`gate_creation`]: the network and the gate's container made, and gates removed;
//! - [`held_key`]: a run's key held by the gate on a link of its own, through which
//!   the gate reserves each of the run's model calls in Handoff's spend ledger;
//! - [`told_rules`]: the rules a gate was last told, so that the same rules are not
//!   told again on every run's path.

mod gate_addresses;
mod gate_creation;
mod gate_program;
mod held_key;
mod told_rules;
use self::gate_creation::{create_gate, ensure_network, remove_container, GateCreation};
use self::gate_program::program_archive;
pub use gate_addresses::{
    forwarder_address, machine_address_on_default_network, proxy_address, this_machines_addresses,
    upstream_seen_from_the_gate,
};
pub use gate_creation::remove_gates;
pub use gate_program::{gate_program_for, program_kind, GateMachine, GateProgram, ProgramKind};
pub use held_key::HeldKey;

/// What a program run in the gate writes.
type AttachedOutput = std::pin::Pin<
    Box<
        dyn futures::Stream<Item = Result<bollard::container::LogOutput, bollard::errors::Error>>
            + Send,
    >,
>;
/// What a program run in the gate reads.
type AttachedInput = std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>;

use std::collections::HashMap;
use std::time::Duration;

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use bollard::Docker;
use futures::StreamExt as _;
use tokio::io::AsyncWriteExt as _;

use super::docker_labels::{GATE_LABEL, INSTALLATION_LABEL};
use super::SandboxError;
use handoff_domain::{RepoId, SandboxBackend};
use handoff_egress::gate_control::{GateAnswer, GateCommand};

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

/// A repository's running gate.
#[derive(Debug, Clone)]
pub struct EgressGate {
    docker: Docker,
    /// The gate's container name.
    name: String,
    id: String,
    /// When the gate's program started, when the gate was found running; `None` when it
    /// was started or made just now.
    started_at: Option<String>,
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
        let program = gate_program_for_engine(docker).await?;
        let name = format!("handoff-{installation}-gate-{}", repo.0);
        let network = format!("{name}-net");
        let labels = HashMap::from([
            (INSTALLATION_LABEL.to_owned(), installation.to_owned()),
            (GATE_LABEL.to_owned(), repo.0.to_string()),
        ]);
        let _made_by_one_at_a_time = take_gate_lock(&name).await?;
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
                    let current_image = docker
                        .inspect_image(image)
                        .await
                        .ok()
                        .and_then(|inspected| inspected.id);
                    if let Some(reason) = why_made_anew(&container, &program, current_image) {
                        tracing::info!(gate = %name, "{reason}; it is made anew");
                        remove_container(docker, &id).await;
                        continue;
                    }
                    let started_at = started_unless_stopped(docker, &id, container).await?;
                    return Ok(EgressGate {
                        docker: docker.clone(),
                        name,
                        id,
                        started_at,
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
                                name,
                                id,
                                started_at: None,
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

    /// Runs `handoff-egress SUBCOMMAND` in the gate, attached: its exec, output and input.
    async fn attach(
        &self,
        subcommand: &str,
    ) -> Result<(String, AttachedOutput, AttachedInput), SandboxError> {
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
                        subcommand.to_owned(),
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
        let StartExecResults::Attached { output, input } = started else {
            return Err(unavailable("the egress gate's settings could not be sent"));
        };
        Ok((exec.id, output, input))
    }

    /// Sends `commands` to the gate; fails unless each one was carried out. The gate's
    /// answers, one per command.
    pub async fn configure(
        &self,
        commands: &[GateCommand],
    ) -> Result<Vec<GateAnswer>, SandboxError> {
        let (exec_id, mut output, mut input) = self.attach("configure").await?;
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
            .inspect_exec(&exec_id)
            .await
            .ok()
            .and_then(|inspected| inspected.exit_code);
        if exit == Some(0) {
            return Ok(said
                .lines()
                .filter_map(|line| serde_json::from_str::<GateAnswer>(line).ok())
                .collect());
        }
        Err(unavailable(format!(
            "the egress gate ({}) did not take its settings: {}",
            self.program.path.display(),
            said.trim()
        )))
    }
}

/// When the gate `container` (whose id is `id`) found running started; a stopped one is
/// started again, and then `None`: its program has just started.
async fn started_unless_stopped(
    docker: &Docker,
    id: &str,
    container: bollard::models::ContainerInspectResponse,
) -> Result<Option<String>, SandboxError> {
    let state = container.state.unwrap_or_default();
    if state.running == Some(true) {
        return Ok(state.started_at);
    }
    docker
        .start_container(id, None)
        .await
        .map_err(|error| unavailable(format!("cannot start the egress gate again: {error}")))?;
    Ok(None)
}

/// Where this machine keeps its gates' lock files and what it told them.
fn gate_files_folder() -> std::path::PathBuf {
    std::env::temp_dir().join("handoff-egress-gates")
}

/// One taker at a time makes or checks the gate named `name` (runs that start at once,
/// in this process or another): the engine lets two networks share a name.
async fn take_gate_lock(name: &str) -> Result<handoff_store::file_lock::FileLock, SandboxError> {
    let lock_path = gate_files_folder().join(format!("{name}.lock"));
    handoff_store::file_lock::FileLock::take(&lock_path)
        .await
        .map_err(|error| {
            unavailable(format!(
                "cannot take the egress gate's lock {}: {error}",
                lock_path.display()
            ))
        })
}

/// Why the gate `container` found must be made anew, if it must: it was created and
/// never started (its maker stopped half-way while holding the lock, so its program or
/// network may be missing); it runs an older program than `program`; or the
/// repository's image was built again (`current_image`) — a gate holds on to its image,
/// and moves to the new one so the old can go.
fn why_made_anew(
    container: &bollard::models::ContainerInspectResponse,
    program: &GateProgram,
    current_image: Option<String>,
) -> Option<&'static str> {
    let status = container
        .state
        .as_ref()
        .and_then(|state| state.status)
        .map(|status| status.to_string());
    if status.as_deref() == Some("created") {
        return Some("the egress gate was left half-made");
    }
    let stamp = container
        .config
        .as_ref()
        .and_then(|config| config.labels.as_ref())
        .and_then(|labels| labels.get(GATE_PROGRAM_LABEL));
    if stamp.map(String::as_str) != Some(program.stamp.as_str()) {
        return Some("the egress gate runs an older program");
    }
    if current_image.is_some() && current_image != container.image {
        return Some("the repository's image changed; the egress gate goes to the new one");
    }
    None
}

/// The gate's program built for the engine's architecture.
async fn gate_program_for_engine(docker: &Docker) -> Result<GateProgram, SandboxError> {
    let architecture = docker
        .info()
        .await
        .map_err(|error| unavailable(format!("the Docker engine does not answer: {error}")))?
        .architecture
        .unwrap_or_default();
    gate_program_for(&architecture).map_err(unavailable)
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
