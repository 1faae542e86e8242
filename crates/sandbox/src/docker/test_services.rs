//! The services a job's tests reach by name (a database, a small server): each a
//! container on the run's own internal network, which the engine gives no route beyond
//! itself, so a service cannot reach out and nothing outside reaches in. The job's
//! container joins that network too, and finds each service by its name. The services
//! carry the run's label and the job's limits; they are removed with the job's container
//! in every outcome, and their network after them.

use std::collections::{BTreeMap, HashMap};

use bollard::models::{
    ContainerCreateBody, EndpointSettings, HostConfig, NetworkConnectRequest, NetworkingConfig,
};
use bollard::query_parameters::CreateContainerOptionsBuilder;

use super::*;

/// One service of a run, as its container is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceContainer {
    /// Its name, and its host name on the run's network.
    pub name: String,
    pub image: String,
    pub environment: BTreeMap<String, String>,
    /// The command instead of the image's own, as a program and its arguments.
    pub command: Option<Vec<String>>,
}

impl DockerSandbox {
    /// The run's services network, named after the run.
    pub(super) fn services_network(&self, job: &SandboxJob) -> String {
        format!("handoff-{}-run-{}-services", self.installation, job.run_id)
    }

    /// Makes the run's services network and starts each service on it (each container's
    /// id goes into `started` as soon as it exists); `None` when the run has none.
    pub(super) async fn start_services(
        &self,
        job: &SandboxJob,
        started: &mut Vec<String>,
    ) -> Result<Option<String>, SandboxError> {
        if self.services.is_empty() {
            return Ok(None);
        }
        let network = self.services_network(job);
        let labels = HashMap::from([
            (RUN_LABEL.to_owned(), job.run_id.to_string()),
            (INSTALLATION_LABEL.to_owned(), self.installation.clone()),
        ]);
        self.docker
            .create_network(bollard::models::NetworkCreateRequest {
                name: network.clone(),
                driver: Some("bridge".to_owned()),
                internal: Some(true),
                labels: Some(labels.clone()),
                ..Default::default()
            })
            .await
            .map_err(|error| failed(format!("cannot make the run's services network: {error}")))?;
        for service in &self.services {
            let name = format!(
                "handoff-{}-run-{}-{}",
                self.installation, job.run_id, service.name
            );
            let created = self
                .docker
                .create_container(
                    Some(CreateContainerOptionsBuilder::default().name(&name).build()),
                    service_body(service, job, &network, &labels),
                )
                .await
                .map_err(|error| {
                    failed(format!("cannot make the service {}: {error}", service.name))
                })?;
            started.push(created.id.clone());
            self.docker
                .start_container(&created.id, None)
                .await
                .map_err(|error| {
                    failed(format!(
                        "cannot start the service {}: {error}",
                        service.name
                    ))
                })?;
        }
        Ok(Some(network))
    }

    /// Puts the job's container `id` on the services network `network` as well.
    pub(super) async fn join_services(&self, id: &str, network: &str) -> Result<(), SandboxError> {
        self.docker
            .connect_network(
                network,
                NetworkConnectRequest {
                    container: id.to_owned(),
                    endpoint_config: Some(EndpointSettings::default()),
                },
            )
            .await
            .map_err(|error| {
                failed(format!(
                    "cannot put the job on its services' network: {error}"
                ))
            })
    }

    /// Lets the job reach its services without the proxy, as it reaches the gate.
    pub(super) fn services_past_the_proxy(&self, environment: &mut [String]) {
        let past = std::iter::once(docker_gate::GATE_ALIAS)
            .chain(self.services.iter().map(|service| service.name.as_str()))
            .collect::<Vec<_>>()
            .join(",");
        for entry in environment.iter_mut() {
            let name = entry.split('=').next().unwrap_or_default().to_owned();
            if name == "NO_PROXY" || name == "no_proxy" {
                *entry = format!("{name}={past}");
            }
        }
    }
}

/// A service's container: on the services network by its name, with the job's limits
/// and no new privileges.
fn service_body(
    service: &ServiceContainer,
    job: &SandboxJob,
    network: &str,
    labels: &HashMap<String, String>,
) -> ContainerCreateBody {
    ContainerCreateBody {
        image: Some(service.image.clone()),
        cmd: service.command.clone(),
        env: Some(
            service
                .environment
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect(),
        ),
        labels: Some(labels.clone()),
        host_config: Some(HostConfig {
            memory: Some(job.limits.memory_bytes),
            memory_swap: Some(job.limits.memory_bytes),
            nano_cpus: Some((job.limits.cpus * 1e9) as i64),
            pids_limit: Some(job.limits.max_processes),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            network_mode: Some(network.to_owned()),
            ..HostConfig::default()
        }),
        networking_config: Some(NetworkingConfig {
            endpoints_config: Some(HashMap::from([(
                network.to_owned(),
                EndpointSettings {
                    aliases: Some(vec![service.name.clone()]),
                    ..EndpointSettings::default()
                },
            )])),
        }),
        ..ContainerCreateBody::default()
    }
}
