//! End to end: the real `handoff-desktop` window, driven through tauri-driver and
//! WebKitWebDriver under Xvfb, shows what the store holds.

use handoff_test_support as support;

use fantoccini::Locator;
use handoff::Store;
use serde_json::Value;
use support::seed;
use support::window::AppSession;

const COLUMNS_SCRIPT: &str = "return [...document.querySelectorAll('.column')].map(c => ({ \
    status: c.dataset.status, \
    title: c.querySelector('.column-title').textContent, \
    count: c.querySelector('.column-count').textContent, \
    cards: [...c.querySelectorAll('.card')].map(card => ({ \
        title: card.querySelector('.card-title').textContent, \
        repo: card.querySelector('.card-repo').textContent, \
        pr: card.querySelector('.pr-link').hidden ? null : card.querySelector('.pr-link').textContent, \
        followUps: card.querySelector('.follow-ups').textContent \
    })) }));";

fn column<'a>(columns: &'a Value, status: &str) -> &'a Value {
    columns
        .as_array()
        .unwrap()
        .iter()
        .find(|column| column["status"] == status)
        .unwrap_or_else(|| panic!("no {status} column in {columns}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn dashboard_shows_cards_grouped_by_status() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let columns = app.client.execute(COLUMNS_SCRIPT, vec![]).await.unwrap();
    let statuses: Vec<_> = columns
        .as_array()
        .unwrap()
        .iter()
        .map(|column| column["title"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        statuses,
        ["New", "Coding", "Waiting for review", "Failed", "Merged"]
    );
    for status in ["NEW", "CODING", "WAITING_FOR_REVIEW", "FAILED", "MERGED"] {
        assert_eq!(column(&columns, status)["count"], "1", "{status}");
    }

    let waiting = &column(&columns, "WAITING_FOR_REVIEW")["cards"][0];
    assert_eq!(waiting["title"], seed::WAITING_TITLE);
    assert_eq!(waiting["repo"], seed::DEMO_REPO);
    assert_eq!(waiting["pr"], "#7 open");
    assert_eq!(waiting["followUps"], "2 follow-ups");
    let merged = &column(&columns, "MERGED")["cards"][0];
    assert_eq!(merged["pr"], "#3 merged");
    let new = &column(&columns, "NEW")["cards"][0];
    assert_eq!(new["title"], seed::NEW_TITLE);
    assert_eq!(new["pr"], Value::Null);

    let summary = app.client.find(Locator::Id("summary")).await.unwrap();
    assert_eq!(summary.text().await.unwrap(), "5 items");

    app.screenshot("dashboard").await;
    app.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_says_where_its_run_went_when_not_to_the_repositorys_sandbox() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    seed::add_repo(&store, seed::DEMO_REPO).await;
    let at_home = seed::add_feedback(&store, seed::DEMO_REPO, "Ran in Docker", "Body.").await;
    seed::run_to_end(&store, &at_home, seed::success(0.10)).await;
    let overflowed = seed::add_feedback(
        &store,
        seed::DEMO_REPO,
        "Sent to E2B while Docker was full",
        "Body.",
    )
    .await;
    seed::run_to_end_on(
        &store,
        &overflowed,
        seed::success(0.20),
        handoff::domain::SandboxBackend::E2b,
    )
    .await;

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    let elsewhere = |id: i64| {
        format!(
            "const s = document.querySelector('.card[data-feedback-id=\"{id}\"] .run-elsewhere'); \
             return s ? [s.textContent, s.title] : null;"
        )
    };
    let marked = app
        .client
        .execute(&elsewhere(overflowed.id.0), vec![])
        .await
        .unwrap();
    assert_eq!(
        marked,
        serde_json::json!([
            " · on E2B",
            "This run went to E2B, not to the repository's Docker"
        ])
    );
    let unmarked = app
        .client
        .execute(&elsewhere(at_home.id.0), vec![])
        .await
        .unwrap();
    assert_eq!(
        unmarked,
        Value::Null,
        "a run in the repository's own sandbox"
    );
    app.screenshot("card-run-elsewhere").await;
    app.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn search_narrows_the_board_and_new_feedback_appears_without_a_reload() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let search = app.client.find(Locator::Id("search")).await.unwrap();
    search.send_keys("pricing").await.unwrap();
    let titles = app
        .eventually(
            "return [...document.querySelectorAll('.card-title')].map(t => t.textContent);",
            |value| value.as_array().is_some_and(|titles| titles.len() == 1),
        )
        .await;
    assert_eq!(titles, serde_json::json!([seed::WAITING_TITLE]));
    search.clear().await.unwrap();

    // Another writer (here the library, as the CLI would) adds an item: the board follows.
    let added = seed::add_feedback(
        &store,
        seed::DEMO_REPO,
        "Added while the window is open",
        "Body.",
    )
    .await;
    let count = app
        .eventually(
            "return document.querySelectorAll('.card').length;",
            |value| value == 6,
        )
        .await;
    assert_eq!(count, 6, "feedback {} appeared", added.id);
    app.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn untrusted_text_is_shown_as_text_not_markup() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    seed::add_repo(&store, seed::DEMO_REPO).await;
    let hostile = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>";
    seed::add_feedback(&store, seed::DEMO_REPO, hostile, "Body.").await;

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let title = app
        .client
        .execute(
            "return document.querySelector('.card-title').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(title, hostile);
    let injected = app
        .client
        .execute(
            "return document.querySelectorAll('.card img, .card b').length;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(injected, 0);
    assert_eq!(app.client.title().await.unwrap(), "Handoff");
    app.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_database_is_explained_in_the_window_and_left_alone() {
    let data_dir = tempfile::tempdir().unwrap();
    let database = data_dir.path().join(handoff::store::DATABASE_FILE_NAME);
    std::fs::write(
        &database,
        b"this is not a database at all, but it is somebody's file",
    )
    .unwrap();

    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "error");

    let notice = app
        .client
        .execute(
            "const n = document.getElementById('notice'); \
             return { hidden: n.hidden, code: n.dataset.code, title: document.getElementById('notice-title').textContent };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(notice["hidden"], false);
    assert_eq!(notice["code"], "database_damaged");
    assert_eq!(notice["title"], "The database is damaged");
    app.close().await;
    assert_eq!(
        std::fs::read(&database).unwrap(),
        b"this is not a database at all, but it is somebody's file"
    );
}

/// How many cards the board has built since the window opened.
const CARDS_DRAWN: &str = "return Number(document.getElementById('board').dataset.cardsDrawn);";
/// The titles of the cards that still carry the mark put on every card element.
const MARKED_CARDS: &str = "return [...document.querySelectorAll('.card')].filter(c => c.handoffMark === true).map(c => c.querySelector('.card-title').textContent).sort();";

#[tokio::test(flavor = "multi_thread")]
async fn a_heartbeat_draws_nothing_and_a_changed_item_draws_only_its_card() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    let drawn = app.client.execute(CARDS_DRAWN, vec![]).await.unwrap();
    assert_eq!(drawn, 5, "one card built per item");
    app.client
        .execute(
            "document.querySelectorAll('.card').forEach(c => { c.handoffMark = true; }); return null;",
            vec![],
        )
        .await
        .unwrap();
    let mut all_titles: Vec<String> = items.iter().map(|item| item.title.clone()).collect();
    all_titles.sort();

    // The coding item's run shows it is alive and writes its log; then another process
    // adds a follow-up to one item. The window reads the mirror's changes in order, so
    // once that item's card is drawn again, the heartbeats and log lines before it were
    // read too: only the one card was drawn again.
    let coding = items
        .iter()
        .find(|item| item.title == seed::CODING_TITLE)
        .unwrap();
    let run = seed::active_run(&store, coding).await;
    for line in 0..6 {
        store.runs().heartbeat(run.id).await.unwrap();
        store
            .runs()
            .append_run_log(
                run.id,
                handoff::domain::LogStream::Stdout,
                &format!("working {line}\n"),
            )
            .await
            .unwrap();
    }

    // Another process adds a follow-up to one item: only its card is drawn again.
    let new = items
        .iter()
        .find(|item| item.title == seed::NEW_TITLE)
        .unwrap();
    store
        .feedback()
        .add_owner_follow_up(new.id, "Also the login page.")
        .await
        .unwrap();
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
    assert_eq!(
        app.client.execute(CARDS_DRAWN, vec![]).await.unwrap(),
        6,
        "heartbeats and log lines drew no card; the follow-up drew its own"
    );
    let others: Vec<&String> = all_titles
        .iter()
        .filter(|title| title.as_str() != seed::NEW_TITLE)
        .collect();
    assert_eq!(
        app.client.execute(MARKED_CARDS, vec![]).await.unwrap(),
        serde_json::json!(others),
        "the other cards kept their elements"
    );
    app.close().await;
    store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_board_draws_each_columns_newest_cards_and_more_as_it_scrolls() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    seed::add_repo(&store, seed::DEMO_REPO).await;
    for number in 0..250 {
        seed::add_feedback(&store, seed::DEMO_REPO, &format!("Idea {number}"), "More.").await;
    }
    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    let new_column = "document.querySelector('.column[data-status=NEW]')";
    let shown = app
        .client
        .execute(
            &format!(
                "const c = {new_column}; return [c.querySelector('.column-count').textContent, \
                 c.querySelectorAll('.card').length, c.querySelector('.cards-more').textContent, \
                 c.querySelector('.card .card-title').textContent];"
            ),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        shown,
        serde_json::json!(["250", 60, "60 of 250 shown; more as you scroll", "Idea 249"]),
        "the newest 60 of 250 first"
    );
    app.client
        .execute(
            &format!("const l = {new_column}.querySelector('.cards'); l.scrollTop = l.scrollHeight; return null;"),
            vec![],
        )
        .await
        .unwrap();
    let more = app
        .eventually(
            &format!("return {new_column}.querySelectorAll('.card').length;"),
            |value| value.as_u64().is_some_and(|count| count >= 120),
        )
        .await;
    assert_eq!(more, 120, "one more step of 60 cards");
    app.screenshot("board-many-items").await;
    assert_eq!(
        app.client
            .execute(
                "return Number(document.getElementById('board').dataset.cardsDrawn);",
                vec![]
            )
            .await
            .unwrap(),
        120,
        "the first 60 kept their elements"
    );
    app.close().await;
    store.close().await;
}
