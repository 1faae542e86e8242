//! The sandbox pipeline (P1): one pipeline over every backend. A run prepares a working
//! copy on the host, runs the agent in a sandbox with the prompt, brings back its
//! commits and stage output, pushes from the host, updates the PR and its comments, and
//! records the result — with the quota, the one-run-per-item rule and the iterate rules
//! checked before any sandbox starts.
//!
//! - [`code_run`]: first runs and iterates of feedback PRs (I1-I8).
//! - [`host_git`]: the repository cache, working copies, bundles and pushes.
//! - [`job_script`]: what every sandbox runs.
//! - [`agent_presets`]: the agents' commands.
//! - [`run_log`], [`run_supervision`]: live logs, heartbeat and cancel.
//! - [`reconcile`]: runs a crash left behind (P7).
//! - [`sandbox_choice`]: which sandbox a run gets.

pub mod agent_job;
pub mod agent_presets;
pub mod code_run;
pub mod host_git;
pub mod job_script;
pub mod qa_run;
pub mod reconcile;
pub mod run_log;
pub mod run_supervision;
pub mod sandbox_choice;

use std::path::PathBuf;
use std::time::Duration;

use crate::error_code::ErrorCode;
use crate::github::{GithubClient, GithubError};
use crate::sandbox::e2b::E2bSettings;
use crate::sandbox::{ResourceLimits, SandboxError};
use crate::secrets::{SecretError, SecretStore};
use crate::store::{SettingKey, Store, StoreError};

pub use code_run::{BegunCodeRun, CodeRunOptions, CodeRunReport, CodeRunResult};

/// How the pipeline works on this installation.
#[derive(Debug, Clone)]
pub struct PipelineSettings {
    /// The author of the commits Handoff makes for the agent.
    pub git_name: String,
    pub git_email: String,
    /// How often a running pipeline shows it is alive (and looks for a cancel).
    pub heartbeat_interval: Duration,
    pub limits: ResourceLimits,
    /// The image Docker runs use when the repository names none; `None`: the image
    /// Handoff builds for the repository's agent (`handoff-agent:<preset>`).
    pub default_docker_image: Option<String>,
    pub e2b: E2bSettings,
    /// Keep each run's workspace after the run (to look at what the agent saw).
    pub keep_workspaces: bool,
}

impl Default for PipelineSettings {
    fn default() -> Self {
        PipelineSettings {
            git_name: "Handoff agent".to_owned(),
            git_email: "agent@handoff.invalid".to_owned(),
            heartbeat_interval: Duration::from_secs(2),
            limits: ResourceLimits::default(),
            default_docker_image: None,
            e2b: E2bSettings::default(),
            keep_workspaces: false,
        }
    }
}

impl PipelineSettings {
    /// The image a repository that names none runs in, for an agent installed by the
    /// `image_preset` recipe.
    pub fn docker_image_for(&self, image_preset: &str) -> String {
        self.default_docker_image
            .clone()
            .unwrap_or_else(|| crate::agent_image::default_image(image_preset))
    }

    /// The defaults, with what this installation's settings change.
    pub async fn configured(store: &Store) -> Result<Self, StoreError> {
        let mut settings = PipelineSettings::default();
        if let Some(name) = store.setting(SettingKey::AgentGitName).await? {
            settings.git_name = name;
        }
        if let Some(email) = store.setting(SettingKey::AgentGitEmail).await? {
            settings.git_email = email;
        }
        if let Some(image) = store.setting(SettingKey::DockerDefaultImage).await? {
            settings.default_docker_image = Some(image).filter(|image| !image.trim().is_empty());
        }
        if let Some(base) = store.setting(SettingKey::E2bApiBase).await? {
            settings.e2b.api_base = base.trim_end_matches('/').to_owned();
        }
        if let Some(template) = store.setting(SettingKey::E2bEnvdUrl).await? {
            settings.e2b.envd_url_template = template;
        }
        Ok(settings)
    }
}

/// Everything a run needs from its surroundings.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub store: Store,
    pub github: GithubClient,
    pub secrets: SecretStore,
    pub data_dir: PathBuf,
    pub settings: PipelineSettings,
}

/// Why a run could not start (once it has started, failures are recorded on the run).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Github(#[from] GithubError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Secrets(#[from] SecretError),
    #[error(transparent)]
    Agent(#[from] agent_presets::AgentChoiceError),
    #[error("{0}")]
    SetupIncomplete(crate::setup_check::CheckLine),
    #[error("cannot prepare the run's workspace: {0}")]
    Workspace(String),
    #[error("the code stage runs with `handoff run`; the QA stages are review, plan, test, fix and full-auto")]
    NotAQaStage,
    #[error("PR #{number} is {state}: QA runs on open pull requests only")]
    PullRequestNotOpen { number: u64, state: String },
    #[error(
        "feedback {feedback_id} was opened on GitHub by @{author}, not by you: the agent runs on it \
         only once you approve it"
    )]
    FeedbackAwaitsApproval {
        feedback_id: crate::domain::FeedbackId,
        author: String,
    },
    #[error(
        "the {kind} comment that {stage} reads was last edited on GitHub by {editor}, not by you \
         (version {version}): it reaches no prompt until you approve that version"
    )]
    EditAwaitsApproval {
        stage: crate::domain::Stage,
        kind: crate::domain::CommentKind,
        version: u32,
        editor: String,
    },
    #[error("fix cannot push to PR #{number}: {reason}")]
    FixCannotPush { number: u64, reason: String },
    #[error("{0} is disconnected: connect it again to run on it")]
    RepoDisconnected(String),
    #[error(
        "the {kind} comment carries your edits (version {version}); running {stage} again replaces it on GitHub \
         (your text stays in the history)"
    )]
    OwnerEdits {
        stage: crate::domain::Stage,
        kind: crate::domain::CommentKind,
        version: u32,
    },
}

impl PipelineError {
    pub fn code(&self) -> ErrorCode {
        match self {
            PipelineError::Store(error) => error.code(),
            PipelineError::Github(error) => error.code(),
            PipelineError::Sandbox(error) => error.code(),
            PipelineError::Secrets(_) => ErrorCode::Keyring,
            PipelineError::Agent(_) => ErrorCode::InvalidInput,
            PipelineError::SetupIncomplete(_) => ErrorCode::SetupIncomplete,
            PipelineError::Workspace(_) => ErrorCode::SandboxFailed,
            PipelineError::NotAQaStage => ErrorCode::InvalidInput,
            PipelineError::PullRequestNotOpen { .. } => ErrorCode::IllegalTransition,
            PipelineError::OwnerEdits { .. } => ErrorCode::OwnerEdits,
            PipelineError::FeedbackAwaitsApproval { .. }
            | PipelineError::EditAwaitsApproval { .. } => ErrorCode::AwaitsApproval,
            PipelineError::FixCannotPush { .. } => ErrorCode::IllegalTransition,
            PipelineError::RepoDisconnected(_) => ErrorCode::IllegalTransition,
        }
    }
}
