//! A container made ahead for a feedback item's next run, so that an iterate does not
//! wait for one to be made and started. When a run of an item with a kept working copy
//! ends, a fresh container is made and started for the item's next run, exactly as that
//! run's would be (the same image, user, limits, network and kept copy), except that it
//! waits: its workspace folder is given to the agent's user, and its only process waits
//! for the run's files on its standard input, then runs the job (see
//! [`super::ready_streams`]). Nothing of the run before it is in it.
//!
//! The next run takes it only when it is running and was made from the same settings
//! (a hash of them is one of its labels; the image's id is part of it); otherwise it is
//! removed and the run makes its own. Either way the run's container is removed at its
//! end, as always. A ready container goes with the item's kept copy, and a run that
//! used one is found for clean-up by the container id it reported.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{CreateContainerOptionsBuilder, UploadToContainerOptionsBuilder};
use sha2::{Digest as _, Sha256};

use super::*;

/// The label naming the item a container was made ahead for.
pub const READY_LABEL: &str = "dev.handoff.ready-for";
/// The label holding the hash of the settings a ready container was made with.
const READY_SETTINGS_LABEL: &str = "dev.handoff.ready-settings";

/// The makings of ready containers under way in this process, by container name: a run
/// that wants one waits for its making to end.
static MAKING: LazyLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(Mutex::default);

fn making_lock(name: &str) -> Arc<tokio::sync::Mutex<()>> {
    MAKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(name.to_owned())
        .or_default()
        .clone()
}

/// A container to make ahead: how it is made, and the hash of its settings.
#[derive(Debug, Clone)]
pub(super) struct ReadyContainer {
    body: ContainerCreateBody,
    settings: String,
    /// The user (uid, gid) its job runs as, who is given the workspace's folder.
    owner: (u64, u64),
}

impl DockerSandbox {
    /// The name of the container made ahead for `item`'s next run.
    pub fn ready_container_name(&self, item: FeedbackId) -> String {
        format!("handoff-{}-ready-{}", self.installation, item.0)
    }

    /// The container made ahead for a run made as `body` (a run's own container):
    /// the same but for its variables (the run's go in through the workspace), its
    /// command (it waits for the run) and its labels.
    pub(super) async fn ready_container_like(
        &self,
        item: FeedbackId,
        body: &ContainerCreateBody,
        owner: (u64, u64),
    ) -> ReadyContainer {
        let mut ready = body.clone();
        ready.env = body.env.as_ref().map(|variables| {
            variables
                .iter()
                .filter(|variable| {
                    variable.starts_with("HANDOFF_WORKSPACE=") || variable.starts_with("HOME=")
                })
                .cloned()
                .collect()
        });
        ready.cmd = Some(vec![
            "sh".to_owned(),
            "-c".to_owned(),
            super::ready_streams::waiting_command(),
        ]);
        ready.open_stdin = Some(true);
        ready.stdin_once = Some(true);
        ready.attach_stdin = Some(true);
        ready.labels = None;
        let image_id = match self.docker.inspect_image(&self.image).await {
            Ok(image) => image.id.unwrap_or_default(),
            Err(error) => {
                tracing::debug!(%error, image = %self.image, "the image's id is unknown; no container is taken ahead");
                String::new()
            }
        };
        let mut hash = Sha256::new();
        hash.update(serde_json::to_vec(&ready).unwrap_or_default());
        hash.update(image_id.as_bytes());
        let settings: String = hash
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        ready.labels = Some(HashMap::from([
            (INSTALLATION_LABEL.to_owned(), self.installation.clone()),
            (READY_LABEL.to_owned(), item.0.to_string()),
            (READY_SETTINGS_LABEL.to_owned(), settings.clone()),
        ]));
        // An image whose id is unknown makes no container ahead.
        if image_id.is_empty() {
            ready.labels = None;
        }
        ReadyContainer {
            body: ready,
            settings,
            owner,
        }
    }

    /// The container made ahead for `item` when it is running and made as `wanted`;
    /// one made otherwise is removed. Waits for a making under way.
    pub(super) async fn take_ready(
        &self,
        item: FeedbackId,
        wanted: &ReadyContainer,
    ) -> Option<String> {
        let name = self.ready_container_name(item);
        let lock = making_lock(&name);
        let _making = lock.lock().await;
        let inspected = self.docker.inspect_container(&name, None).await.ok()?;
        let running = inspected
            .state
            .as_ref()
            .and_then(|state| state.running)
            .unwrap_or(false);
        let settings = inspected
            .config
            .as_ref()
            .and_then(|config| config.labels.as_ref())
            .and_then(|labels| labels.get(READY_SETTINGS_LABEL).cloned());
        let id = inspected.id?;
        if running && wanted.body.labels.is_some() && settings.as_deref() == Some(&wanted.settings)
        {
            return Some(id);
        }
        tracing::info!(container = %name, running, "the container made ahead is not the one this run needs; it goes");
        self.remove(&id).await;
        None
    }

    /// Makes and starts `ready` for `item`'s next run, in the background; one made
    /// before goes first.
    pub(super) fn make_ready_later(&self, item: FeedbackId, ready: ReadyContainer) {
        if ready.body.labels.is_none() {
            return;
        }
        let sandbox = self.clone();
        let name = self.ready_container_name(item);
        let lock = making_lock(&name);
        tokio::spawn(async move {
            let _making = lock.lock().await;
            sandbox.remove(&name).await;
            let made = sandbox
                .docker
                .create_container(
                    Some(CreateContainerOptionsBuilder::default().name(&name).build()),
                    ready.body,
                )
                .await;
            let started = match made {
                Ok(created) => sandbox.workspace_folder_for(&created.id, ready.owner).await,
                Err(error) => Err(error),
            };
            if let Err(error) = started {
                tracing::info!(container = %name, %error, "no container was made ahead for the item's next run; it makes its own");
                sandbox.remove(&name).await;
            }
        });
    }

    /// Removes the container made ahead for `item`, if there is one.
    pub async fn remove_ready_container(&self, item: FeedbackId) {
        let name = self.ready_container_name(item);
        let lock = making_lock(&name);
        let _making = lock.lock().await;
        if self.docker.inspect_container(&name, None).await.is_ok() {
            self.remove(&name).await;
        }
    }

    /// Gives the workspace's folder of the created container `id` to `owner`, then
    /// starts it: its waiting process unpacks the run's files there as that user.
    async fn workspace_folder_for(
        &self,
        id: &str,
        (uid, gid): (u64, u64),
    ) -> Result<(), bollard::errors::Error> {
        let mut folder = tar::Header::new_gnu();
        folder.set_entry_type(tar::EntryType::Directory);
        folder.set_mode(0o755);
        folder.set_uid(uid);
        folder.set_gid(gid);
        folder.set_size(0);
        let mut archive = tar::Builder::new(Vec::new());
        let packed = archive
            .append_data(&mut folder, "workspace/", std::io::empty())
            .and_then(|()| archive.into_inner());
        let archive = packed.map_err(bollard::errors::Error::from)?;
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
            .await?;
        self.docker.start_container(id, None).await
    }
}
