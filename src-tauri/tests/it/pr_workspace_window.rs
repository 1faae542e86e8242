//! End to end: the pull requests and a PR's workspace in the real `handoff-desktop`
//! window, driven through tauri-driver and WebKitWebDriver under Xvfb, against the fake
//! GitHub with the scripted agent on the local backend. The owner runs and steers every
//! QA stage from the window: an edit of the review reaches the plan's prompt verbatim,
//! a re-run over an edit asks first, two versions compare side by side, the test results
//! link their issues, an edit made offline waits in the outbox until it is sent, a
//! notification's click opens the workspace, a running stage is cancelled from its card,
//! Fix and Full auto run from theirs, and a review comment on a feedback PR becomes a
//! candidate that reaches the next Update PR.

use handoff_test_support as support;

use std::time::{Duration, Instant};

use handoff::domain::{CommentKind, RunStatus, Stage};
use handoff::github::comment_publishing::publish_agent_output;
use handoff::github::{CommentPlace, GithubClient, GithubEndpoints, RequestPolicy};
use handoff::secrets::Secret;
use serde_json::{json, Value};
use support::eventually::eventually_true;
use support::fake_github::{Fault, FaultRule, OWNER};
use support::qa_directives::QA_DIRECTIVES;
use support::window::github_world::{connected_repo, open_workspace, GithubWorld, REPO, RUN_LIMIT};
use support::window::notification_service::NotificationService;
use support::window::AppSession;

