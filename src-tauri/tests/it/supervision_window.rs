//! The window never goes quietly stale: a run whose process died while the window stays
//! open leaves CODING without a restart; when the command line that drove a queue is
//! killed, the window ends its run at once and takes over the waiting ones; and when
//! the change journal cannot be read the window says it no longer shows changes as they
//! happen, then catches up when it can.

use handoff_test_support as support;

use std::time::Duration;

use handoff::Store;
use support::cli_process::{ok_text, Cli};
use support::eventually::eventually;
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
        world
            .store
            .run_queue()
            .take_queue_turn(run.id, false)
            .await
            .unwrap(),
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
    let ended = world.store.runs().run(run.id).await.unwrap();
    assert_eq!(
        ended.failure_code,
        Some(handoff::domain::RunFailureCode::Abandoned)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_queue_driver_is_taken_over_by_the_open_window_at_once() {
    let world = GithubWorld::new().await;
    let repo = support::window::github_world::REPO;
    let cli = Cli {
        data_dir: world.data_dir.path(),
        keyring: &world.keyring,
    };
    world.fake.create_repo_with_files(
        repo,
        "main",
        &[(".handoff/agent.sh", support::pipeline_world::SCRIPTED_AGENT)],
    );
    cli.connect_scripted_repo(&world.fake, "local", &[]).await;
    ok_text(&cli.run(&["config", "set", "queue.slots", "1"]).await);
    ok_text(&cli.run(&["repo", "set", repo, "--quota", "10"]).await);
    // The first agent works long (for a time no other test uses).
    let mut items = vec![
        cli.add_feedback("Killed mid-run\n@@sleep 119\n@@write late.txt late")
            .await,
    ];
    for title in ["Second", "Third"] {
        items.push(
            cli.add_feedback(&format!("{title}\n@@write {title}.txt ok"))
                .await,
        );
    }
    // Signed in already (the command line's sign-in is in the keyring).
    let app = AppSession::start_with_env(
        world.data_dir.path(),
        &[("DBUS_SESSION_BUS_ADDRESS", world.keyring.bus_address())],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let mut driver = cli
        .command(&["queue", "add", "--all-new", repo])
        .spawn()
        .unwrap();
    let first_item = handoff::domain::FeedbackId(items[0].parse().unwrap());
    let killed = first_run_whose_agent_started(&world.store, first_item).await;
    std::process::Command::new("kill")
        .args(["-KILL", &driver.id().unwrap().to_string()])
        .status()
        .unwrap();
    driver.wait().await.unwrap();

    // The window alone: the killed run fails with why, the waiting ones open their PRs.
    let failed = app
        .eventually_within(
            Duration::from_secs(30),
            &column_of(items[0].parse().unwrap()),
            |value| value == "FAILED",
        )
        .await;
    assert_eq!(failed, "FAILED");
    for item in &items[1..] {
        let reviewed = app
            .eventually_within(
                Duration::from_secs(60),
                &column_of(item.parse().unwrap()),
                |value| value == "WAITING_FOR_REVIEW",
            )
            .await;
        assert_eq!(reviewed, "WAITING_FOR_REVIEW", "feedback {item}");
    }
    let toast = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('\\n');",
            "ended without finishing it",
        )
        .await;
    assert!(toast.contains(&format!("Run {}", killed.id.0)), "{toast}");
    assert_eq!(world.fake.pulls(repo).len(), 2);
    let ended = world.store.runs().run(killed.id).await.unwrap();
    assert_eq!(
        ended.failure_code,
        Some(handoff::domain::RunFailureCode::Abandoned)
    );
    let quota = world
        .store
        .spend()
        .quota_status(ended.repo_id, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(
        quota.used, 3,
        "one for the run that died, one each for the two that ran"
    );
}

/// The run of `item` once its agent has started.
async fn first_run_whose_agent_started(
    store: &Store,
    item: handoff::domain::FeedbackId,
) -> handoff::domain::Run {
    eventually("the first run's agent starts", || async {
        let runs = store
            .runs()
            .runs(&handoff::store::RunFilter {
                feedback_id: Some(item),
                active_only: true,
                limit: None,
            })
            .await
            .unwrap();
        let run = runs.into_iter().next()?;
        let log = store.runs().run_log(run.id, 0).await.unwrap();
        log.iter()
            .any(|chunk| chunk.text.contains("the agent starts"))
            .then_some(run)
    })
    .await
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
        .feedback()
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
