//! The board with 10,000 feedback items (and their runs), in the real window: the
//! release build of `handoff-desktop` under Xvfb, driven through tauri-driver and
//! WebKitWebDriver. The page measures each board load itself with `performance.now()`:
//! from asking the store to the first task after the next frame, so the store's query,
//! the answer crossing into the page, the drawing, the layout and the paint are in it.
//!
//! - the store's answer alone reaching the page (the command's round trip, nothing drawn);
//! - no work at all, measured the same way to the next painted frame (WebKit's own wait);
//! - the first board after the window opens;
//! - a board load when nothing changed (the filter chosen again);
//! - the load that a change to one item causes (a follow-up added by another process);
//! - the next step of a column scrolled to its end (60 more cards);
//! - beside them, the store's query alone, for the first screen and for every card.
//!
//! Run: `cargo bench -p handoff-desktop --bench board_items`.
//! Figures: benches/results/board_items.md.

use std::time::{Duration, Instant};

use handoff::domain::{FeedbackStatus, PullRequestState};
use handoff::store::{FeedbackFilter, RepoSettingsChange};
use handoff::Store;
use handoff_test_support::seed;
use handoff_test_support::window::AppSession;
use serde_json::Value;

const ITEMS: usize = 10_000;
const ROUNDS: usize = 10;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// 10,000 items in two repositories: 4,000 new, 3,000 waiting for review with a PR and
/// a run, 1,500 failed, 1,400 merged, 100 coding.
async fn seed_items(store: &Store) {
    for name in [seed::DEMO_REPO, seed::SECOND_REPO] {
        let repo = seed::add_repo(store, name).await;
        // Thousands of runs this month: no quota.
        store
            .repositories()
            .change_repo_settings(
                repo.id,
                &RepoSettingsChange {
                    monthly_run_quota: Some(None),
                    ..RepoSettingsChange::default()
                },
            )
            .await
            .unwrap();
    }
    for number in 0..ITEMS {
        let repo = if number % 3 == 0 {
            seed::SECOND_REPO
        } else {
            seed::DEMO_REPO
        };
        let item = seed::add_feedback(
            store,
            repo,
            &format!("Feedback item {number}: the settings page forgets the theme"),
            "It goes back to light after a restart.",
        )
        .await;
        match number % 100 {
            0..40 => {}
            40..70 => {
                seed::run_to_end(store, &item, seed::success(0.12)).await;
                store
                    .feedback()
                    .record_pull_request(
                        item.id,
                        number as u64,
                        "https://github.com/octocat/hello-world/pull/1",
                    )
                    .await
                    .unwrap();
            }
            70..85 => {
                seed::run_to_end(store, &item, seed::failure("the agent changed nothing")).await
            }
            85..99 => {
                seed::run_to_end(store, &item, seed::success(0.2)).await;
                store
                    .feedback()
                    .record_pull_request(
                        item.id,
                        number as u64,
                        "https://github.com/octocat/hello-world/pull/1",
                    )
                    .await
                    .unwrap();
                store
                    .feedback()
                    .apply_pull_request_state(item.id, PullRequestState::Merged)
                    .await
                    .unwrap();
            }
            _ => seed::start_run(store, &item).await,
        }
    }
}

async fn number(app: &AppSession, script: &str) -> f64 {
    match app.client.execute(script, vec![]).await.unwrap() {
        Value::String(text) => text.parse().unwrap_or(f64::NAN),
        Value::Number(number) => number.as_f64().unwrap_or(f64::NAN),
        other => panic!("not a number: {other}"),
    }
}

const LOADS: &str = "return Number(document.getElementById('board').dataset.loads ?? 0);";
const LOAD_MS: &str = "return document.getElementById('board').dataset.loadMs;";

const DRAW_MS: &str = "return document.getElementById('board').dataset.drawMs;";

/// One board load: until its DOM was drawn, and until it was laid out and painted.
#[derive(Clone, Copy)]
struct Load {
    drawn: f64,
    painted: f64,
}

