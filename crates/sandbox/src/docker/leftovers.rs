//! What a sandbox leaves in the engine, and taking it away: a container killed and
//! removed, a run's leftovers found by their labels (or the id it reported) after a
//! crash, the networks of earlier versions, and each feedback item's kept working copy
//! (a volume), with the container made ahead for its next run.

use bollard::query_parameters::{
    KillContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};

use super::*;

impl DockerSandbox {
    pub(super) async fn kill(&self, id: &str) {
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

    pub(super) async fn remove(&self, id: &str) {
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
            match error {
                // Gone already (a container made ahead that was never made, say).
                bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                } => {}
                error => {
                    tracing::warn!(container = id, %error, "the container could not be removed")
                }
            }
        }
    }

    /// Removes every container of run `run_id`: those found by its label, and the one
    /// it reported (`sandbox_id`: a container made ahead, which no run's label names)
    /// when it is this installation's.
    pub async fn remove_leftover(
        &self,
        run_id: RunId,
        sandbox_id: Option<&str>,
    ) -> Result<(), SandboxError> {
        for id in self.containers_of(Some(run_id)).await? {
            self.remove(&id).await;
        }
        if let Some(id) = sandbox_id {
            if let Ok(inspected) = self.docker.inspect_container(id, None).await {
                let ours = inspected
                    .config
                    .and_then(|config| config.labels)
                    .and_then(|labels| labels.get(INSTALLATION_LABEL).cloned())
                    .is_some_and(|installation| installation == self.installation);
                if ours {
                    self.remove(id).await;
                }
            }
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
    pub(super) fn label_filters(&self, run_id: Option<RunId>) -> HashMap<String, Vec<String>> {
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
    pub(super) async fn ensure_kept_copy(&self, item: FeedbackId) -> Result<String, SandboxError> {
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
        // The container made ahead for the item's next run mounts it.
        self.remove_ready_container(item).await;
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
