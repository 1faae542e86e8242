//! Sandboxes: where the agent runs. One job description, three backends.
//!
//! A [`SandboxJob`] is a workspace folder on the host — `repo/` (the working copy; for
//! a backend that does not work in place, a bundle in `handoff/` it makes the working
//! copy from), `handoff/` (the job script, the prompt, the stage's inputs) and `out/`
//! (empty) — and
//! how long and with what limits to run it. A backend runs `handoff/job.sh` inside its
//! sandbox and, when it ends for any reason, brings `out/` back into the host workspace
//! and removes the sandbox. The GitHub token is never part of a job: the host fetches,
//! commits and pushes. Nor is the agent's API key: the sandbox holds a placeholder and
//! the key is added on the way to the provider ([`key_forwarding`]).
//!
//! - [`local_process`]: a plain process in the workspace; no isolation, for development.
//! - [`docker`]: a container on a Docker engine (the default socket or `DOCKER_HOST`),
//!   whose traffic leaves through its repository's egress gate ([`docker_gate`]).
//! - [`e2b`]: a cloud sandbox through E2B's REST API and its in-sandbox API.

pub mod agent_image;
pub mod build_network;
pub mod connect_stream;
pub mod dev_container_features;
pub mod docker;
pub mod docker_engine;
pub mod docker_gate;
pub mod docker_labels;
pub mod e2b;
pub mod environment_image;
pub mod environment_layer;
pub mod feature_registry;
pub mod local_process;
pub mod output_limits;
pub mod tar_transfer;

// The key forwarder and its meter live in the egress crate, which the gate's program and
// the local backend share; here under the names the pipeline knows them by.
pub use handoff_egress::{
    call_ledger, key_forwarding, model_request, plan_token_rules, provider_answer, request_memory,
    run_meter,
};

use key_forwarding::ForwardedKey;
use output_limits::OutputLimits;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use handoff_domain::error_code::ErrorCode;
use handoff_domain::secret::Secret;
use handoff_domain::{FeedbackId, RunId, SandboxBackend};

/// The variable that, when set for a job script, asks it to end by writing a line of
/// `\x1e{boundary}\x1e{exit status}` then a plain tar of `out/` on its standard error: how
/// a container made ahead hands `out/` back without the engine's slower archive copy,
/// and says its end before the engine does.
pub const OUT_BOUNDARY_VARIABLE: &str = "HANDOFF_OUT_BOUNDARY";

/// Resource limits of a sandbox (enforced by Docker; E2B sizes come from its template).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResourceLimits {
    pub memory_bytes: i64,
    pub cpus: f64,
    pub max_processes: i64,
    /// What the job may bring back in `out/`.
    pub output: OutputLimits,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            memory_bytes: 4 * 1024 * 1024 * 1024,
            cpus: 2.0,
            max_processes: 1024,
            output: OutputLimits::default(),
        }
    }
}

/// What a sandbox runs.
#[derive(Debug, Clone)]
pub struct SandboxJob {
    pub run_id: RunId,
    /// The host workspace: `repo/`, `handoff/job.sh`, `out/`.
    pub workspace: PathBuf,
    /// The feedback item whose kept working copy is the job's `repo/`, on a backend that
    /// keeps it itself (Docker: a volume of the item's own).
    pub kept_copy: Option<FeedbackId>,
    /// The agent's API key, which the backend keeps out of the sandbox (see
    /// [`key_forwarding`]). The GitHub token is never part of a job.
    pub agent_key: Option<ForwardedKey>,
    /// Wall-clock limit of the whole job.
    pub timeout: Duration,
    pub limits: ResourceLimits,
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxEnd {
    /// The job script exited with this code.
    Exited(i64),
    /// The wall-clock limit passed; the sandbox was stopped.
    TimedOut,
    /// The owner cancelled; the sandbox was stopped.
    Cancelled,
}

/// Which output stream a piece of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// What a backend reports while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxEvent {
    /// The sandbox exists; its id lets a restart find and remove it.
    Started { sandbox_id: String },
    /// Output of the job, as it comes.
    Output {
        stream: OutputStream,
        bytes: Vec<u8>,
    },
}

/// The channels between a running job and the pipeline.
#[derive(Debug, Clone)]
pub struct JobControl {
    pub events: mpsc::UnboundedSender<SandboxEvent>,
    /// Turns true when the owner cancels the run.
    pub cancel: watch::Receiver<bool>,
}

