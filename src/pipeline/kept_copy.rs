//! Each feedback item's working copy, kept between its code runs, so that an iterate
//! costs the files that changed rather than the whole tree.
//!
//! The rules:
//! - One copy per feedback item, never shared. On the local backend it is a folder of
//!   the data folder; on Docker, a volume of its own (mounted as the job's `repo/`) that
//!   only that item's containers get. E2B sandboxes start from a fresh copy every run.
//! - A later run brings the copy to the branch's tip inside the sandbox: the host sends
//!   a bundle of only the commits the copy lacks (against the commits it is known to
//!   hold), and the job script checks the tip out (forced, so the agent's or a cancelled
//!   run's leftovers in tracked files go) and removes untracked files. Files git ignores
//!   (build output, dependency folders) are kept, so the item's builds stay warm.
//! - The host never runs git in a kept copy: the agent may have planted hooks or config
//!   there. It only remembers which commits the copy holds.
//! - A copy that cannot be brought to the tip (damaged, gone, its commits pruned) is
//!   dropped, and the run starts again once from a fresh copy, before the agent runs.
//! - A copy is dropped when its item is merged or removed, or when no run used it for
//!   the retention period (a setting; zero keeps none).
//! - The GitHub token never enters a copy: it only ever receives bundles.

use crate::pipeline::handles::KeptCopies;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::host_git::{GitError, HostGit};
use super::{Pipeline, PipelineError};
use crate::domain::{FeedbackId, FeedbackStatus, SandboxBackend};
use crate::sandbox::{Sandbox, SandboxError};
use crate::store::{RunFilter, StoreError};

/// The record's file in an item's folder.
const RECORD_FILE: &str = "copy.json";

/// Whether `backend` keeps copies between runs.
pub fn backend_keeps_copies(backend: SandboxBackend) -> bool {
    matches!(backend, SandboxBackend::Local | SandboxBackend::Docker)
}

/// What the host knows of an item's kept copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptCopyRecord {
    /// Where the copy lives.
    pub backend: SandboxBackend,
    /// Commits the copy is known to hold: the last run's start and, when it made some,
    /// its end.
    pub commits: Vec<String>,
}

/// One feedback item's kept copy, as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptCopy {
    pub feedback_id: FeedbackId,
    folder: PathBuf,
}

impl KeptCopy {
    /// The kept copy of `feedback_id` in `data_dir` (which may not exist yet).
    pub fn of(data_dir: &Path, feedback_id: FeedbackId) -> Self {
        KeptCopy {
            feedback_id,
            folder: kept_copies_folder(data_dir).join(format!("item-{}", feedback_id.0)),
        }
    }

    /// Where the local backend keeps the working copy itself.
    pub fn local_repo(&self) -> PathBuf {
        self.folder.join("repo")
    }

    /// What is known of the copy; `None` when there is none (or its record cannot be
    /// read, which counts as none).
    pub fn record(&self) -> Option<KeptCopyRecord> {
        let text = match std::fs::read_to_string(self.folder.join(RECORD_FILE)) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(item = %self.feedback_id, %error, "the kept copy's record cannot be read; the copy is made anew");
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(record) => Some(record),
            Err(error) => {
                tracing::warn!(item = %self.feedback_id, %error, "the kept copy's record is damaged; the copy is made anew");
                None
            }
        }
    }

    /// Notes that the copy on `backend` holds `commits` (and was just used).
    pub fn remember(&self, backend: SandboxBackend, commits: &[&str]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.folder)?;
        let record = KeptCopyRecord {
            backend,
            commits: commits.iter().map(|commit| (*commit).to_owned()).collect(),
        };
        let text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
        let partial = self.folder.join(format!("{RECORD_FILE}.partial"));
        std::fs::write(&partial, text)?;
        std::fs::rename(partial, self.folder.join(RECORD_FILE))
    }

    /// When a run last used the copy.
    fn last_used(&self) -> Option<SystemTime> {
        std::fs::metadata(self.folder.join(RECORD_FILE))
            .and_then(|meta| meta.modified())
            .ok()
    }

    /// Removes the host's part: the record and, for the local backend, the copy.
    fn remove_host_part(&self) -> std::io::Result<()> {
        match std::fs::remove_dir_all(&self.folder) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }
}

