//! Where the agent's branches go, in the window: a PR whose branch is in the repository
//! itself says on its card that CI runs the agent's code with the repository's secrets;
//! the repository's settings say it too and make a fork in one click (in an organization
//! the owner picks; GitHub makes it a moment later and the window waits); Check setup
//! makes one for another repository in one click, in the same place.

use handoff_test_support as support;

use std::time::Duration;

use support::fake_github::OWNER;
use support::seed;
use support::window::github_world::{connected_repo, GithubWorld, REPO};

const TOASTS: &str =
    "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');";

#[tokio::test(flavor = "multi_thread")]
async fn the_window_says_ci_runs_with_secrets_and_makes_a_fork_in_one_click() {
    let world = GithubWorld::new().await;
    let (fake, store) = (&world.fake, &world.store);
    let repo = connected_repo(fake, store, "").await;
    fake.add_organization("octo-agents", &[(OWNER, "admin", true)]);
    fake.add_organization("strict-org", &[(OWNER, "member", false)]);
    let item = seed::add_feedback(
        store,
        REPO,
        "Greet the readers",
        "A greeting page.\n@@write docs/greeting.md Hello",
    )
    .await;

    let app = world.open_signed_in(item.id.0).await;
    app.click("#detail .update-button").await;
    let status = app
        .eventually_within(
            Duration::from_secs(120),
            "return document.getElementById('detail').dataset.status;",
            |value| value == "WAITING_FOR_REVIEW" || value == "FAILED",
        )
        .await;
    assert_eq!(status, "WAITING_FOR_REVIEW");
    // The PR's branch is in the repository: the card says what CI runs it with.
    let badge = app
        .eventually(
            &format!(
                "const b = document.querySelector('.card[data-feedback-id=\"{}\"] .secrets-badge'); \
                 return b && !b.hidden ? b.textContent : null;",
                item.id.0
            ),
            |value| value.is_string(),
        )
        .await;
    assert_eq!(badge, "CI with secrets");
    app.screenshot("card-ci-with-secrets").await;

    // The repository's settings say it, and offer the organizations the owner may use.
    app.click("#open-settings").await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;
    let state = app
        .text_eventually_containing(
            "const b = document.getElementById('agent-branches'); return b ? b.textContent : '';",
            "CI runs the agent's code with the repository's secrets",
        )
        .await;
    assert!(
        state.contains("does not let an account fork its own repository"),
        "{state}"
    );
    let options = app
        .eventually(
            "return [...document.querySelectorAll('#agent-branches .fork-place option')].map(o => (o.disabled ? '-' : '') + o.value);",
            |value| value.as_array().is_some_and(|options| options.len() == 3),
        )
        .await;
    assert_eq!(
        options,
        serde_json::json!(["octo-agents", "-strict-org", ""]),
        "an organization it may not make repositories in is shown but cannot be picked"
    );
    app.show_for_picture("#agent-branches").await;
    app.screenshot("agent-branches-same-repository").await;

    app.click("#agent-branches .make-agent-fork").await;
    app.text_eventually_containing(TOASTS, "go to octo-agents/hello-world")
        .await;
    let state = app
        .text_eventually_containing(
            "const b = document.getElementById('agent-branches'); return b ? b.textContent : '';",
            "Agent branches go to a fork",
        )
        .await;
    assert!(
        state.contains("octo-agents/hello-world: their PRs run CI without"),
        "{state}"
    );
    assert_eq!(
        fake.parent_of("octo-agents/hello-world").as_deref(),
        Some(REPO)
    );
    assert_eq!(
        store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .push_fork
            .map(|fork| fork.full_name()),
        Some("octo-agents/hello-world".to_owned())
    );

    // Check setup: another repository, with no fork yet, gets one in one click there.
    fake.create_repo("octocat/second", "main");
    store
        .repositories()
        .add_repo(&handoff::domain::NewRepo::with_defaults(
            "octocat/second".parse().unwrap(),
        ))
        .await
        .unwrap();
    app.click("#settings-dialog .tab[data-tab=\"setup\"]").await;
    let line = "[data-id=\"agent-branches:octocat/second\"]";
    app.wait_for(&format!("{line} .fix-make-fork")).await;
    let said = app
        .text_eventually_containing(
            &format!("return document.querySelector('{line}')?.textContent ?? '';"),
            "Make a fork in octo-agents",
        )
        .await;
    assert!(
        said.contains("CI runs the agent's code with the repository's secrets"),
        "{said}"
    );
    app.show_for_picture(line).await;
    app.screenshot("check-setup-agent-branches").await;
    app.click(&format!("{line} .fix-make-fork")).await;
    app.eventually_within(
        Duration::from_secs(60),
        &format!("return document.querySelector('{line}')?.dataset.status ?? null;"),
        |value| value == "ok",
    )
    .await;
    assert_eq!(
        fake.parent_of("octo-agents/second").as_deref(),
        Some("octocat/second")
    );
}
