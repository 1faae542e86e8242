//! The window for people who use a keyboard or a screen reader: axe-core runs in the
//! real window on every view (the board, an item's details, the pull requests, a PR's
//! workspace, each tab of Settings, and the dialogs) and finds no serious or critical
//! violation, with a card in every column but Merged; the report is written to `target/accessibility/report.md` (and kept in
//! docs/accessibility.md). The keyboard shortcuts move between cards and open what the
//! shortcuts dialog lists.

use handoff_test_support as support;

use support::fake_github::OWNER;
use support::seed;
use support::window::accessibility::AccessibilityReport;
use support::window::github_world::{connected_repo, open_workspace, GithubWorld, REPO};
use support::window::AppSession;

/// Presses `key` on whatever has the keyboard. The board draws its cards anew when
/// the mirror changes, so the element that had the keyboard may be gone by the time
/// the key is sent, or even while it is being found: the key then goes to whatever
/// has it now.
async fn press(app: &AppSession, key: &str) {
    for _ in 0..5 {
        // Finding the element can meet the redraw as well as pressing on it can.
        let pressed = match app.client.active_element().await {
            Ok(focused) => focused.send_keys(key).await,
            Err(error) => Err(error),
        };
        match pressed {
            Ok(()) => return,
            Err(fantoccini::error::CmdError::Standard(error))
                if error.error == fantoccini::error::ErrorStatus::StaleElementReference =>
            {
                continue
            }
            Err(error) => panic!("the key is not pressed: {error}"),
        }
    }
    panic!("the element with the keyboard kept being replaced");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_view_passes_axe_without_a_serious_violation() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, "").await;
    world.fake.create_branch(REPO, "feature/signup", "main");
    world.fake.push_commit(
        REPO,
        "feature/signup",
        "Signup button",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    let number = world.fake.create_pull(
        REPO,
        OWNER,
        "feature/signup",
        "Make the signup button bigger",
    );
    let item = seed::add_feedback(
        &world.store,
        REPO,
        "Signup button is too small",
        "On a phone the signup button is hard to hit.",
    )
    .await;
    // Cards in the other columns too, so that every status colour is checked: a run
    // going, one that succeeded (with its cost), one that failed (with its reason).
    let coding = seed::add_feedback(&world.store, REPO, "Dark mode", "Follow the system.").await;
    seed::start_run(&world.store, &coding).await;
    let waiting = seed::add_feedback(&world.store, REPO, "Typo", "In the pricing table.").await;
    seed::run_to_end(&world.store, &waiting, seed::success(0.42)).await;
    let failed = seed::add_feedback(&world.store, REPO, "CSV export", "Drops a row.").await;
    seed::run_to_end(
        &world.store,
        &failed,
        seed::failure("the agent exited with code 1"),
    )
    .await;
    let app = world.open_signed_in_window().await;
    let mut report = AccessibilityReport::default();

    report.check(&app, "Board").await;
    app.click(&format!(
        ".card[data-feedback-id=\"{}\"] .card-open",
        item.id.0
    ))
    .await;
    app.eventually("return !document.getElementById('detail').hidden;", |v| {
        v == true
    })
    .await;
    report.check(&app, "Details of an item").await;
    app.click(&format!(
        ".card[data-feedback-id=\"{}\"] .card-open",
        failed.id.0
    ))
    .await;
    app.eventually(
        &format!(
            "return document.getElementById('detail').dataset.feedbackId === '{}';",
            failed.id.0
        ),
        |v| v == true,
    )
    .await;
    report.check(&app, "Details of a failed item").await;

    app.click("#new-feedback").await;
    app.eventually(
        "return document.getElementById('feedback-dialog').open;",
        |v| v == true,
    )
    .await;
    report.check(&app, "New feedback dialog").await;
    app.click("#feedback-cancel").await;

    app.click("#open-shortcuts").await;
    app.eventually(
        "return document.getElementById('shortcuts-dialog').open;",
        |v| v == true,
    )
    .await;
    report.check(&app, "Keyboard shortcuts dialog").await;
    app.click("#shortcuts-close").await;

    app.click("#session").await;
    report.check(&app, "Account menu").await;
    app.click("#session").await;

    for (tab, view) in [
        ("repositories", "Settings: Repositories"),
        ("keys", "Settings: Keys"),
        ("spend", "Settings: Spend"),
        ("setup", "Settings: Check setup"),
        ("log", "Settings: Log"),
        ("updates", "Settings: Updates"),
    ] {
        if tab == "repositories" {
            app.click("#open-settings").await;
        } else {
            app.click(&format!("#settings-dialog .tab[data-tab=\"{tab}\"]"))
                .await;
        }
        app.eventually(
            &format!(
                "return document.getElementById('settings-dialog').dataset.tab === '{tab}' \
                 && document.getElementById('{tab}-panel').children.length > 0;"
            ),
            |v| v == true,
        )
        .await;
        report.check(&app, view).await;
    }
    app.click("#settings-close").await;

    open_workspace(&app, number).await;
    report.check(&app, "Pull request workspace").await;
    app.click("#pr-workspace .back").await;
    report.check(&app, "Pull requests").await;

    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/accessibility");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("report.md"), report.markdown()).unwrap();
    let serious = report.serious();
    assert!(
        serious.is_empty(),
        "serious or critical accessibility violations:\n{}",
        report.markdown()
    );
    assert_eq!(report.views.len(), 14, "every view was checked");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_keyboard_moves_between_cards_and_opens_what_the_shortcuts_say() {
    let data_dir = tempfile::tempdir().unwrap();
    let store = handoff::Store::open_in(data_dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;
    let app = AppSession::start(data_dir.path()).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    const OPEN_ITEM: &str = "const d = document.getElementById('detail'); \
                             return d.hidden ? null : d.querySelector('.detail-title').textContent;";
    const FOCUSED_CARD: &str = "const c = document.activeElement.closest('.card'); \
                                return c ? c.querySelector('.card-title').textContent : null;";
    let first = app
        .client
        .execute(
            "return document.querySelector('#board .card .card-title').textContent;",
            vec![],
        )
        .await
        .unwrap();
    let second = app
        .client
        .execute(
            "return document.querySelectorAll('#board .card .card-title')[1].textContent;",
            vec![],
        )
        .await
        .unwrap();

    // j opens the first card, j again the next, k goes back; the card keeps the keyboard.
    press(&app, "j").await;
    assert_eq!(app.eventually(OPEN_ITEM, |v| v == &first).await, first);
    press(&app, "j").await;
    assert_eq!(app.eventually(OPEN_ITEM, |v| v == &second).await, second);
    assert_eq!(app.eventually(FOCUSED_CARD, |v| v == &second).await, second);
    press(&app, "k").await;
    assert_eq!(app.eventually(OPEN_ITEM, |v| v == &first).await, first);

    // Enter on a card's button opens it, like a click.
    app.client
        .execute(
            "document.querySelectorAll('#board .card .card-open')[1].focus(); return null;",
            vec![],
        )
        .await
        .unwrap();
    press(&app, "\u{e007}").await;
    assert_eq!(app.eventually(OPEN_ITEM, |v| v == &second).await, second);

    // ? lists the shortcuts; n opens New feedback; / puts the keyboard in the search.
    press(&app, "?").await;
    assert_eq!(
        app.eventually(
            "return document.getElementById('shortcuts-dialog').open;",
            |v| v == true
        )
        .await,
        true
    );
    let listed = app.texts("#shortcuts-dialog dt").await;
    assert!(listed.len() >= 8, "{listed:?}");
    app.screenshot("keyboard-shortcuts").await;
    app.click("#shortcuts-close").await;
    press(&app, "n").await;
    assert_eq!(
        app.eventually(
            "return document.getElementById('feedback-dialog').open;",
            |v| v == true
        )
        .await,
        true
    );
    app.click("#feedback-cancel").await;
    press(&app, "/").await;
    assert_eq!(
        app.eventually("return document.activeElement.id;", |v| v == "search")
            .await,
        "search"
    );
    // Typing in the search is typing, not shortcuts: "j" goes into the field.
    press(&app, "j").await;
    assert_eq!(
        app.client
            .execute("return document.getElementById('search').value;", vec![])
            .await
            .unwrap(),
        "j"
    );
}
