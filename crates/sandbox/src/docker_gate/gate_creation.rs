//! Making a gate: the repository's internal network, then the gate's container on it and
//! on the engine's default network (a name another process took at the same moment is
//! the other process's gate, used as it is); and removing gates with their networks.

use crate::docker_labels::{GATE_LABEL, INSTALLATION_LABEL};
use crate::SandboxError;
use bollard::models::{ContainerCreateBody, EndpointSettings, HostConfig, NetworkConnectRequest};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};
use bollard::Docker;
use handoff_domain::RepoId;
use std::collections::HashMap;

use super::*;

pub(super) enum GateCreation {
    NameTaken,
    Failed(SandboxError),
}

pub(super) async fn ensure_network(
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

pub(super) async fn create_gate(
    docker: &Docker,
    name: &str,
    network: &str,
    image: &str,
    labels: &HashMap<String, String>,
    program: &GateProgram,
) -> Result<String, GateCreation> {
    let failed = |detail: String| GateCreation::Failed(unavailable(detail));
    let body = gate_container(image, labels, program);
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
    let made = start_gate(docker, &created.id, network, image, program);
    match made.await {
        Ok(()) => Ok(created.id),
        Err(detail) => {
            remove_container(docker, &created.id).await;
            Err(failed(detail))
        }
    }
}

pub(super) async fn remove_container(docker: &Docker, id: &str) {
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

/// The gate's container: the repository's image running the gate's program as an
/// unprivileged user, on a read-only root with a small control folder, capped in memory
/// and processes, with `labels` and the program's stamp.
fn gate_container(
    image: &str,
    labels: &HashMap<String, String>,
    program: &GateProgram,
) -> ContainerCreateBody {
    let mut labels = labels.clone();
    labels.insert(GATE_PROGRAM_LABEL.to_owned(), program.stamp.clone());
    ContainerCreateBody {
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
    }
}

/// Copies the gate's program into the created container `id`, puts it on the run's
/// internal `network` under the gate's alias, and starts it.
async fn start_gate(
    docker: &Docker,
    id: &str,
    network: &str,
    image: &str,
    program: &GateProgram,
) -> Result<(), String> {
    let archive = program_archive(&program.path)
        .map_err(|error| format!("cannot read the gate's program: {error}"))?;
    docker
        .upload_to_container(
            id,
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
                container: id.to_owned(),
                endpoint_config: Some(EndpointSettings {
                    aliases: Some(vec![GATE_ALIAS.to_owned()]),
                    ..EndpointSettings::default()
                }),
            },
        )
        .await
        .map_err(|error| format!("cannot put the egress gate on the internal network: {error}"))?;
    docker
        .start_container(id, None)
        .await
        .map_err(|error| format!("cannot start the egress gate in the image {image}: {error}"))
}
