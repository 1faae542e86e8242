//! End to end: a new owner, from a fresh install to a first pull request, in the window
//! alone — the first steps on the empty board, signing in with GitHub's device flow,
//! connecting a repository from the account's list and choosing its agent, a key typed
//! into the window (then found in the keyring and nowhere in the data folder), Check
//! setup with the agent image missing, "Build image", the check turning ok, and a first
//! run from new feedback to a PR. Against the fake GitHub and the real Docker engine,
//! with the recipe built from the local Debian base and the scripted agent standing in.

use handoff_test_support as support;

use std::time::Duration;

use handoff::secrets::{SecretName, SecretStore};
use handoff::store::SettingKey;
use handoff::Store;
use serde_json::Value;
use support::docker_images::{
    unique_image, write_stand_in, EngineImagesHold, GatesRemovedOnDrop, ImageRemovedOnDrop,
    LOCAL_BASE,
};
use support::eventually::eventually;
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::SCRIPTED_AGENT;
use support::secret_service::SecretService;
use support::window::AppSession;

/// The title of the shell's native no-isolation question.
const NO_ISOLATION_DIALOG: &str = "Handoff: run without isolation?";

const REPO: &str = "octocat/hello-world";
const CLIENT_ID: &str = "Iv1.handofftestapp";
const KEY: &str = "sk-ant-window-test-0123456789";

