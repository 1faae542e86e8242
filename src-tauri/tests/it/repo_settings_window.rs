//! A repository's settings in the window that the other journeys do not touch: whether
//! the test stage files an issue per failing scenario.

use handoff_test_support as support;

use support::window::github_world::{connected_repo, GithubWorld, REPO};

#[tokio::test(flavor = "multi_thread")]
async fn the_test_stage_may_keep_its_failures_out_of_issues() {
    let world = GithubWorld::new().await;
    let repo = connected_repo(&world.fake, &world.store, "").await;
    assert!(repo.file_test_issues, "on by default");
    let app = world.open_signed_in_window().await;

    app.click("#open-settings").await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;
    let checked = app
        .eventually(
            "const c = document.querySelector('.repo-form input[name=fileTestIssues]'); return c ? c.checked : null;",
            |value| value.is_boolean(),
        )
        .await;
    assert_eq!(checked, true);
    app.click(".repo-form input[name=fileTestIssues]").await;
    app.click(".save-repo").await;
    app.text_eventually_containing(
        "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
        &format!("Saved {REPO}"),
    )
    .await;
    assert!(!world.store.repo(repo.id).await.unwrap().file_test_issues);
    let unchecked = app
        .eventually(
            "const c = document.querySelector('.repo-form input[name=fileTestIssues]'); return c ? c.checked : null;",
            |value| value == false,
        )
        .await;
    assert_eq!(unchecked, false, "the form shows what was saved");
}