/// Where the kept copies of an installation live.
pub fn kept_copies_folder(data_dir: &Path) -> PathBuf {
    data_dir.join("kept-copies")
}

/// How a run's working copy is to be made inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopySteps {
    /// The host made it at `repo/` (the local backend, a fresh copy).
    MadeOnHost,
    /// The sandbox makes it from the whole history in `handoff/repo.bundle`.
    FromBundle { bundle_ref: String },
    /// `repo/` is the item's kept copy: the sandbox brings it to the start, taking the
    /// commits it lacks from `handoff/repo.bundle` (which holds `bundle_ref`) first.
    RefreshKept { bundle_ref: Option<String> },
}

impl CopySteps {
    /// How the working copy was made, in the run's log.
    pub fn words(&self) -> &'static str {
        match self {
            CopySteps::MadeOnHost => "made here",
            CopySteps::FromBundle { .. } => "made in the sandbox from a bundle",
            CopySteps::RefreshKept { bundle_ref: None } => {
                "the item's kept copy, which holds it already"
            }
            CopySteps::RefreshKept {
                bundle_ref: Some(_),
            } => "the item's kept copy, sent only the commits it lacks",
        }
    }
}

/// Why an item's kept copy was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    Merged,
    ItemGone,
    Unused,
    NotKept,
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DropReason::Merged => "its item is merged",
            DropReason::ItemGone => "its item is gone",
            DropReason::Unused => "no run used it for the retention period",
            DropReason::NotKept => "copies are not kept on this installation",
        })
    }
}

impl HostGit {
    /// How many commits of `reference` a copy holding `known` lacks; an error when one
    /// of `known` is not in `cache` (the copy is then made anew).
    pub async fn commits_lacking(
        &self,
        cache: &Path,
        reference: &str,
        known: &[String],
    ) -> Result<u32, GitError> {
        let mut range = vec![reference.to_owned()];
        range.extend(known.iter().map(|commit| format!("^{commit}")));
        let ranges: Vec<&str> = range.iter().map(String::as_str).collect();
        self.count_commits(cache, &ranges).await
    }

    /// A bundle at `destination` of `reference` without what a copy holding `known`
    /// has (a small file: only the new commits).
    pub async fn bundle_lacking(
        &self,
        cache: &Path,
        reference: &str,
        known: &[String],
        destination: &Path,
    ) -> Result<(), GitError> {
        let mut range = vec![reference.to_owned()];
        range.extend(known.iter().map(|commit| format!("^{commit}")));
        let ranges: Vec<&str> = range.iter().map(String::as_str).collect();
        self.bundle_range(cache, &ranges, destination).await
    }
}

impl Pipeline {
    /// How long an unused kept copy stays; `None` when copies are not kept.
    pub fn kept_copy_retention(&self) -> Option<Duration> {
        self.settings.kept_copy_retention
    }

    /// Drops `kept`: the host's part and, on Docker, its volume (through `sandbox` when
    /// it is Docker's; with no sandbox, through the engine's default connection). An
    /// error when the volume is there and cannot be removed.
    pub(crate) async fn drop_kept_copy(
        &self,
        kept: &KeptCopy,
        sandbox: Option<&Sandbox>,
    ) -> Result<(), SandboxError> {
        if let Err(error) = kept.remove_host_part() {
            tracing::warn!(item = %kept.feedback_id, %error, "the kept copy's folder could not be removed");
        }
        let docker = match sandbox {
            Some(Sandbox::Docker(docker)) => docker.clone(),
            // A volume left from a time the repository ran on Docker goes with the
            // next prune.
            Some(_) => return Ok(()),
            None => match self.sandbox_for(SandboxBackend::Docker, None).await {
                Ok(Sandbox::Docker(docker)) => docker,
                _ => return Ok(()),
            },
        };
        docker.remove_kept_copy(kept.feedback_id).await
    }

