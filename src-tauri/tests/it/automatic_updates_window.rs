//! Automatic updates in the window: the repository setting turned on (and a bad number
//! of attempts refused, the PRs' labels and reviewers set beside it), a failing GitHub Actions check found by "Sync now" starts an
//! Update PR that says why in a toast, in its run and in its item's panel, and the same
//! failure again stops the loop, which the panel and a toast say; and once the base
//! branch moves under it, the card and the panel say the PR conflicts.

use handoff_test_support as support;

use handoff::domain::{AutomaticDecision, FeedbackId, FeedbackStatus, RunStatus};
use handoff::store::RunFilter;
use handoff::Store;
use support::eventually::eventually;
use support::seed;
use support::window::github_world::{connected_repo, open_card, GithubWorld, REPO};
use support::window::AppSession;

const TOASTS: &str =
    "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');";

/// A GitHub Actions log with a time stamp on every line.
fn failing_log(at: &str) -> String {
    format!("{at} running the tests\n{at} error: expected 48px, got 20px\n")
}

/// Waits until item `feedback_id` has `runs` runs, all ended, and returns them.
async fn runs_ended(
    store: &Store,
    feedback_id: FeedbackId,
    runs: usize,
) -> Vec<handoff::domain::Run> {
    eventually(&format!("the item's {runs} runs end"), || async {
        let found = store
            .runs()
            .runs(&RunFilter {
                feedback_id: Some(feedback_id),
                ..RunFilter::default()
            })
            .await
            .unwrap();
        (found.len() == runs && found.iter().all(|run| !run.status.is_active())).then_some(found)
    })
    .await
}

