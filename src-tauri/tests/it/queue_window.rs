//! The run queue in the window: cards picked and run together wait in the queue, each
//! card says its place, the detail panel says it too and cancels a waiting run, "Run all
//! new…" queues every new item of a repository, a repository's own slots and its
//! overflow to E2B are set in its settings, and the installation's and each backend's
//! slots beside them.

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::{FeedbackId, RunStatus};
use handoff::store::{RunFilter, SettingKey};
use serde_json::Value;
use support::eventually::eventually_within;
use support::seed;
use support::window::github_world::{connected_repo, open_card, GithubWorld, REPO, RUN_LIMIT};

const TOASTS: &str =
    "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');";

fn card(feedback_id: i64) -> String {
    format!(".card[data-feedback-id=\"{feedback_id}\"]")
}

/// The text of card `feedback_id`'s queue badge, empty when it shows none.
fn badge_of(feedback_id: i64) -> String {
    format!(
        "const b = document.querySelector('{} .queue-place'); return b && !b.hidden ? b.textContent : '';",
        card(feedback_id).replace('\'', "\\'")
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn picked_cards_wait_in_the_queue_show_their_place_and_can_be_cancelled() {
    let world = GithubWorld::new().await;
    // Every run takes a few seconds, so the queue can be seen.
    let repo = connected_repo(&world.fake, &world.store, "@@sleep 6").await;
    world
        .store
        .settings()
        .set_setting(SettingKey::QueueSlots, "2")
        .await
        .unwrap();
    let titles = [
        "Signup button too small",
        "Dark mode forgets itself",
        "Typo on the pricing page",
        "Search ignores accents",
        "Export to CSV drops dates",
        "Avatar upload spins forever",
        "Footer links open twice",
    ];
    let mut items = Vec::new();
    for (index, title) in titles.iter().enumerate() {
        let item = seed::add_feedback(
            &world.store,
            REPO,
            title,
            &format!("What a visitor saw.\n@@write item-{index}.txt ok"),
        )
        .await;
        items.push(item.id.0);
    }
    let app = world.open_signed_in_window().await;

    // Pick five cards and run them together.
    for item in &items[..5] {
        let pick = format!("{} .card-pick input", card(*item));
        app.client
            .execute(
                "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' });",
                vec![Value::String(pick.clone())],
            )
            .await
            .expect("the card scrolls into view");
        app.click(&pick).await;
    }
    app.text_eventually_containing(
        "return document.getElementById('run-bar').hidden ? '' : document.getElementById('run-bar-count').textContent;",
        "5 items picked",
    )
    .await;
    app.click("#run-picked").await;
    app.text_eventually_containing(TOASTS, "5 runs queued")
        .await;

    // Two run, three wait; each waiting card says its place (once the board drawn
    // while the runs were still being queued is drawn again).
    for (item, place) in [(items[2], 1), (items[3], 2), (items[4], 3)] {
        let expected = format!("Queued · #{place}");
        let badge = app
            .eventually(&badge_of(item), |value| value == expected.as_str())
            .await;
        assert_eq!(badge, Value::String(expected));
    }
    // The first picked runs: once its turn came ("Starting") its card has no badge.
    assert_eq!(
        app.eventually(&badge_of(items[0]), |value| value == "")
            .await,
        ""
    );
    assert!(
        app.eventually(
            "return document.getElementById('run-bar').hidden;",
            |value| value == true
        )
        .await
            == true,
        "the bar goes once the picked cards run"
    );
    app.screenshot("queue").await;

    // The last waiting one is cancelled from its panel, which says its place.
    open_card(&app, items[4]).await;
    app.text_eventually_containing(
        "const p = document.querySelector('#detail .run-queue-place'); return p ? p.textContent : '';",
        "Waiting in the run queue: place 3",
    )
    .await;
    app.click("#detail .run[data-run-status=queued] .run-actions .danger")
        .await;
    let cancelled = app
        .eventually_within(
            Duration::from_secs(20),
            "const r = document.querySelector('#detail .run'); return r ? r.dataset.runStatus : '';",
            |value| value == "cancelled",
        )
        .await;
    assert_eq!(cancelled, "cancelled");

    // "Run all new…" queues the two items left, for the one repository that has them.
    app.click(".column[data-status=NEW] .run-all-new").await;
    app.click("#question-dialog [data-answer=\"octocat/hello-world\"]")
        .await;
    app.text_eventually_containing(TOASTS, "2 runs queued")
        .await;

    // Everything queued ends, one PR per item that ran.
    let runs = eventually_within(RUN_LIMIT * 2, "the queue empties", || async {
        let runs = world
            .store
            .runs()
            .runs(&RunFilter::default())
            .await
            .unwrap();
        (runs.len() == 7 && runs.iter().all(|run| !run.status.is_active())).then_some(runs)
    })
    .await;
    let statuses: Vec<_> = runs.iter().map(|run| run.status).collect();
    assert_eq!(
        statuses
            .iter()
            .filter(|status| **status == RunStatus::Succeeded)
            .count(),
        6,
        "{statuses:?}"
    );
    assert_eq!(world.fake.pulls(REPO).len(), 6);
    let cancelled_run = world
        .store
        .runs()
        .runs(&RunFilter {
            feedback_id: Some(FeedbackId(items[4])),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(cancelled_run[0].status, RunStatus::Cancelled);
    assert!(
        cancelled_run[0].sandbox_id.is_none(),
        "no sandbox was made for it"
    );

    // The repository's own slots and its overflow to E2B.
    app.click("#open-settings").await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;
    app.type_into(".repo-form input[name=runSlots]", "1").await;
    app.click(".repo-form input[name=overflowToE2b]").await;
    app.click(".save-repo").await;
    app.text_eventually_containing(TOASTS, &format!("Saved {REPO}"))
        .await;
    let saved = world.store.repositories().repo(repo.id).await.unwrap();
    assert_eq!(saved.run_slots, Some(1));
    assert!(saved.overflow_to_e2b);
    app.type_into(".repo-form input[name=runSlots]", "0").await;
    app.click(".save-repo").await;
    app.text_eventually_containing(
        "const e = document.querySelector('.repo-form .form-error'); return e && !e.hidden ? e.textContent : '';",
        "at least 1",
    )
    .await;
    assert_eq!(
        world
            .store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .run_slots,
        Some(1),
        "nothing changed"
    );

    // The installation's and the backends' slots, beside the repositories: a bad
    // number changes nothing, and empty means no limit of a backend's own.
    app.type_into(".queue-slots input[name=installation]", "0")
        .await;
    app.click(".save-queue-slots").await;
    app.text_eventually_containing(
        "const e = document.querySelector('.queue-slots .form-error'); return e && !e.hidden ? e.textContent : '';",
        "Runs at once: \"0\" is not a whole number of slots of at least 1",
    )
    .await;
    let setting = |key| {
        let store = world.store.clone();
        async move { store.settings().setting(key).await.unwrap() }
    };
    assert_eq!(setting(SettingKey::QueueSlots).await.as_deref(), Some("2"));
    app.type_into(".queue-slots input[name=installation]", "3")
        .await;
    app.type_into(".queue-slots input[name=docker]", "1").await;
    app.click(".save-queue-slots").await;
    app.text_eventually_containing(TOASTS, "Saved the run queue: 3 at once")
        .await;
    app.screenshot("queue-slots").await;
    assert_eq!(setting(SettingKey::QueueSlots).await.as_deref(), Some("3"));
    assert_eq!(
        setting(SettingKey::QueueSlotsDocker).await.as_deref(),
        Some("1")
    );
    assert_eq!(setting(SettingKey::QueueSlotsE2b).await, None);
}
