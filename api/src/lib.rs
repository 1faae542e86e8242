//! Handoff's application API: the use cases both front ends call, in the shapes the
//! window sends and receives (inputs of plain strings and numbers, results that
//! serialize in the page's casing, untrusted text already rendered to sanitized HTML,
//! errors as [`CodedError`]). The Tauri commands in `src-tauri` are one-line calls into
//! this crate, and the `handoff` command line calls it for the same use cases, so each
//! is written once: neither front end depends on the core (`handoff`), which knows
//! nothing of either.
//!
//! - this file: the dashboard, and [`AppCore`], what the app holds for its lifetime;
//! - [`records`]: the mirror's records (feedback, runs, repositories, the board) in the
//!   page's casing;
//! - [`feedback_items`]: items as both front ends ask for them (add, the board, an
//!   item's history, approve, put away);
//! - [`feedback_view`]: one item with its thread, runs and comments; new feedback;
//! - [`runs`]: starting, cancelling and following runs;
//! - [`archive`]: dismissing, archiving and restoring items;
//! - [`run_queue`]: queued runs' places, runs of several items at once, new items per
//!   repository;
//! - [`pull_requests`]: the list of open pull requests;
//! - [`pull_request_workspace`]: a PR's stage strip, comment panes and test results, and
//!   starting a stage;
//! - [`comments`]: previewing, saving and comparing managed comments, their history;
//! - [`comment_versions`]: a comment's versions as the command line lists, compares and
//!   approves them, and the conflict waiting in the outbox;
//! - [`outbox`]: edits waiting to reach GitHub;
//! - [`session`]: sign-in, sync and the events that become notifications;
//! - [`mirror_following`]: telling an open window what changed, and ending runs
//!   nothing drives any more;
//! - [`timed_sync`]: syncing with GitHub on a timer, for the window and the daemon;
//! - [`daemon`]: `handoff serve`, the window's own work kept going with no window;
//!   [`daemon_status`]: whether one serves the data folder, and what it is doing;
//! - [`setup`]: device-flow sign-in, keys, Check setup, building agent images;
//! - [`agent_images`]: the agent images on the local engine, built and listed;
//! - [`repositories`]: connecting repositories and their settings;
//! - [`environments`]: what a repository's base branch says its agent's environment is
//!   made of;
//! - [`repo_settings_input`]: a change of settings as either front end types it, read
//!   one way for both;
//! - [`installation_settings`]: this installation's settings, each checked before it is
//!   kept;
//! - [`lessons`]: a repository's lessons, their sources and the owner's decisions;
//! - [`log`]: the log file's folder, level and last lines;
//! - [`updates`]: the update feed, and a newer version it offers;
//! - [`core_types`]: the core's types the front ends name (ids, records, options,
//!   reports, error codes), so that neither depends on the core itself;
//! - [`runs_to_drive`]: a run begun by a use case, for the caller to drive in the
//!   foreground or leave going in the background;
//! - [`page_contract`]: all of the above written out as JSDoc typedefs for the page (only
//!   with the `page-contract` feature, which the tests turn on: no program carries it).

pub mod agent_forks;
pub mod agent_images;
pub mod archive;
pub mod comment_versions;
pub mod comments;
pub mod core_types;
pub mod daemon;
pub mod daemon_status;
pub mod environments;
pub mod feedback_items;
pub mod feedback_view;
pub mod installation_settings;
pub mod lessons;
pub mod log;
pub mod mirror_following;
pub mod outbox;
#[cfg(feature = "page-contract")]
pub mod page_contract;
pub mod pull_request_workspace;
pub mod pull_requests;
pub mod queue_slots;
pub mod records;
pub mod repo_settings_input;
pub mod repositories;
pub mod run_queue;
pub mod runs;
pub mod runs_to_drive;
pub mod session;
pub mod setup;
pub mod spend;
pub mod test_settings;
pub mod timed_sync;
pub mod updates;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use handoff::domain::{FeedbackId, FeedbackStatus, RepoName};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::client::RequestPolicy;
use handoff::github::sign_in::connect;
use handoff::github::GithubClient;
use handoff::pipeline::{Pipeline, PipelineSettings};
use handoff::secrets::SecretStore;
use handoff::store::{FeedbackFilter, Store};
use records::{BoardView, RepoRecord};

/// What the app holds for its lifetime: the store, where the data lives, the keyring,
/// and the device-flow sign-ins waiting for the owner.
#[derive(Debug, Clone)]
pub struct AppCore {
    /// The mirror. Only the use cases here reach it: the front ends call them.
    pub(crate) store: Store,
    pub data_dir: PathBuf,
    pub secrets: SecretStore,
    pub sign_ins: setup::PendingSignIns,
}

impl AppCore {
    pub fn new(store: Store, data_dir: &Path) -> Self {
        AppCore {
            store,
            data_dir: data_dir.to_owned(),
            secrets: SecretStore::os(),
            sign_ins: setup::PendingSignIns::default(),
        }
    }

    /// Opens the mirror in `data_dir` (made, or brought up to this version's schema, as
    /// needed).
    pub async fn open(data_dir: &Path) -> Result<Self, CodedError> {
        let store = Store::open_in(data_dir).await?;
        Ok(AppCore::new(store, data_dir))
    }