async fn step_done(app: &AppSession, step: &str) -> Value {
    app.eventually(
        &format!("const s = document.querySelector('.first-step[data-step=\"{step}\"]'); return s ? s.dataset.done : null;"),
        |value| value == "true",
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_owner_gets_to_a_first_pull_request_in_the_window_alone() {
    let fake = FakeGithub::start().await;
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.add_user("someone-else");
    fake.create_repo("someone-else/not-mine", "main");
    fake.register_oauth_app(CLIENT_ID);
    let keyring = SecretService::start();
    let data_dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let image = unique_image("window");
    let _removed = ImageRemovedOnDrop(image.clone());
    let installation = {
        // This machine reaches no registry: images are built from the local Debian base
        // with the scripted agent in place of the real one.
        let store = Store::open_in(data_dir.path()).await.unwrap();
        for (key, value) in [
            (SettingKey::DockerDefaultImage, image.clone()),
            (SettingKey::AgentImageBase, LOCAL_BASE.to_owned()),
            (
                SettingKey::AgentImageStandIn,
                write_stand_in(scratch.path()).display().to_string(),
            ),
        ] {
            store.settings().set_setting(key, &value).await.unwrap();
        }
        let installation = store.settings().installation_id().await.unwrap();
        store.close().await;
        installation
    };
    // The runs' egress gate holds on to the image: it goes first.
    let _gates = GatesRemovedOnDrop(installation);
    let app = AppSession::start_with_env(
        data_dir.path(),
        &[("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address())],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    // The empty board teaches the first steps.
    let steps = app.texts(".first-step strong").await;
    assert_eq!(
        steps,
        [
            "Sign in to GitHub",
            "Connect a repository",
            "Check setup",
            "Add feedback, or sync issues"
        ]
    );
    app.screenshot("first-steps").await;

    // 1. Signing in with the device flow: the client id asked for, the code shown.
    app.click(".first-step[data-step=\"sign-in\"] button").await;
    app.type_into("#sign-in-api-base", &fake.api_base()).await;
    app.click("#device-begin").await;
    let missing = app
        .eventually(
            "const e = document.getElementById('sign-in-error'); return e.hidden ? null : e.textContent;",
            |value| value.is_string(),
        )
        .await;
    assert!(
        missing
            .as_str()
            .unwrap()
            .contains("client id of a GitHub OAuth app"),
        "{missing}"
    );
    app.type_into("#device-client-id", CLIENT_ID).await;
    app.click("#device-begin").await;
    let code = app
        .eventually(
            "const c = document.getElementById('device-code'); return c && c.textContent ? c.textContent : null;",
            |value| value.is_string(),
        )
        .await;
    let code = code.as_str().unwrap().to_owned();
    assert_eq!(fake.device_user_codes(), std::slice::from_ref(&code));
    assert!(app.texts("#device-uri").await[0].ends_with("/login/device"));
    app.screenshot("sign-in-device").await;
    fake.approve_device(&code, OWNER);
    let session = app
        .eventually_within(
            Duration::from_secs(20),
            "return document.getElementById('session').textContent;",
            |value| value == &Value::String(format!("@{OWNER}")),
        )
        .await;
    assert_eq!(session, Value::String(format!("@{OWNER}")));
    step_done(&app, "sign-in").await;

    // 2. Connecting a repository picked from the account's list.
    app.click(".first-step[data-step=\"connect\"] button").await;
    let listed = app
        .eventually(
            "return [...document.querySelectorAll('.connect-choice')].map(c => c.dataset.repo);",
            |value| value.as_array().is_some_and(|list| !list.is_empty()),
        )
        .await;
    assert_eq!(listed, serde_json::json!([REPO]), "only the account's own");
    app.type_into(".connect-search", "hello").await;
    app.click(&format!(
        ".connect-choice[data-repo=\"{REPO}\"] .connect-choice-button"
    ))
    .await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;

    // Its settings: the agent and its sandbox. The local backend is asked about in a
    // dialog the operating system draws (no script in the page can answer it): declined,
    // nothing is saved.
    let choose_local = "const f = document.querySelector('.repo-form'); \
         f.agentPreset.value = 'claude'; f.agentPreset.dispatchEvent(new Event('change')); \
         f.sandboxBackend.value = 'local';";
    app.client.execute(choose_local, vec![]).await.unwrap();
    app.click(".save-repo").await;
    app.answer_native_dialog(NO_ISOLATION_DIALOG, "native-no-isolation-dialog", "Escape")
        .await;
    let refused = app
        .eventually(
            "const e = document.querySelector('.repo-form .form-error'); return e && !e.hidden ? e.textContent : null;",
            |value| value.is_string(),
        )
        .await;
    assert!(
        refused.as_str().unwrap().contains("not saved")
            && refused.as_str().unwrap().contains("no isolation"),
        "{refused}"
    );
    let mirror = handoff::Store::open_in(data_dir.path()).await.unwrap();
    assert_eq!(
        mirror
            .repositories()
            .repo_by_name(&REPO.parse().unwrap())
            .await
            .unwrap()
            .sandbox_backend,
        handoff::domain::SandboxBackend::Docker,
        "declined in the native dialog: still in its sandbox"
    );
    mirror.close().await;
    // Confirmed there, it is saved.
    app.client.execute(choose_local, vec![]).await.unwrap();
    app.client
        .execute(
            "document.querySelector('.repo-form').dataset.before = 'save'; \
             document.querySelector('.save-repo').scrollIntoView({block: 'center'});",
            vec![],
        )
        .await
        .unwrap();
    app.click(".save-repo").await;
    app.answer_native_dialog(
        NO_ISOLATION_DIALOG,
        "native-no-isolation-dialog-confirmed",
        "Return",
    )
    .await;
    let saved = app
        .eventually(
            "const f = document.querySelector('.repo-form:not([data-before])'); return f ? [f.agentPreset.value, f.sandboxBackend.value] : null;",
            |value| value == &serde_json::json!(["claude", "local"]),
        )
        .await;
    assert_eq!(saved, serde_json::json!(["claude", "local"]));
    // Back to Docker: leaving the local backend asks nothing.
    app.client
        .execute(
            "const f = document.querySelector('.repo-form'); f.sandboxBackend.value = 'docker'; f.dataset.before = 'save';",
            vec![],
        )
        .await
        .unwrap();
    app.click(".save-repo").await;
    let saved = app
        .eventually(
            "const f = document.querySelector('.repo-form:not([data-before])'); return f ? [f.agentPreset.value, f.sandboxBackend.value] : null;",
            |value| value == &serde_json::json!(["claude", "docker"]),
        )
        .await;
    assert_eq!(saved, serde_json::json!(["claude", "docker"]));

    // The sandbox's network: an entry naming the cloud's metadata address is refused
    // with its reason; package registries are kept, one per line.
    let set_hosts = |hosts: &'static str| {
        app.client.execute(
            "const f = document.querySelector('.repo-form'); f.allowedHosts.value = arguments[0];",
            vec![Value::String(hosts.to_owned())],
        )
    };
    set_hosts("169.254.169.254").await.unwrap();
    app.click(".save-repo").await;
    let refused = app
        .eventually(
            "const e = document.querySelector('.repo-form .form-error'); return e && !e.hidden ? e.textContent : null;",
            |value| value.is_string(),
        )
        .await;
    assert!(
        refused
            .as_str()
            .is_some_and(|text| text.contains("never allowed")),
        "{refused}"
    );
    set_hosts("registry.npmjs.org\n*.pypi.org").await.unwrap();
    app.click(".save-repo").await;
    let stored: Vec<String> = eventually("the allowed hosts are stored", || async {
        let mirror = handoff::Store::open_in(data_dir.path()).await.unwrap();
        let repo = mirror
            .repositories()
            .repo_by_name(&REPO.parse().unwrap())
            .await
            .unwrap();
        assert_eq!(repo.network_mode, handoff::domain::NetworkMode::Allowlist);
        let stored: Vec<String> = repo.allowed_hosts.iter().map(ToString::to_string).collect();
        Some(stored).filter(|stored| !stored.is_empty())
    })
    .await;
    assert_eq!(stored, ["registry.npmjs.org", "*.pypi.org"]);
    let shown = app
        .eventually(
            "const f = document.querySelector('.repo-form'); return f ? f.allowedHosts.value : null;",
            |value| value == "registry.npmjs.org\n*.pypi.org",
        )
        .await;
    assert_eq!(shown, "registry.npmjs.org\n*.pypi.org");
    app.screenshot("settings-repository").await;

    // 3. The key, typed into the window: in the keyring, nowhere in the data folder.
    app.click(".tab[data-tab=\"keys\"]").await;
    app.type_into(".key-row[data-key=\"anthropic\"] .key-input", KEY)
        .await;
    app.click(".key-row[data-key=\"anthropic\"] .save-key")
        .await;
    let state = app
        .eventually(
            "const r = document.querySelector('.key-row[data-key=\"anthropic\"]'); return r ? r.dataset.set : null;",
            |value| value == "true",
        )
        .await;
    assert_eq!(state, "true");
    assert!(
        !app.client.source().await.unwrap().contains(KEY),
        "the key never comes back to the page"
    );
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address());
    let stored = SecretStore::os()
        .get(&SecretName::AgentApiKey {
            provider: "anthropic".to_owned(),
            api_host: "api.anthropic.com".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(
        stored.map(|secret| secret.expose().to_owned()).as_deref(),
        Some(KEY)
    );
    for entry in walk(data_dir.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !bytes
                .windows(KEY.len())
                .any(|window| window == KEY.as_bytes()),
            "the key is in {}",
            entry.display()
        );
    }

    // 4. Check setup: the image is missing; "Build image" builds it and the check turns ok.
    app.click(".tab[data-tab=\"setup\"]").await;
    let image_line = format!(".setup-line[data-id=\"image:{image}\"]");
    let status = app
        .eventually(
            &format!("const l = document.querySelector('{image_line}'); return l ? l.dataset.status : null;"),
            |value| value.is_string(),
        )
        .await;
    assert_eq!(status, "failure");
    app.screenshot("check-setup-missing-image").await;
    assert_eq!(
        app.client
            .execute(
                &format!("return document.querySelector('.setup-line[data-id=\"agent-key:{REPO}\"]').dataset.status;"),
                vec![]
            )
            .await
            .unwrap(),
        "ok"
    );
    let building = EngineImagesHold::building();
    app.click(&format!("{image_line} .build-image")).await;
    // The build's output streams into the panel as it comes.
    let streamed = app
        .eventually_within(
            Duration::from_secs(180),
            &format!("const l = document.querySelector('{image_line} .build-log'); return l ? l.textContent : '';"),
            |value| value.as_str().is_some_and(|log| log.contains("install-agent:")),
        )
        .await;
    assert!(
        streamed
            .as_str()
            .unwrap_or_default()
            .contains("install-agent:"),
        "{streamed}"
    );
    let built = app
        .eventually_within(
            Duration::from_secs(180),
            &format!("const l = document.querySelector('{image_line}'); return l ? l.dataset.status : null;"),
            |value| value == "ok",
        )
        .await;
    drop(building);
    assert_eq!(built, "ok", "{:?}", app.texts(".toast").await);
    app.screenshot("check-setup").await;
    app.click("#settings-close").await;
    step_done(&app, "connect").await;

    // 5. A first run, from new feedback to a PR.
    app.click(".first-step[data-step=\"feedback\"] button")
        .await;
    app.type_into(
        "#feedback-dialog[open] textarea[name=body]",
        "The signup button is tiny.\n@@whoami\n@@write src/button.css height: 44px",
    )
    .await;
    app.click("#feedback-form button[type=submit]").await;
    app.wait_for("#detail .update-button").await;
    // The panel is drawn again as the new item lands; a click the page never saw is
    // given again (a refused run would say why in a toast and change nothing).
    app.click_until(
        "#detail .update-button",
        "return document.getElementById('detail').dataset.status !== 'NEW';",
    )
    .await;
    let status = app
        .eventually_within(
            Duration::from_secs(180),
            "return document.getElementById('detail').dataset.status;",
            |value| value == "WAITING_FOR_REVIEW" || value == "FAILED",
        )
        .await;
    assert_eq!(
        status,
        "WAITING_FOR_REVIEW",
        "{:?}",
        app.texts("#detail .run-failure, #detail .run-log").await
    );
    let pulls = fake.pulls(REPO);
    assert_eq!(pulls.len(), 1);
    assert_eq!(
        fake.file_on_branch(REPO, &pulls[0].1, "src/button.css")
            .as_deref(),
        Some("height: 44px\n")
    );
    app.text_eventually_containing(
        "const l = document.querySelector('#detail .run-log'); return l ? l.textContent : '';",
        "scripted agent: uid 10001",
    )
    .await;
    app.close().await;
}

/// Every file under `folder`.
fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![folder.to_owned()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_in_in_the_browser_can_be_cancelled_and_signing_out_forgets_the_token() {
    let fake = FakeGithub::start().await;
    fake.register_oauth_app(CLIENT_ID);
    let keyring = SecretService::start();
    let data_dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open_in(data_dir.path()).await.unwrap();
        store
            .settings()
            .set_setting(SettingKey::GithubDeviceClientId, CLIENT_ID)
            .await
            .unwrap();
        store.close().await;
    }
    let app = AppSession::start_with_env(
        data_dir.path(),
        &[("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address())],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    app.click_until(
        "#session",
        "return document.getElementById('sign-in-dialog').open;",
    )
    .await;
    let asks_for_id = app
        .client
        .execute(
            "return document.getElementById('device-client-id-box').hidden;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        asks_for_id,
        Value::Bool(true),
        "the client id is set already"
    );
    app.type_into("#sign-in-api-base", &fake.api_base()).await;
    app.click("#device-begin").await;
    app.wait_for("#device-waiting:not([hidden])").await;
    app.click("#device-cancel").await;
    let back = app
        .eventually(
            "return document.getElementById('device-start').hidden ? null : 'start';",
            |value| value == "start",
        )
        .await;
    assert_eq!(back, "start");
    // Approving the cancelled code afterwards signs nobody in. The proof that its asking
    // stopped: a second sign-in, asking at the same interval, asks twice while the
    // cancelled one is never given its token.
    let cancelled = fake.device_user_codes();
    fake.approve_device(&cancelled[0], OWNER);
    app.click("#device-begin").await;
    app.wait_for("#device-waiting:not([hidden])").await;
    let second = eventually("a second device code", || {
        let new_code = fake
            .device_user_codes()
            .into_iter()
            .find(|code| !cancelled.contains(code));
        std::future::ready(new_code)
    })
    .await;
    eventually("the second sign-in asked twice", || {
        let (polls, _) = fake.device_polls(&second);
        std::future::ready((polls >= 2).then_some(()))
    })
    .await;
    let (_, given) = fake.device_polls(&cancelled[0]);
    assert_eq!(given, 0, "the cancelled sign-in was not given its token");
    assert_eq!(
        app.texts("#session").await,
        ["Sign in to GitHub"],
        "a cancelled sign-in stays cancelled"
    );
    app.click("#device-cancel").await;
    app.wait_for("#device-start:not([hidden])").await;

    // A pasted token works too, and one that may change workflows is pointed out; then
    // the account menu signs out.
    fake.set_token_scopes(OWNER, Some("repo, workflow"));
    app.type_into("#sign-in-form input[name=token]", fake.owner_token())
        .await;
    app.click("#sign-in-form button[type=submit]").await;
    app.eventually(
        "return document.getElementById('session').textContent;",
        |value| value == &Value::String(format!("@{OWNER}")),
    )
    .await;
    let warned = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join(' | ');",
            "`workflow` scope",
        )
        .await;
    assert!(warned.contains("About this token"), "{warned}");
    app.click("#session").await;
    let who = app.texts("#account-who").await;
    assert!(
        who[0].contains(&format!("Signed in as @{OWNER} at {}", fake.api_base())),
        "{who:?}"
    );
    let note = app.texts("#account-token-warning").await;
    assert!(note[0].contains("`workflow` scope"), "{note:?}");
    app.screenshot("token-scope-warning").await;
    app.click("#sign-out").await;
    let session = app
        .eventually(
            "return document.getElementById('session').textContent;",
            |value| value == "Sign in to GitHub",
        )
        .await;
    assert_eq!(session, "Sign in to GitHub");
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address());
    let host = fake.api_base().trim_start_matches("http://").to_owned();
    assert!(SecretStore::os()
        .get(&SecretName::GithubToken { api_host: host })
        .await
        .unwrap()
        .is_none());
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_typed_by_name_is_connected_and_disconnecting_asks_and_keeps_its_history() {
    let keyring = SecretService::start();
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    let app = AppSession::start_with_env(
        data_dir.path(),
        &[("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address())],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    app.click_until(
        "#open-settings",
        "return document.getElementById('settings-dialog').open;",
    )
    .await;
    let hint = app
        .eventually(
            "const r = document.querySelector('.connect-results'); return r ? r.textContent : null;",
            |value| value.as_str().is_some_and(|text| text.contains("Sign in")),
        )
        .await;
    assert_eq!(hint, "Sign in to GitHub to list your repositories.");
    app.type_into(".connect-typed input", "octocat/typed-in")
        .await;
    app.click(".connect-typed button").await;
    app.wait_for(".repo-form[data-repo=\"octocat/typed-in\"]")
        .await;
    let repo = store
        .repositories()
        .repo_by_name(&"octocat/typed-in".parse().unwrap())
        .await
        .unwrap();
    let item = support::seed::add_feedback(&store, "octocat/typed-in", "Kept", "Its history").await;

    app.click(".disconnect button").await;
    let asked = app.texts(".disconnect p").await;
    assert!(
        asked[0].contains("Its feedback, runs and comments stay here"),
        "{asked:?}"
    );
    app.click(".confirm-disconnect").await;
    let connected = app
        .eventually(
            "return document.querySelectorAll('.repo-row').length;",
            |value| value == &Value::from(0),
        )
        .await;
    assert_eq!(connected, Value::from(0));
    assert!(store
        .repositories()
        .repo(repo.id)
        .await
        .unwrap()
        .disconnected_at
        .is_some());
    assert_eq!(
        store.feedback().feedback(item.id).await.unwrap().title,
        "Kept"
    );
    app.close().await;
    store.close().await;
}
