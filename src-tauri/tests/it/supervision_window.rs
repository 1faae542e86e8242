//! The window never goes quietly stale: a run whose process died while the window stays
//! open leaves CODING without a restart, and when the change journal cannot be read the
//! window says it no longer shows changes as they happen, then catches up when it can.

use handoff_test_support as support;

use handoff::Store;
use support::seed;
use support::store_tampering::{
    hide_the_change_journal, make_run_silent_for, restore_the_change_journal,
};
use support::window::github_world::{connected_repo, GithubWorld};
use support::window::AppSession;

fn column_of(feedback_id: i64) -> String {
    format!(
        "const c = document.querySelector('.card[data-feedback-id=\"{feedback_id}\"]'); \
         return c ? c.closest('.column').dataset.status : null;"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_process_died_leaves_coding_while_the_window_stays_open() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, "").await;
    let feedback = seed::add_feedback(
        &world.store,
        support::window::github_world::REPO,
        "Its process died",
        "The run's process is killed while the window is open.",
    )
    .await;
    let app = world.open_signed_in_window().await;
    seed::start_run(&world.store, &feedback).await;
    let run = seed::active_run(&world.store, &feedback).await;
    // Its process took its slot in the run queue and started it (a queued run whose
    // process stopped is taken over instead: `run_queue_local`).
    assert_eq!(
        world.store.take_queue_turn(run.id, false).await.unwrap(),
        handoff::store::TakenTurn::Started {
            backend: handoff::domain::SandboxBackend::Docker
        }
    );
    let coding = app
        .eventually(&column_of(feedback.id.0), |value| value == "CODING")
        .await;
    assert_eq!(coding, "CODING");

    // Its process is gone: no heartbeat for ten minutes, and the window stays open.
    make_run_silent_for(&world.store, run.id, 10).await;
    let failed = app
        .eventually_within(
            std::time::Duration::from_secs(40),
            &column_of(feedback.id.0),
            |value| value == "FAILED",
        )
        .await;
    assert_eq!(failed, "FAILED", "the run was ended without a restart");
    let toast = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('\\n');",
            "Handoff stopped while this run was going",
        )
        .await;
    assert!(toast.contains(&format!("Run {}", run.id.0)), "{toast}");
    let ended = world.store.run(run.id).await.unwrap();
    assert_eq!(
        ended.failure_code,
        Some(handoff::domain::RunFailureCode::Abandoned)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_says_when_it_stops_following_changes_and_catches_up_after() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    const BANNER: &str = "const b = document.getElementById('following-lost'); \
                          return b.hidden ? null : b.textContent;";
    assert_eq!(
        app.client.execute(BANNER, vec![]).await.unwrap(),
        serde_json::Value::Null
    );

    hide_the_change_journal(&store).await;
    let banner = app
        .text_eventually_containing(BANNER, "no longer shows changes as they happen")
        .await;
    assert!(banner.contains("Trying again in"), "{banner}");
    app.screenshot("following-lost").await;

    // What changes meanwhile is shown once the window follows again.
    let new = items
        .iter()
        .find(|item| item.title == seed::NEW_TITLE)
        .unwrap();
    store
        .add_owner_follow_up(new.id, "Also the login page.")
        .await
        .unwrap();
    restore_the_change_journal(&store).await;
    let gone = app
        .eventually_within(std::time::Duration::from_secs(20), BANNER, |value| {
            value.is_null()
        })
        .await;
    assert!(gone.is_null(), "the banner stayed: {gone}");
    let follow_ups = app
        .eventually(
            &format!(
                "const c = document.querySelector('.card[data-feedback-id=\"{}\"]'); \
                 return c ? c.querySelector('.follow-ups').textContent : null;",
                new.id.0
            ),
            |value| value == "1 follow-up",
        )
        .await;
    assert_eq!(follow_ups, "1 follow-up");
}
