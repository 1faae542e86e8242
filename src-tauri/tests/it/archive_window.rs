//! Items off the board in the window: Dismiss and Archive in the detail panel take an
//! item off the board, the status filter's "Off the board" finds it with why, and "Put
//! back on the board" brings it back; an item with a run going cannot be put away.

use handoff_test_support as support;

use handoff::domain::ArchiveState;
use handoff::Store;
use serde_json::Value;
use support::eventually::eventually_true;
use support::seed;
use support::window::github_world::open_card;
use support::window::AppSession;

fn card_shown(feedback_id: i64) -> String {
    format!("return document.querySelector('.card[data-feedback-id=\"{feedback_id}\"]') !== null;")
}

/// Why item `feedback_id` is off the board, as the store has it.
async fn archived_as(store: &Store, feedback_id: i64) -> Option<ArchiveState> {
    store
        .feedback()
        .feedback(handoff::domain::FeedbackId(feedback_id))
        .await
        .unwrap()
        .archived_as
}

async fn choose_status(app: &AppSession, value: &str) {
    app.client
        .execute(
            "const s = document.getElementById('status-filter'); s.value = arguments[0]; \
             s.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![Value::String(value.to_owned())],
        )
        .await
        .expect("the filter is chosen");
}

#[tokio::test(flavor = "multi_thread")]
async fn dismiss_and_archive_take_items_off_the_board_and_a_filter_finds_them() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    let id_of = |title: &str| items.iter().find(|item| item.title == title).unwrap().id.0;
    let (new, failed, coding) = (
        id_of(seed::NEW_TITLE),
        id_of(seed::FAILED_TITLE),
        id_of(seed::CODING_TITLE),
    );
    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");

    // An item with a run going cannot be put away.
    open_card(&app, coding).await;
    let disabled = app
        .eventually(
            "const b = document.querySelector('#detail .archive-item'); return b ? b.disabled : null;",
            |value| value.is_boolean(),
        )
        .await;
    assert_eq!(disabled, true);

    // Dismiss one, archive another: both leave the board.
    open_card(&app, new).await;
    app.click("#detail .dismiss-item").await;
    assert_eq!(
        app.eventually(&card_shown(new), |value| value == false)
            .await,
        false
    );
    open_card(&app, failed).await;
    app.click("#detail .archive-item").await;
    assert_eq!(
        app.eventually(&card_shown(failed), |value| value == false)
            .await,
        false
    );
    assert_eq!(
        archived_as(&store, failed).await,
        Some(ArchiveState::Archived)
    );
    assert_eq!(
        archived_as(&store, new).await,
        Some(ArchiveState::Dismissed)
    );

    // "Off the board" shows them, each saying why, in its status's column.
    choose_status(&app, "archived").await;
    assert_eq!(
        app.eventually(&card_shown(new), |value| value == true)
            .await,
        true
    );
    let badges = app.texts(".card .archived-badge").await;
    let mut badges: Vec<_> = badges.into_iter().filter(|text| !text.is_empty()).collect();
    badges.sort();
    assert_eq!(badges, ["Archived", "Dismissed"]);
    assert_eq!(app.eventually(&card_shown(coding), |_| true).await, false);
    app.screenshot("off-the-board").await;

    // Put back on the board.
    open_card(&app, new).await;
    app.text_eventually_containing(
        "const p = document.querySelector('#detail .off-the-board'); return p ? p.textContent : '';",
        "Dismissed",
    )
    .await;
    app.click("#detail .restore-item").await;
    // The restore is done once the mirror says so; only then is the board asked for
    // again (before, the off-the-board board still on screen holds the card too).
    eventually_true("the item is back on the board in the mirror", || async {
        archived_as(&store, new).await.is_none()
    })
    .await;
    choose_status(&app, "").await;
    // The board on screen is the one on the board (the coding item is on it, not off it),
    // and the restored item is on it.
    let both_shown = format!(
        "return document.querySelector('.card[data-feedback-id=\"{new}\"]') !== null \
         && document.querySelector('.card[data-feedback-id=\"{coding}\"]') !== null;"
    );
    assert_eq!(
        app.eventually(&both_shown, |value| value == true).await,
        true
    );
    assert_eq!(
        store
            .feedback()
            .archive_history(handoff::domain::FeedbackId(new))
            .await
            .unwrap()
            .len(),
        2
    );
}