impl JobControl {
    pub fn report(&self, event: SandboxEvent) {
        if self.events.send(event).is_err() {
            // The run stopped listening (it ended or was cancelled); nothing is lost
            // that anyone waits for.
            tracing::trace!("a sandbox event after the run stopped listening");
        }
    }

    /// Waits until the run is cancelled (never returns if it is not).
    pub async fn cancelled(&mut self) {
        until_cancelled(&mut self.cancel).await;
    }
}

/// Waits until `cancel` turns true; never returns if it does not (or if no one can
/// cancel any more).
pub async fn until_cancelled(cancel: &mut watch::Receiver<bool>) {
    loop {
        if *cancel.borrow_and_update() {
            return;
        }
        if cancel.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Why a sandbox could not run a job.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the {backend} sandbox is not available: {detail}")]
    Unavailable {
        backend: SandboxBackend,
        detail: String,
    },
    #[error("the {backend} sandbox failed: {detail}")]
    Failed {
        backend: SandboxBackend,
        detail: String,
    },
    #[error("moving files into or out of the sandbox failed: {0}")]
    Transfer(String),
}

impl SandboxError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SandboxError::Unavailable { .. } => ErrorCode::SandboxUnavailable,
            SandboxError::Failed { .. } | SandboxError::Transfer(_) => ErrorCode::SandboxFailed,
        }
    }
}

/// A configured backend, ready to run jobs.
#[derive(Debug, Clone)]
pub enum Sandbox {
    Local(local_process::LocalSandbox),
    Docker(docker::DockerSandbox),
    E2b(e2b::E2bSandbox),
}

impl Sandbox {
    pub fn backend(&self) -> SandboxBackend {
        match self {
            Sandbox::Local(_) => SandboxBackend::Local,
            Sandbox::Docker(_) => SandboxBackend::Docker,
            Sandbox::E2b(_) => SandboxBackend::E2b,
        }
    }

    /// The secret the backend itself uses (the E2B key), so a run can scrub it out of
    /// what it stores.
    pub fn own_secret(&self) -> Option<&Secret> {
        match self {
            Sandbox::E2b(sandbox) => sandbox.api_key(),
            Sandbox::Local(_) | Sandbox::Docker(_) => None,
        }
    }

    /// Whether the sandbox works on the host's files in place (so the host makes the
    /// working copy), rather than on copies it receives (so it makes its own from a
    /// bundle, which is far cheaper to send than a tree of many files).
    pub fn works_in_place(&self) -> bool {
        matches!(self, Sandbox::Local(_))
    }

    /// Checks the backend can run a job now (engine reachable, image present, key set),
    /// before anything is spent on a run.
    pub async fn preflight(&self) -> Result<(), SandboxError> {
        match self {
            Sandbox::Local(sandbox) => sandbox.preflight().await,
            Sandbox::Docker(sandbox) => sandbox.preflight().await,
            Sandbox::E2b(sandbox) => sandbox.preflight().await,
        }
    }

    /// Runs `job` to its end; `out/` is in the host workspace afterwards and the
    /// sandbox is gone, whatever happened, once [`Sandbox::teardown_done`] returns (a
    /// Docker container may still be on its way out when this does).
    pub async fn run(
        &self,
        job: &SandboxJob,
        control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        match self {
            Sandbox::Local(sandbox) => sandbox.run(job, control).await,
            Sandbox::Docker(sandbox) => sandbox.run(job, control).await,
            Sandbox::E2b(sandbox) => sandbox.run(job, control).await,
        }
    }

    /// Waits until what run `run_id`'s jobs left in the sandbox is gone: a run awaits it
    /// before it ends.
    pub async fn teardown_done(&self, run_id: RunId) {
        match self {
            Sandbox::Docker(sandbox) => sandbox.teardown_done(run_id).await,
            Sandbox::Local(_) | Sandbox::E2b(_) => {}
        }
    }

    /// Stops and removes what a run left behind (after a crash).
    pub async fn remove_leftover(
        &self,
        run_id: RunId,
        sandbox_id: Option<&str>,
    ) -> Result<(), SandboxError> {
        match self {
            Sandbox::Local(sandbox) => sandbox.remove_leftover(sandbox_id).await,
            Sandbox::Docker(sandbox) => sandbox.remove_leftover(run_id, sandbox_id).await,
            Sandbox::E2b(sandbox) => sandbox.remove_leftover(sandbox_id).await,
        }
    }
}