async fn sync_from_the_window(app: &AppSession) {
    app.click("#sync-now").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_check_updates_the_pr_by_itself_says_why_and_stops_at_the_same_failure() {
    let world = GithubWorld::new().await;
    let repo = connected_repo(&world.fake, &world.store, "@@append hello.txt hello").await;
    let item =
        seed::add_feedback(&world.store, REPO, "Greeting too small", "Make it bigger.").await;
    let app = world.open_signed_in_window().await;

    // The first run opens the PR.
    open_card(&app, item.id.0).await;
    app.click("#detail .update-button").await;
    let first = runs_ended(&world.store, item.id, 1).await;
    assert_eq!(first[0].status, RunStatus::Succeeded, "{first:?}");
    let number = world
        .store
        .feedback()
        .feedback(item.id)
        .await
        .unwrap()
        .pr_number
        .unwrap();

    // Turned on in the repository's settings; 0 attempts a day is refused.
    app.click("#open-settings").await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;
    app.click(".repo-form input[name=automaticUpdates]").await;
    app.type_into(".repo-form input[name=automaticAttemptsPerDay]", "0")
        .await;
    app.click(".save-repo").await;
    app.text_eventually_containing(
        "const e = document.querySelector('.repo-form .form-error'); return e && !e.hidden ? e.textContent : '';",
        "at least 1",
    )
    .await;
    assert!(
        !world
            .store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .automatic_updates,
        "nothing saved"
    );
    app.type_into(".repo-form input[name=automaticAttemptsPerDay]", "3")
        .await;
    // Labels and reviewers for the PRs Handoff opens, in the same form.
    app.type_into(
        ".repo-form input[name=pullRequestLabels]",
        "handoff, needs review",
    )
    .await;
    app.type_into(
        ".repo-form input[name=pullRequestReviewers]",
        "@alice, octocat/core",
    )
    .await;
    app.click(".save-repo").await;
    app.text_eventually_containing(TOASTS, &format!("Saved {REPO}"))
        .await;
    let saved = world.store.repositories().repo(repo.id).await.unwrap();
    assert!(saved.automatic_updates);
    assert_eq!(saved.automatic_attempts_per_day, 3);
    assert_eq!(saved.pull_request_labels, ["handoff", "needs review"]);
    assert_eq!(
        saved
            .pull_request_reviewers
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["alice", "octocat/core"]
    );
    app.click("#settings-close").await;

    // A failing Actions check: Sync now starts an Update PR, and says why.
    let head = world.fake.pull_head_sha(REPO, number);
    world.fake.add_failed_actions_job(
        REPO,
        &head,
        "test",
        "1 test failed",
        &failing_log("2026-12-02T10:00:00.1234567Z"),
    );
    sync_from_the_window(&app).await;
    let because = format!(
        "the check \"test\" failed on {} of PR #{number}",
        &head[..7]
    );
    app.text_eventually_containing(
        TOASTS,
        &format!("Automatic update started (feedback {}): {because}", item.id),
    )
    .await;
    let runs = runs_ended(&world.store, item.id, 2).await;
    let automatic = runs
        .iter()
        .find(|run| run.started_because.is_some())
        .expect("an automatic run");
    assert_eq!(automatic.status, RunStatus::Succeeded, "{automatic:?}");
    assert_eq!(automatic.started_because.as_deref(), Some(because.as_str()));

    // The same failure on the updated PR stops the loop.
    let new_head = world.fake.pull_head_sha(REPO, number);
    assert_ne!(new_head, head);
    world.fake.add_failed_actions_job(
        REPO,
        &new_head,
        "test",
        "1 test failed",
        &failing_log("2026-12-02T10:31:07.7654321Z"),
    );
    sync_from_the_window(&app).await;
    app.text_eventually_containing(TOASTS, "Automatic updates stopped")
        .await;
    let history = world
        .store
        .automatic_updates()
        .automatic_updates_of(item.id)
        .await
        .unwrap();
    assert_eq!(
        history
            .iter()
            .map(|update| update.decision)
            .collect::<Vec<_>>(),
        [AutomaticDecision::Started, AutomaticDecision::Stopped]
    );

    // The panel says it all: the stop, the started update, the run's reason and the
    // follow-up Handoff wrote.
    open_card(&app, item.id.0).await;
    let section = app
        .text_eventually_containing(
            "const s = document.querySelector('#detail .automatic-updates'); return s ? s.textContent : '';",
            "Stopped",
        )
        .await;
    assert!(section.contains("Handoff stopped trying it"), "{section}");
    assert!(
        section.contains(&format!("Update PR started {because}")),
        "{section}"
    );
    let run_reason = app
        .text_eventually_containing(
            &format!(
                "const p = document.querySelector('#detail .run[data-run-id=\"{}\"] .run-started-because'); return p ? p.textContent : '';",
                automatic.id
            ),
            "Started by itself",
        )
        .await;
    assert_eq!(run_reason, format!("Started by itself: {because}."));
    let authors = app.texts("#detail .owner-list .thread-meta strong").await;
    assert!(
        authors
            .iter()
            .any(|author| author == "Handoff, for an automatic update"),
        "{authors:?}"
    );
    assert_eq!(
        world
            .store
            .feedback()
            .feedback(item.id)
            .await
            .unwrap()
            .status,
        FeedbackStatus::WaitingForReview
    );

    // Someone changes the same file on the base branch: the card and the panel say the
    // PR conflicts (an Update PR does not rebase).
    world.fake.push_commit(
        REPO,
        "main",
        "Greet in French",
        &[("hello.txt", "bonjour\n")],
    );
    sync_from_the_window(&app).await;
    let card = format!(".card[data-feedback-id=\"{}\"] .conflict-badge", item.id);
    let shown = app
        .eventually(
            &format!(
                "const b = document.querySelector('{}'); return b ? !b.hidden : false;",
                card.replace('\'', "\\'")
            ),
            |value| value == true,
        )
        .await;
    assert_eq!(shown, true, "the card says its PR conflicts");
    open_card(&app, item.id.0).await;
    let line = app
        .text_eventually_containing(
            "const p = document.querySelector('#detail .pr-conflicts'); return p ? p.textContent : '';",
            "conflicts with its base branch",
        )
        .await;
    assert!(
        line.starts_with(&format!("PR #{number} conflicts")),
        "{line}"
    );
    app.text_eventually_containing(
        "const s = document.querySelector('#detail .automatic-updates'); return s ? s.textContent : '';",
        "Stopped",
    )
    .await;
    // The picture shows the panel, not the toasts over it.
    app.client
        .execute(
            "document.querySelectorAll('.toast .toast-close').forEach((b) => b.click()); \
             document.querySelector('#detail .pr-conflicts').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .expect("the toasts are closed");
    app.screenshot("automatic-updates").await;
    app.close().await;
}