    /// Removes the Docker volumes of kept copies whose record is gone (dropped while the
    /// engine was away), leaving those of `kept_ids`.
    async fn remove_volumes_without_a_record(&self, kept_ids: &[FeedbackId]) {
        if let Ok(Sandbox::Docker(docker)) = self.sandbox_for(SandboxBackend::Docker, None).await {
            match docker.kept_copies().await {
                Ok(volumes) => {
                    for id in volumes.into_iter().filter(|id| !kept_ids.contains(id)) {
                        let recorded_on_docker = KeptCopy::of(&self.data_dir, id)
                            .record()
                            .is_some_and(|record| record.backend == SandboxBackend::Docker);
                        if recorded_on_docker {
                            continue;
                        }
                        if let Err(error) = docker.remove_kept_copy(id).await {
                            tracing::warn!(item = %id, %error, "a kept copy's volume without a record could not be removed");
                        }
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, "the Docker engine's kept copies cannot be listed (it may be away)")
                }
            }
        }
    }
}

impl KeptCopies<'_> {
    /// Drops the kept copies whose item is merged or gone, or that no run used for the
    /// retention period (every one, when copies are not kept). Returns the items whose
    /// copies went, with why.
    pub async fn prune_kept_copies(&self) -> Result<Vec<(FeedbackId, DropReason)>, PipelineError> {
        let folder = kept_copies_folder(&self.pipeline.data_dir);
        let mut dropped = Vec::new();
        let mut kept_ids = Vec::new();
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries.filter_map(Result::ok).collect::<Vec<_>>(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(PipelineError::Workspace(format!(
                    "the kept copies in {} cannot be listed: {error}",
                    folder.display()
                )))
            }
        };
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name
                .strip_prefix("item-")
                .and_then(|id| id.parse::<i64>().ok())
            else {
                continue;
            };
            let kept = KeptCopy::of(&self.pipeline.data_dir, FeedbackId(id));
            // A copy its item's run is using (or waits in the queue to use) stays, however
            // long it sat before: runs of other items end, and prune, while it runs.
            let in_use = !self
                .pipeline
                .store
                .runs()
                .runs(&RunFilter {
                    feedback_id: Some(kept.feedback_id),
                    active_only: true,
                    limit: Some(1),
                })
                .await?
                .is_empty();
            if in_use {
                kept_ids.push(kept.feedback_id);
                continue;
            }
            let reason = match self
                .pipeline
                .store
                .feedback()
                .feedback(kept.feedback_id)
                .await
            {
                Ok(item) if item.status == FeedbackStatus::Merged => Some(DropReason::Merged),
                Ok(_) => match self.pipeline.kept_copy_retention() {
                    None => Some(DropReason::NotKept),
                    Some(retention) => kept
                        .last_used()
                        .and_then(|used| used.elapsed().ok())
                        .is_none_or(|idle| idle > retention)
                        .then_some(DropReason::Unused),
                },
                Err(StoreError::FeedbackNotFound(_)) => Some(DropReason::ItemGone),
                Err(error) => return Err(error.into()),
            };
            match reason {
                Some(reason) => {
                    tracing::info!(item = id, %reason, "the item's kept working copy is dropped");
                    if let Err(error) = self.pipeline.drop_kept_copy(&kept, None).await {
                        tracing::debug!(item = id, %error, "the kept copy's volume could not be removed (the engine may be away); it goes once it can be");
                    }
                    dropped.push((kept.feedback_id, reason));
                }
                None => kept_ids.push(kept.feedback_id),
            }
        }
        self.pipeline
            .remove_volumes_without_a_record(&kept_ids)
            .await;
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_back_and_a_damaged_one_counts_as_none() {
        let data = tempfile::tempdir().unwrap();
        let kept = KeptCopy::of(data.path(), FeedbackId(7));
        assert_eq!(kept.record(), None);
        kept.remember(SandboxBackend::Docker, &["abc", "def"])
            .unwrap();
        assert_eq!(
            kept.record(),
            Some(KeptCopyRecord {
                backend: SandboxBackend::Docker,
                commits: vec!["abc".to_owned(), "def".to_owned()],
            })
        );
        std::fs::write(
            data.path().join("kept-copies/item-7/copy.json"),
            "{not json",
        )
        .unwrap();
        assert_eq!(kept.record(), None);
        kept.remove_host_part().unwrap();
        assert!(!data.path().join("kept-copies/item-7").exists());
        kept.remove_host_part().unwrap();
    }
}
