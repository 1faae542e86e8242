//! A world for window journeys that sign in: the fake GitHub, a real keyring on a
//! private D-Bus session, and a mirror in a data folder of its own; with the steps every
//! such journey takes (sign in through the dialog, connect a repository whose agent is
//! the scripted one, open a feedback card).

use std::time::Duration;

use handoff::domain::{NewRepo, Repo, SandboxBackend};
use handoff::store::RepoSettingsChange;
use handoff::Store;
use serde_json::Value;

use super::AppSession;
use crate::fake_github::{FakeGithub, OWNER};
use crate::pipeline_world::SCRIPTED_AGENT;
use crate::secret_service::SecretService;

pub const REPO: &str = "octocat/hello-world";

pub struct GithubWorld {
    pub fake: FakeGithub,
    pub keyring: SecretService,
    pub store: Store,
    pub data_dir: tempfile::TempDir,
}

impl GithubWorld {
    pub async fn new() -> GithubWorld {
        let fake = FakeGithub::start().await;
        let keyring = SecretService::start();
        let data_dir = tempfile::tempdir().unwrap();
        let store = Store::open_in(data_dir.path()).await.unwrap();
        GithubWorld {
            fake,
            keyring,
            store,
            data_dir,
        }
    }

    /// Opens the window on this mirror and signs in through its dialog.
    pub async fn open_signed_in_window(&self) -> AppSession {
        let app = AppSession::start_with_env(
            self.data_dir.path(),
            &[("DBUS_SESSION_BUS_ADDRESS", self.keyring.bus_address())],
        )
        .await;
        assert_eq!(app.wait_until_loaded().await, "true");
        sign_in(&app, &self.fake).await;
        app
    }

    /// Opens the window, signs in, and opens the card of `feedback_id`.
    pub async fn open_signed_in(&self, feedback_id: i64) -> AppSession {
        let app = self.open_signed_in_window().await;
        open_card(&app, feedback_id).await;
        app
    }
}

/// Signs in through the window's dialog, the way a person pastes a token.
pub async fn sign_in(app: &AppSession, fake: &FakeGithub) {
    app.click("#session").await;
    app.type_into("#sign-in-form input[name=token]", fake.owner_token())
        .await;
    app.type_into("#sign-in-api-base", &fake.api_base()).await;
    app.click("#sign-in-form button[type=submit]").await;
    let session = app
        .eventually(
            "return document.getElementById('session').textContent;",
            |value| value == &Value::String(format!("@{OWNER}")),
        )
        .await;
    assert_eq!(session, Value::String(format!("@{OWNER}")), "signed in");
}

/// Opens a feedback card's detail panel.
pub async fn open_card(app: &AppSession, feedback_id: i64) {
    // A click can land while the board is being drawn again (the sign-in just before
    // reloads it): the card's title is clicked again until its panel opens. (The title,
    // as a person does: the card's middle may hold its PR link or its pick box.)
    app.click_until(
        &format!(".card[data-feedback-id=\"{feedback_id}\"] .card-open"),
        &format!(
            "const d = document.getElementById('detail'); \
             return !d.hidden && d.dataset.feedbackId === '{feedback_id}';"
        ),
    )
    .await;
    let shown = app
        .eventually(
            "const d = document.getElementById('detail'); return d.hidden ? null : d.dataset.feedbackId;",
            |value| value == &Value::String(feedback_id.to_string()),
        )
        .await;
    assert_eq!(
        shown,
        Value::String(feedback_id.to_string()),
        "the detail panel opened"
    );
}

/// A repository on the fake whose agent is the scripted one, connected to run locally,
/// with `instructions` in every prompt (the scripted agent's directives).
pub async fn connected_repo(fake: &FakeGithub, store: &Store, instructions: &str) -> Repo {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    let added = store
        .repositories()
        .add_repo(&NewRepo {
            sandbox_backend: SandboxBackend::Local,
            agent_preset: "custom".to_owned(),
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .repositories()
        .change_repo_settings(
            added.id,
            &RepoSettingsChange {
                agent_command: Some(Some("sh .handoff/agent.sh".to_owned())),
                run_timeout_seconds: Some(120),
                custom_instructions: Some(instructions.to_owned()),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap()
}

/// How long a run may take in a window journey.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Syncs from the window, opens the pull requests and the workspace of PR `number`.
pub async fn open_workspace(app: &AppSession, number: u64) {
    app.click("#sync-now").await;
    app.text_eventually_containing(
        "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
        "Synced",
    )
    .await;
    app.click(".view-tab[data-view=pulls]").await;
    // The list is drawn again whenever the mirror changes (the sync's last writes may
    // land just then): the row is clicked again until the workspace opens.
    app.click_until(
        &format!(".pull-row[data-number=\"{number}\"]"),
        &format!(
            "const w = document.getElementById('pr-workspace'); \
             return !w.hidden && w.dataset.number === '{number}';"
        ),
    )
    .await;
    let shown = app
        .eventually(
            "const w = document.getElementById('pr-workspace'); return w.hidden ? null : (w.dataset.number || null);",
            |value| value == &Value::String(number.to_string()),
        )
        .await;
    if shown != Value::String(number.to_string()) {
        let picture = app.screenshot("workspace-did-not-open").await;
        panic!(
            "the workspace of #{number} did not open ({shown}); toasts {:?}; the window is in {}",
            app.texts(".toast").await,
            picture.display()
        );
    }
}