/// Waits for the board's load number `after + 1` and returns how long it took.
async fn next_load(app: &AppSession, after: f64) -> Load {
    let deadline = Instant::now() + Duration::from_secs(30);
    while number(app, LOADS).await <= after {
        assert!(Instant::now() < deadline, "the board did not load again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Load {
        drawn: number(app, DRAW_MS).await,
        painted: number(app, LOAD_MS).await,
    }
}

/// "drawn X ms, painted Y ms" of the median loads.
fn loads_text(loads: &[Load]) -> String {
    let drawn = median(loads.iter().map(|load| load.drawn).collect());
    let painted = median(loads.iter().map(|load| load.painted).collect());
    format!("{drawn:.1} ms | {painted:.1} ms")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let store = Store::open_in(data.path()).await.unwrap();
        let seeding = Instant::now();
        seed_items(&store).await;
        eprintln!("seeded {ITEMS} items in {:?}", seeding.elapsed());
        let dashboard = store.feedback().dashboard(&FeedbackFilter::default()).await.unwrap();
        let per_status: Vec<(FeedbackStatus, usize)> = dashboard
            .groups
            .iter()
            .map(|group| (group.status, group.total))
            .collect();

        // The store's query alone.
        let mut first_screen = Vec::new();
        let mut every_card = Vec::new();
        for _ in 0..ROUNDS {
            let clock = Instant::now();
            store
                .feedback().dashboard_limited(&FeedbackFilter::default(), Some(60))
                .await
                .unwrap();
            first_screen.push(clock.elapsed().as_secs_f64() * 1000.0);
            let clock = Instant::now();
            store.feedback().dashboard(&FeedbackFilter::default()).await.unwrap();
            every_card.push(clock.elapsed().as_secs_f64() * 1000.0);
        }

        let app = AppSession::start(data.path()).await;
        assert_eq!(app.wait_until_loaded().await, "true");
        let first = next_load(&app, 0.0).await;
        let cards_shown = number(
            &app,
            "return document.querySelectorAll('#board .card').length;",
        )
        .await;

        // The store's answer alone, as it reaches the page (no drawing).
        let mut answer_alone = Vec::new();
        let mut answer_bytes = 0.0;
        for _ in 0..ROUNDS {
            let measured = app
                .client
                .execute_async(
                    "const done = arguments[arguments.length - 1]; const started = performance.now(); \
                     window.__TAURI__.core.invoke('dashboard', { query: { repo: '', status: '', search: '', cardsPerColumn: 60 } }) \
                       .then((board) => done([performance.now() - started, JSON.stringify(board).length]), () => done([-1, 0]));",
                    vec![],
                )
                .await
                .unwrap();
            answer_alone.push(measured[0].as_f64().unwrap());
            answer_bytes = measured[1].as_f64().unwrap();
        }

        // WebKit's own wait for a frame: the same measure around no work at all.
        let mut empty_frame = Vec::new();
        for _ in 0..ROUNDS {
            let measured = app
                .client
                .execute_async(
                    "const done = arguments[arguments.length - 1]; const started = performance.now(); \
                     requestAnimationFrame(() => setTimeout(() => done(performance.now() - started), 0));",
                    vec![],
                )
                .await
                .unwrap();
            empty_frame.push(measured.as_f64().unwrap());
        }

        // Nothing changed: the same filter chosen again.
        let mut unchanged = Vec::new();
        for _ in 0..ROUNDS {
            let loads = number(&app, LOADS).await;
            app.client
                .execute(
                    "document.getElementById('status-filter').dispatchEvent(new Event('change')); return null;",
                    vec![],
                )
                .await
                .unwrap();
            unchanged.push(next_load(&app, loads).await);
        }

        // One item changed by another process.
        let items: Vec<_> = store
            .feedback().feedback_list(&FeedbackFilter::default())
            .await
            .unwrap()
            .into_iter()
            .filter(|item| item.status == FeedbackStatus::New)
            .collect();
        let mut one_changed = Vec::new();
        for round in 0..ROUNDS {
            let loads = number(&app, LOADS).await;
            store
                .feedback().add_owner_follow_up(items[round * 7].id, "One more thing.")
                .await
                .unwrap();
            one_changed.push(next_load(&app, loads).await);
        }

        // A column scrolled to its end: its next 60 cards.
        let loads = number(&app, LOADS).await;
        app.client
            .execute(
                "const l = document.querySelector('.column[data-status=NEW] .cards'); l.scrollTop = l.scrollHeight; return null;",
                vec![],
            )
            .await
            .unwrap();
        let scrolled = next_load(&app, loads).await;
        app.close().await;

        println!("## The board with {ITEMS} items (median of {ROUNDS} where repeated)\n");
        println!("Items by status: {per_status:?}\n");
        println!("| what | to the answer or the drawn DOM | to the next painted frame |");
        println!("|---|---|---|");
        println!("| store: the first screen's query (60 cards a column, and each column's count) | {:.1} ms | |", median(first_screen));
        println!("| store: every card ({ITEMS}), as `handoff feedback list` asks | {:.1} ms | |", median(every_card));
        println!("| window: the store's answer for the first screen reaching the page, nothing drawn ({:.0} KB of JSON) | {:.1} ms | |", answer_bytes / 1024.0, median(answer_alone));
        println!("| window: no work at all, to the next painted frame (WebKit's own wait) | | {:.1} ms |", median(empty_frame));
        println!("| window: the first board ({cards_shown} cards drawn) | {} |", loads_text(&[first]));
        println!("| window: a board load when nothing changed | {} |", loads_text(&unchanged));
        println!("| window: the load one changed item causes (its card drawn again) | {} |", loads_text(&one_changed));
        println!("| window: a column scrolled to its end (60 more cards) | {} |", loads_text(&[scrolled]));
        store.close().await;
    });
}
