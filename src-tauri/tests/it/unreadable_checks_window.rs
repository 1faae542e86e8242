//! A token that may not read a repository's checks (a fine-grained token without
//! "Checks: read"), in the window: the sync succeeds, the pull requests say their checks
//! cannot be read rather than "no checks", and Check setup names the permission.

use handoff_test_support as support;

use support::fake_github::{Fault, FaultRule, OWNER};
use support::window::github_world::{connected_repo, GithubWorld, REPO};

#[tokio::test(flavor = "multi_thread")]
async fn checks_the_token_may_not_read_are_said_and_check_setup_names_the_permission() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, "").await;
    world.fake.create_branch(REPO, "feature/x", "main");
    let number = world.fake.create_pull(REPO, OWNER, "feature/x", "A change");
    let head = world.fake.branch_sha(REPO, "feature/x").unwrap();
    world
        .fake
        .add_check_run(REPO, &head, "ci", "test", Some("failure"), "1 failed");
    world.fake.inject(
        FaultRule::new(
            "/check-runs",
            Fault::NotAccessible {
                permission: "checks=read".to_owned(),
            },
        )
        .times(100),
    );
    let app = world.open_signed_in_window().await;

    app.click("#sync-now").await;
    let synced = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
            "Synced",
        )
        .await;
    assert!(!synced.contains("failed"), "{synced}");
    app.click(".view-tab[data-view=pulls]").await;
    let pill = app
        .text_eventually_containing(
            &format!(
                "const r = document.querySelector('.pull-row[data-number=\"{number}\"] .check-pill'); \
                 return r ? r.textContent : '';"
            ),
            "not readable",
        )
        .await;
    assert_eq!(pill, "checks not readable with this token");

    app.click("#open-settings").await;
    app.click(".tab[data-tab=\"setup\"]").await;
    let line = app
        .text_eventually_containing(
            &format!(
                "const l = document.querySelector('.setup-line[data-id=\"checks:{REPO}\"]'); \
                 return l ? l.dataset.status + ': ' + l.textContent : '';"
            ),
            "Checks: read",
        )
        .await;
    assert!(line.starts_with("warning: "), "{line}");
    assert!(
        app.texts(&format!(
            ".setup-line[data-id=\"checks:{REPO}\"] .fix-sign-in"
        ))
        .await
        .len()
            == 1,
        "a button to sign in with another token"
    );
    app.close().await;
    world.store.close().await;
}