    /// The mirror's database file.
    pub fn database_path(&self) -> &Path {
        self.store.path()
    }

    /// Closes the mirror, waiting for its last writes.
    pub async fn close(&self) {
        self.store.clone().close().await;
    }

    /// A GitHub client with the token from the keyring.
    pub async fn github(&self) -> Result<GithubClient, CodedError> {
        Ok(connect(&self.store, &self.secrets, RequestPolicy::default()).await?)
    }

    /// The pipeline, signed in to GitHub.
    pub async fn pipeline(&self) -> Result<Pipeline, CodedError> {
        let github = self.github().await?;
        self.pipeline_signed_in(github).await
    }

    /// The pipeline, with a GitHub client already signed in.
    pub async fn pipeline_signed_in(&self, github: GithubClient) -> Result<Pipeline, CodedError> {
        Ok(Pipeline {
            store: self.store.clone(),
            github,
            secrets: self.secrets.clone(),
            data_dir: self.data_dir.clone(),
            settings: PipelineSettings::configured(&self.store).await?,
        })
    }
}

/// The version of the mirror's schema this build reads and writes.
pub fn schema_version() -> i64 {
    handoff::store::supported_schema_version()
}

/// Where this user's Handoff data lives, unless a front end is told another folder.
pub fn data_folder() -> Result<PathBuf, CodedError> {
    handoff::data_dir::data_dir()
        .map_err(|error| CodedError::new(ErrorCode::DataFolder, error.to_string()))
}

fn invalid_input(message: String) -> CodedError {
    CodedError {
        code: ErrorCode::InvalidInput,
        message,
        fix: None,
    }
}

/// A filter's choice as the page sends it: one of `T`'s words, or empty (or absent) for
/// "all". A word that is none of `T`'s is refused with the words it could have been.
pub(crate) fn choice_or_all<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let text: Option<String> = Option::deserialize(deserializer)?;
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(word) => word.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

/// The dashboard's filter as the UI sends it: an empty repository or status means "all".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct DashboardQuery {
    pub repo: String,
    #[serde(deserialize_with = "choice_or_all")]
    #[cfg_attr(
        feature = "page-contract",
        ts(as = "Option<crate::page_contract::FeedbackStatusWords>")
    )]
    pub status: Option<FeedbackStatus>,
    pub search: String,
    /// The most cards a column gets (the most recently changed); none: every card.
    pub cards_per_column: Option<u32>,
    /// The items off the board (closed on GitHub, dismissed, archived) instead of those
    /// on it.
    pub archived: bool,
}

impl DashboardQuery {
    fn to_filter(&self) -> Result<FeedbackFilter, CodedError> {
        let repo = match self.repo.trim() {
            "" => None,
            text => Some(
                text.parse::<RepoName>()
                    .map_err(|error| invalid_input(error.to_string()))?,
            ),
        };
        let status = self.status;
        let search = Some(self.search.trim().to_owned()).filter(|text| !text.is_empty());
        Ok(FeedbackFilter {
            repo,
            status,
            search,
            archived: Some(self.archived),
        })
    }
}

/// The dashboard for `query`.
pub async fn dashboard(core: &AppCore, query: &DashboardQuery) -> Result<BoardView, CodedError> {
    let store = &core.store;
    let mut board: BoardView = store
        .feedback()
        .dashboard_limited(&query.to_filter()?, query.cards_per_column)
        .await?
        .into();
    run_queue::place_queued_cards(store, &mut board).await?;
    Ok(board)
}

/// Connected repositories, for the filter menu.
pub async fn repos(core: &AppCore) -> Result<Vec<RepoRecord>, CodedError> {
    let store = &core.store;
    Ok(store
        .repositories()
        .repos()
        .await?
        .into_iter()
        .map(RepoRecord::from)
        .collect())
}

/// The web address of a feedback item's PR, checked to be an https URL before anything
/// opens it.
pub async fn pull_request_url(core: &AppCore, feedback_id: i64) -> Result<String, CodedError> {
    let store = &core.store;
    let feedback = store.feedback().feedback(FeedbackId(feedback_id)).await?;
    match feedback.pr_url {
        Some(url) if url.starts_with("https://") && !url.contains(char::is_whitespace) => Ok(url),
        Some(url) => Err(invalid_input(format!(
            "feedback {feedback_id} has a PR address that is not https: {url}"
        ))),
        None => Err(CodedError {
            code: ErrorCode::NotFound,
            message: format!("feedback {feedback_id} has no pull request yet"),
            fix: None,
        }),
    }
}

/// A link from rendered markdown, checked before the browser gets it: http(s) only.
pub fn checked_link(url: &str) -> Result<String, CodedError> {
    let url = url.trim();
    let allowed = (url.starts_with("https://") || url.starts_with("http://"))
        && !url.contains(char::is_whitespace);
    if allowed {
        Ok(url.to_owned())
    } else {
        Err(invalid_input(format!(
            "only web links open in the browser, not {url:?}"
        )))
    }
}

/// Where the app keeps its data, for the About box and error screens.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub version: &'static str,
    pub data_dir: String,
    pub database: String,
}

pub fn app_info(data_dir: &std::path::Path) -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        data_dir: data_dir.display().to_string(),
        database: data_dir
            .join(handoff::store::DATABASE_FILE_NAME)
            .display()
            .to_string(),
    }
}
