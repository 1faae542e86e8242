//! The real Claude Code run from the window: the owner stores the Anthropic key in
//! Settings → Keys, presses Run agent on a card, and the run's log in the detail panel
//! shows what the agent did, step by step, with what it cost; the run's row shows its
//! cost and tokens. The model is the stand-in model server; Claude Code is the program
//! from PyPI that `scripts/install-agents.sh` installed.

use handoff_test_support as support;

use std::time::Duration;

use handoff::store::{RepoSettingsChange, SettingKey};
use support::model_server::{ModelServer, ModelTurn};
use support::real_agents::RealAgent;
use support::seed;
use support::window::github_world::{connected_repo, open_card, sign_in, GithubWorld, REPO};
use support::window::AppSession;

const KEY: &str = "sk-ant-window-real-agent-0123456789";

#[tokio::test(flavor = "multi_thread")]
async fn a_real_claude_code_run_shows_its_steps_and_its_cost_in_the_window() {
    let world = GithubWorld::new().await;
    let (fake, store) = (&world.fake, &world.store);
    let repo = connected_repo(fake, store, "").await;
    store
        .repositories()
        .change_repo_settings(
            repo.id,
            &RepoSettingsChange {
                agent_preset: Some("claude".to_owned()),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let model = ModelServer::start(vec![
        ModelTurn::WriteFile {
            path: "docs/greeting.md".to_owned(),
            contents: "Hello from Claude Code\n".to_owned(),
        },
        ModelTurn::Text("I added docs/greeting.md.".to_owned()),
    ])
    .await;
    store
        .settings()
        .set_setting(SettingKey::AnthropicApiBase, &model.api_base())
        .await
        .unwrap();
    let item = seed::add_feedback(store, REPO, "Greet the readers", "Add a greeting page.").await;
    let bin = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = RealAgent::Claude.path_with_agent(bin.path());
    let app = AppSession::start_with_env(
        world.data_dir.path(),
        &[
            ("DBUS_SESSION_BUS_ADDRESS", world.keyring.bus_address()),
            ("PATH", &path),
            ("HOME", home.path().to_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");
    sign_in(&app, fake).await;

    // The key, typed into Settings → Keys.
    app.click("#open-settings").await;
    app.click(".tab[data-tab=\"keys\"]").await;
    app.type_into(".key-row[data-key=\"anthropic\"] .key-input", KEY)
        .await;
    app.click(".key-row[data-key=\"anthropic\"] .save-key")
        .await;
    app.eventually(
        "const r = document.querySelector('.key-row[data-key=\"anthropic\"]'); return r ? r.dataset.set : null;",
        |value| value == "true",
    )
    .await;
    app.click("#settings-close").await;

    open_card(&app, item.id.0).await;
    app.click("#detail .update-button").await;
    let status = app
        .eventually_within(
            Duration::from_secs(120),
            "return document.getElementById('detail').dataset.status;",
            |value| value == "WAITING_FOR_REVIEW" || value == "FAILED",
        )
        .await;
    assert_eq!(
        status,
        "WAITING_FOR_REVIEW",
        "{:?}",
        app.texts("#detail .run-failure").await
    );
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some("Hello from Claude Code\n")
    );
    assert!(model
        .model_calls()
        .iter()
        .all(|call| call.x_api_key.as_deref() == Some(KEY)));

    // The log reads as what the agent did; the row says what it cost.
    let log = app
        .text_eventually_containing(
            "const l = document.querySelector('#detail .run-log'); return l ? l.textContent : '';",
            "claude: done in",
        )
        .await;
    for step in [
        "claude: started",
        "claude → Write ",
        "claude: I added docs/greeting.md.",
    ] {
        assert!(log.contains(step), "{step:?} is not in the log:\n{log}");
    }
    assert!(
        !log.contains("\"type\":"),
        "a raw event is in the log:\n{log}"
    );
    assert!(!log.contains(KEY));
    let spend = app.texts("#detail .run .run-spend").await;
    assert!(
        spend.first().is_some_and(
            |text| text.starts_with('$') && text.contains("2.4k tokens in, 160 out · metered")
        ),
        "{spend:?}"
    );
    // Its steps, as the key forwarder saw them: one per model call, the first the write.
    app.click("#detail .run .show-steps").await;
    app.wait_for("#detail .steps .step").await;
    let steps = app.texts("#detail .steps .step").await;
    assert_eq!(steps.len(), model.model_calls().len(), "{steps:?}");
    assert!(
        steps[0].contains("wrote") && steps[0].contains("docs/greeting.md"),
        "{steps:?}"
    );
    assert!(steps.iter().all(|step| !step.contains(KEY)), "{steps:?}");
    // For the picture: the notifications put away, the run's row and its log in view.
    app.show_for_picture("#detail .run").await;
    app.screenshot("real-agent-log").await;
    app.close().await;
}