/// A PR on the fake from a branch with one commit; returns its number.
fn signup_pull(world: &GithubWorld) -> u64 {
    world.fake.create_branch(REPO, "feature/signup", "main");
    world.fake.push_commit(
        REPO,
        "feature/signup",
        "Signup button",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    world.fake.create_pull(
        REPO,
        OWNER,
        "feature/signup",
        "Make the signup button bigger",
    )
}

/// The state of a stage's card.
fn card_state(stage: &str) -> String {
    format!("const c = document.querySelector('#pr-workspace .stage-card[data-stage=\"{stage}\"]'); return c ? c.dataset.state : null;")
}

/// The run a stage's card shows (its active run, else its last), as the card says it.
fn card_run(stage: &str) -> String {
    format!("const c = document.querySelector('#pr-workspace .stage-card[data-stage=\"{stage}\"]'); return c ? c.dataset.run : null;")
}

/// Clicks a stage's button and waits until its card says it is done.
async fn run_stage(app: &AppSession, stage: &str) {
    let before = app.eventually(&card_run(stage), |_| true).await;
    app.click(&format!(
        "#pr-workspace .stage-card[data-stage=\"{stage}\"] .run-stage"
    ))
    .await;
    wait_until_done(app, stage, before).await;
}

/// Waits until the card shows a run other than `before`'s that has ended.
async fn wait_until_done(app: &AppSession, stage: &str, before: serde_json::Value) {
    // The card is "running" first; "done", "edited by you" or "out of date" once the run
    // ended well, "failed" when not.
    let shown = app
        .eventually_within(RUN_LIMIT, &card_run(stage), |run| *run != before)
        .await;
    assert_ne!(shown, before, "{stage}: the card never showed the new run");
    let state = app
        .eventually_within(RUN_LIMIT, &card_state(stage), |value| {
            value
                .as_str()
                .is_some_and(|state| state != "running" && state != "not_run")
        })
        .await;
    assert_eq!(
        state,
        "done",
        "{stage}: {:?}",
        app.texts("#pr-workspace .run-failure, #pr-workspace .stage-log")
            .await
    );
}

/// The newest run of `stage` on PR `number`.
async fn newest_run(world: &GithubWorld, number: u64, stage: Stage) -> handoff::domain::Run {
    let repo = world
        .store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    world
        .store
        .stage_runs()
        .runs_of_pull_request(repo.id, number)
        .await
        .unwrap()
        .into_iter()
        .find(|run| run.stage == stage)
        .unwrap_or_else(|| panic!("no {stage} run"))
}

async fn clear_toasts(app: &AppSession) {
    app.client
        .execute(
            "document.querySelectorAll('.toast .toast-close').forEach(b => b.click());",
            vec![],
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_stage_is_run_and_steered_from_the_workspace() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, QA_DIRECTIVES).await;
    let number = signup_pull(&world);
    world.fake.add_user("contributor");
    world.fake.create_branch(REPO, "docs/typo", "main");
    world
        .fake
        .push_commit(REPO, "docs/typo", "Typo", &[("README.md", "Hello\n")]);
    let docs = world
        .fake
        .create_pull(REPO, "contributor", "docs/typo", "Fix a typo in the README");
    let docs_head = world.fake.pull_head_sha(REPO, docs);
    world.fake.add_check_run(
        REPO,
        &docs_head,
        "github-actions",
        "tests",
        Some("success"),
        "all green",
    );
    let app = world.open_signed_in_window().await;

    // The pull requests: every open PR, with a search.
    app.click("#sync-now").await;
    app.click(".view-tab[data-view=pulls]").await;
    let rows = app
        .eventually(
            "return [...document.querySelectorAll('.pull-row')].map(r => r.dataset.number);",
            |value| value.as_array().is_some_and(|rows| rows.len() == 2),
        )
        .await;
    assert_eq!(rows.as_array().unwrap().len(), 2, "{rows}");
    assert_eq!(
        app.texts(&format!(".pull-row[data-number=\"{docs}\"] .check-pill"))
            .await,
        ["checks pass"]
    );
    app.type_into("#pulls-search", "signup").await;
    let found = app
        .eventually(
            "return [...document.querySelectorAll('.pull-row')].map(r => r.dataset.number);",
            |value| value.as_array().is_some_and(|rows| rows.len() == 1),
        )
        .await;
    assert_eq!(found, json!([number.to_string()]));
    app.screenshot("pull-requests").await;

    // The workspace: five cards, none run yet, each button saying what it takes.
    open_workspace(&app, number).await;
    let labels = app.texts("#pr-workspace .stage-card .run-stage").await;
    assert_eq!(
        labels,
        [
            "Run review · 1 run",
            "Run plan · 1 run",
            "Run test · 1 run",
            "Run fix · 1 run",
            "Run full auto · up to 4 runs"
        ]
    );

    // Review, then the owner corrects it in its pane.
    run_stage(&app, "review").await;
    let pane = "#pr-workspace .comment-pane[data-kind=review]";
    let review_text = app
        .text_eventually_containing(
            &format!(
                "const t = document.querySelector('{pane} .pane-text'); return t ? t.value : '';"
            ),
            "Review: the signup button is 20px high",
        )
        .await;
    let correction = "Owner: the button must be 48px, not 44px.\n- Check it on a phone.";
    app.type_into(
        &format!("{pane} .pane-text"),
        &format!("{review_text}\n{correction}"),
    )
    .await;
    app.click(&format!("{pane} .save-pane")).await;
    app.eventually(
        &format!("return [...document.querySelectorAll('{pane} .badge')].map(b => b.textContent);"),
        |value| {
            value
                .as_array()
                .is_some_and(|badges| badges.contains(&json!("edited by you")))
        },
    )
    .await;
    let plan_label = app
        .text_eventually_containing(
            "return document.querySelector('#pr-workspace .stage-card[data-stage=\"plan\"] .run-stage').textContent;",
            "reads your edit of the review",
        )
        .await;
    assert_eq!(
        plan_label,
        "Run plan · 1 run · reads your edit of the review"
    );
    assert_eq!(
        app.eventually(&card_state("review"), |value| value == "edited_by_you")
            .await,
        "edited_by_you"
    );

    // Plan reads the owner's text verbatim.
    run_stage(&app, "plan").await;
    let plan = newest_run(&world, number, Stage::Plan).await;
    let prompt = world
        .store
        .runs()
        .run_texts(plan.id)
        .await
        .unwrap()
        .prompt
        .unwrap_or_default();
    assert!(prompt.contains(correction), "{prompt}");
    clear_toasts(&app).await;
    app.click("#pr-workspace .hide-log").await;
    app.wait_for("#pr-workspace .comment-pane[data-kind=plan] .pane-text")
        .await;
    app.screenshot("workspace").await;

    // Re-running review over the owner's edit asks first; "Keep my edit" runs nothing.
    let reviews_before = newest_run(&world, number, Stage::Review).await.id;
    app.click("#pr-workspace .stage-card[data-stage=\"review\"] .run-stage")
        .await;
    let question = app
        .text_eventually_containing(
            "const d = document.querySelector('#question-dialog[open]'); return d ? d.textContent : '';",
            "Run over your edit?",
        )
        .await;
    assert!(
        question.contains("carries your edits (version 2)"),
        "{question}"
    );
    app.click("#question-dialog[open] [data-answer=keep]").await;
    // The answer is handled once the dialog is gone and the button works again; keeping
    // the edit started nothing.
    let handled = app
        .eventually(
            "const go = document.querySelector('#pr-workspace .stage-card[data-stage=\"review\"] .run-stage'); \
             return document.querySelector('#question-dialog[open]') === null && go !== null && !go.disabled;",
            |ready| ready == true,
        )
        .await;
    assert_eq!(handled, true, "the answer was never handled");
    assert_eq!(
        newest_run(&world, number, Stage::Review).await.id,
        reviews_before
    );
    app.click("#pr-workspace .stage-card[data-stage=\"review\"] .run-stage")
        .await;
    app.text_eventually_containing(
        "const d = document.querySelector('#question-dialog[open]'); return d ? d.textContent : '';",
        "Run over your edit?",
    )
    .await;
    app.click("#question-dialog[open] [data-answer=run]").await;
    let rerun = app
        .eventually_within(RUN_LIMIT, &card_state("review"), |value| value == "done")
        .await;
    assert_eq!(rerun, "done");
    assert_ne!(
        newest_run(&world, number, Stage::Review).await.id,
        reviews_before
    );

    // History: three versions; the agent's first and the owner's edit, side by side.
    // Clicked again should the pane be drawn anew under the click (the run just ended).
    app.click_until(
        &format!("{pane} .open-history"),
        "return document.querySelector('#history-dialog[open] .timeline-entry') !== null;",
    )
    .await;
    let entries = app
        .eventually(
            "return [...document.querySelectorAll('#history-dialog[open] .timeline-entry')].map(e => e.dataset.version + ':' + e.dataset.origin);",
            |value| value.as_array().is_some_and(|entries| entries.len() == 3),
        )
        .await;
    assert_eq!(entries, json!(["3:agent", "2:owner_in_handoff", "1:agent"]));
    let history_text = app.texts("#history-dialog[open] .timeline-entry").await;
    assert!(
        history_text[1].contains("your edit in Handoff"),
        "{history_text:?}"
    );
    assert!(
        history_text[2].contains("written by the agent (run"),
        "{history_text:?}"
    );
    // Pick v1 and v2 (v3 and v2 are picked at first).
    app.click("#history-dialog[open] .timeline-entry[data-version=\"3\"] input")
        .await;
    app.click("#history-dialog[open] .timeline-entry[data-version=\"1\"] input")
        .await;
    app.click("#history-dialog[open] .compare").await;
    let title = app
        .text_eventually_containing(
            "const t = document.querySelector('#history-dialog[open] .compare-title'); return t ? t.textContent : '';",
            "From version 1 to version 2",
        )
        .await;
    assert_eq!(title, "From version 1 to version 2");
    assert!(app.texts("#history-dialog[open] .compare-older").await[0]
        .contains("Review: the signup button is 20px high"));
    assert!(app.texts("#history-dialog[open] .compare-newer").await[0]
        .contains("Owner: the button must be 48px, not 44px."));
    let changes = app.texts("#history-dialog[open] .compare-changes").await;
    assert!(
        changes[0].contains("+ Owner: the button must be 48px, not 44px."),
        "{changes:?}"
    );
    app.screenshot("history").await;
    app.click("#history-dialog[open] .modal-actions button")
        .await;

    // Test: a row per scenario, the failure linked to the issue filed for it.
    run_stage(&app, "test").await;
    let rows = app
        .eventually(
            "return [...document.querySelectorAll('#pr-workspace .result-row')].map(r => [r.dataset.passed, r.querySelector('.result-name').textContent, r.querySelector('.result-issue') ? r.querySelector('.result-issue').textContent : '']);",
            |value| value.as_array().is_some_and(|rows| rows.len() == 2),
        )
        .await;
    let issues = world.fake.issues(REPO);
    let issue = issues
        .iter()
        .find(|issue| issue.1.contains("Button height"))
        .unwrap_or_else(|| panic!("{issues:?}"));
    assert_eq!(
        rows,
        json!([
            ["false", "Button height", format!("#{}", issue.0)],
            ["true", "Login works", ""]
        ])
    );
    assert!(app
        .texts("#pr-workspace .stage-card[data-stage=\"fix\"] .run-stage")
        .await[0]
        .starts_with("Run fix"));

    // A stage says out loud what it noted: with the plan gone, test plans anew.
    let (plan_id, _, _) = world
        .fake
        .comments(REPO, number)
        .into_iter()
        .find(|(_, _, body)| body.starts_with(CommentKind::Plan.marker()))
        .unwrap();
    world.fake.delete_comment(plan_id);
    run_stage(&app, "test").await;
    let notes = app
        .eventually(
            "return [...document.querySelectorAll('#pr-workspace .stage-card[data-stage=\"test\"] .stage-note')].map(n => n.textContent);",
            |value| value.as_array().is_some_and(|notes| !notes.is_empty()),
        )
        .await;
    assert_eq!(
        notes,
        json!(["⚠ plan comment not found: test planned anew"])
    );
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_stage_is_cancelled_and_fix_and_full_auto_run_from_the_workspace() {
    let world = GithubWorld::new().await;
    // The first run of this installation (the review below) takes a minute, unless it
    // is cancelled; every fix also adds a line, so that a second fix has work to push.
    connected_repo(
        &world.fake,
        &world.store,
        &format!("{QA_DIRECTIVES}\n@@run1:sleep 60\n@@fix:append FIXES.md one more fix"),
    )
    .await;
    let number = signup_pull(&world);
    let app = world.open_signed_in_window().await;
    open_workspace(&app, number).await;

    // Cancel: the card offers it while the stage runs, and the run ends as cancelled.
    app.click("#pr-workspace .stage-card[data-stage=\"review\"] .run-stage")
        .await;
    app.eventually_within(RUN_LIMIT, &card_state("review"), |value| value == "running")
        .await;
    app.click_until(
        "#pr-workspace .stage-card[data-stage=\"review\"] .cancel-stage",
        "return [...document.querySelectorAll('.toast')].some(t => t.textContent.includes('Cancelling run'));",
    )
    .await;
    let clock = Instant::now();
    let state = app
        .eventually_within(RUN_LIMIT, &card_state("review"), |value| value == "failed")
        .await;
    assert_eq!(state, "failed");
    assert!(
        clock.elapsed() < Duration::from_secs(30),
        "the cancel stopped the minute-long stage ({:?})",
        clock.elapsed()
    );
    let review = newest_run(&world, number, Stage::Review).await;
    assert_eq!(review.status, RunStatus::Cancelled);
    let last_run = app
        .texts("#pr-workspace .stage-card[data-stage=\"review\"] .stage-last-run")
        .await;
    assert!(
        last_run[0].starts_with(&format!("Run {} · cancelled", review.id)),
        "{last_run:?}"
    );
    assert!(app
        .texts("#pr-workspace .stage-card[data-stage=\"review\"] .cancel-stage")
        .await
        .is_empty());

    // Test, then Fix on its failed scenario: the fix is pushed to the PR's branch.
    run_stage(&app, "test").await;
    run_stage(&app, "fix").await;
    let fix = newest_run(&world, number, Stage::Fix).await;
    let prompt = world
        .store
        .runs()
        .run_texts(fix.id)
        .await
        .unwrap()
        .prompt
        .unwrap_or_default();
    let failures = prompt
        .split_once("from Handoff's stored test results):")
        .and_then(|(_, rest)| rest.split_once("Change the code"))
        .map(|(failures, _)| failures.trim())
        .unwrap_or_default();
    assert!(
        failures.starts_with("1. Button height (issue #") && !failures.contains("Login works"),
        "fix reads the failed scenario only: {prompt}"
    );
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, "feature/signup", "src/button.css")
            .as_deref(),
        Some(".signup { height: 44px; }\n")
    );
    assert_eq!(
        world
            .fake
            .commits_ahead(REPO, "feature/signup", "main")
            .len(),
        2,
        "the signup commit and the fix"
    );

    // Full auto: one click runs review, plan, test and fix in a chain.
    clear_toasts(&app).await;
    run_stage(&app, "full-auto").await;
    let auto = newest_run(&world, number, Stage::FullAuto).await;
    assert_eq!(auto.status, RunStatus::Succeeded);
    let repo = world
        .store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    let mut chain: Vec<(Stage, RunStatus)> = world
        .store
        .stage_runs()
        .runs_of_pull_request(repo.id, number)
        .await
        .unwrap()
        .into_iter()
        .filter(|run| run.parent_run_id == Some(auto.id))
        .map(|run| (run.stage, run.status))
        .collect();
    chain.reverse();
    assert_eq!(
        chain,
        [
            (Stage::Review, RunStatus::Succeeded),
            (Stage::Plan, RunStatus::Succeeded),
            (Stage::Test, RunStatus::Succeeded),
            (Stage::Fix, RunStatus::Succeeded),
        ]
    );
    for stage in ["review", "plan", "test", "fix"] {
        assert_eq!(
            app.eventually(&card_state(stage), |value| value == "done")
                .await,
            "done",
            "{stage} after full auto"
        );
    }
    clear_toasts(&app).await;
    app.screenshot("workspace-full-auto").await;
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_made_offline_waits_in_the_outbox_and_is_sent_or_discarded() {
    let world = GithubWorld::new().await;
    let repo = connected_repo(&world.fake, &world.store, "").await;
    let number = signup_pull(&world);
    let agent = GithubClient::new(
        GithubEndpoints::new(&world.fake.api_base()).unwrap(),
        Secret::new(world.fake.owner_token()),
        RequestPolicy::default(),
    )
    .unwrap();
    let published = publish_agent_output(
        &agent,
        &world.store,
        CommentPlace {
            repo: &repo,
            pr_number: number,
            kind: CommentKind::Review,
        },
        "The button is too small.",
        None,
        Some("feature/signup"),
    )
    .await
    .unwrap();
    let comment_id = published.comment.github_comment_id.unwrap();
    let app = world.open_signed_in_window().await;
    open_workspace(&app, number).await;
    let pane = "#pr-workspace .comment-pane[data-kind=review]";

    // GitHub cannot be reached: the edit is kept here and waits in the outbox.
    world
        .fake
        .inject(FaultRule::new("/issues/comments/", Fault::Status(503)).times(10_000));
    app.type_into(&format!("{pane} .pane-text"), "Offline: make it 48px.")
        .await;
    app.click(&format!("{pane} .save-pane")).await;
    let notice = app
        .text_eventually_containing(
            &format!("const n = document.querySelector('{pane} .unsent-notice'); return n ? n.textContent : '';"),
            "waits in the outbox",
        )
        .await;
    assert!(notice.contains("Last error:"), "{notice}");
    let count = app
        .eventually(
            "const b = document.getElementById('open-outbox'); return b.hidden ? null : b.dataset.count;",
            |value| value == "1",
        )
        .await;
    assert_eq!(count, "1");
    assert!(!world
        .fake
        .comment_body(comment_id)
        .unwrap()
        .contains("Offline: make it 48px."));
    app.click("#open-outbox").await;
    let listed = app
        .text_eventually_containing(
            "const d = document.querySelector('#outbox-dialog[open]'); return d ? d.textContent : '';",
            "waiting to be sent",
        )
        .await;
    assert!(listed.contains("Last error:"), "{listed}");
    assert!(listed.contains(&format!("#{number}")), "{listed}");
    clear_toasts(&app).await;
    app.screenshot("outbox").await;

    // Back online: Send now puts it on GitHub and empties the outbox.
    world.fake.clear_faults();
    app.click("#outbox-dialog[open] .send-now").await;
    eventually_true("the edit reaches GitHub", || async {
        world
            .fake
            .comment_body(comment_id)
            .unwrap()
            .contains("Offline: make it 48px.")
    })
    .await;
    let hidden = app
        .eventually(
            "return document.getElementById('open-outbox').hidden;",
            |value| value == &Value::Bool(true),
        )
        .await;
    assert_eq!(hidden, Value::Bool(true), "the outbox is empty");
    app.client
        .execute("document.getElementById('outbox-dialog').close();", vec![])
        .await
        .unwrap();

    // Offline again, an edit the owner discards: never sent, kept in the history, and
    // the pane shows GitHub's text again.
    world
        .fake
        .inject(FaultRule::new("/issues/comments/", Fault::Status(503)).times(10_000));
    app.type_into(
        &format!("{pane} .pane-text"),
        "A thought better left unsaid.",
    )
    .await;
    app.click(&format!("{pane} .save-pane")).await;
    app.wait_for(&format!("{pane} .unsent-notice .discard"))
        .await;
    world.fake.clear_faults();
    app.click(&format!("{pane} .unsent-notice .discard")).await;
    app.click("#question-dialog[open] [data-answer=discard]")
        .await;
    let shown = app
        .eventually(
            &format!(
                "const t = document.querySelector('{pane} .pane-text'); return t ? t.value : null;"
            ),
            |value| value == "Offline: make it 48px.",
        )
        .await;
    assert_eq!(shown, "Offline: make it 48px.");
    assert!(!world
        .fake
        .comment_body(comment_id)
        .unwrap()
        .contains("better left unsaid"));
    // Clicked again should the pane be drawn anew under the click (the run just ended).
    app.click_until(
        &format!("{pane} .open-history"),
        "return document.querySelector('#history-dialog[open] .timeline-entry') !== null;",
    )
    .await;
    let discarded = app
        .text_eventually_containing(
            "const d = document.querySelector('#history-dialog[open] .timeline-entry[data-discarded=\"true\"]'); return d ? d.textContent : '';",
            "discarded, never sent",
        )
        .await;
    assert!(discarded.contains("your edit in Handoff"), "{discarded}");
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notification_click_opens_the_workspace_of_its_pull_request() {
    let world = GithubWorld::new().await;
    let notifications = NotificationService::start(world.keyring.bus_address()).await;
    connected_repo(&world.fake, &world.store, QA_DIRECTIVES).await;
    let number = signup_pull(&world);
    let app = world.open_signed_in_window().await;
    open_workspace(&app, number).await;

    run_stage(&app, "review").await;
    let sent = notifications
        .wait_for(Duration::from_secs(20), |sent| {
            sent.summary == "Review finished"
        })
        .await;
    assert_eq!(sent.app_name, "Handoff");
    assert!(
        sent.body.contains(&format!("review on PR #{number}")),
        "{sent:?}"
    );
    assert_eq!(sent.actions, ["default", "Open"]);

    // The owner has moved on to the feedback board when the notification is clicked.
    app.click(".view-tab[data-view=feedback]").await;
    assert_eq!(
        app.eventually("return document.body.dataset.view;", |value| value
            == "feedback")
            .await,
        "feedback"
    );
    notifications.click(sent.id).await;
    let opened = app
        .eventually(
            "const w = document.getElementById('pr-workspace'); return document.body.dataset.view + ':' + (w.dataset.number || '');",
            |value| value == &Value::String(format!("workspace:{number}")),
        )
        .await;
    assert_eq!(opened, Value::String(format!("workspace:{number}")));
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_review_comment_becomes_a_candidate_is_included_and_reaches_the_next_update_pr() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, "").await;
    let item = handoff::store::NewFeedback {
        repo: REPO.parse().unwrap(),
        title: Some("Greeting".to_owned()),
        body: "Say hello.\n@@write hello.txt hello".to_owned(),
        source: handoff::domain::FeedbackSource::App,
        github_issue: None,
        opened_by_visitor: false,
    };
    let item = world.store.feedback().add_feedback(&item).await.unwrap();
    let app = world.open_signed_in(item.id.0).await;
    app.click("#detail .update-button").await;
    let status = app
        .eventually_within(
            RUN_LIMIT,
            "return document.getElementById('detail').dataset.status;",
            |value| value == "WAITING_FOR_REVIEW" || value == "FAILED",
        )
        .await;
    assert_eq!(status, "WAITING_FOR_REVIEW");
    let (number, _, _) = world.fake.pulls(REPO)[0].clone();

    // The owner comments on a line of the PR on GitHub; a sync makes it a candidate.
    world
        .fake
        .add_review_comment(REPO, number, OWNER, "hello.txt", 1, "Say it in French too.");
    app.click("#sync-now").await;
    let candidate = app
        .text_eventually_containing(
            "const c = document.querySelector('#detail .thread-list.candidates .thread-entry'); return c ? c.textContent : '';",
            "Say it in French too.",
        )
        .await;
    assert!(candidate.contains("inline comment"), "{candidate}");
    assert!(
        candidate.contains("Include in the next Update PR"),
        "{candidate}"
    );
    clear_toasts(&app).await;
    app.screenshot("candidate").await;
    app.click("#detail .thread-list.candidates .include").await;
    app.text_eventually_containing(
        "const c = document.querySelector('#detail .thread-list.candidates .thread-entry'); return c ? c.textContent : '';",
        "in the next Update PR's prompt",
    )
    .await;

    app.type_into("#detail .update-text", "Go on.\n@@write hello.txt bonjour")
        .await;
    app.click("#detail .update-button").await;
    let runs = app
        .eventually_within(
            RUN_LIMIT,
            "return [...document.querySelectorAll('#detail .run')].map(r => r.dataset.runStatus);",
            |value| {
                value.as_array().is_some_and(|runs| {
                    runs.len() == 2 && runs.iter().all(|s| s == "succeeded" || s == "failed")
                })
            },
        )
        .await;
    assert_eq!(
        runs,
        json!(["succeeded", "succeeded"]),
        "{:?}",
        app.texts("#detail .run-failure").await
    );
    let update = world
        .store
        .runs()
        .runs(&handoff::store::RunFilter {
            feedback_id: Some(item.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_iter()
        .find(|run| {
            run.status == RunStatus::Succeeded
                && run
                    .code_run_kind
                    .is_some_and(|kind| kind.as_str() == "iterate")
        })
        .expect("the update run");
    let prompt = world
        .store
        .runs()
        .run_texts(update.id)
        .await
        .unwrap()
        .prompt
        .unwrap_or_default();
    assert!(
        prompt.contains("From the repository owner, on a line of the PR's diff"),
        "{prompt}"
    );
    assert!(
        prompt.contains("On `hello.txt`, line 1:\n\nSay it in French too."),
        "{prompt}"
    );
    app.close().await;
    world.store.close().await;
}
