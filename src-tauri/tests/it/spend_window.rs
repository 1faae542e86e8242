//! Spend in the window: the month drawn as a chart with its budget line and the items
//! that cost most, the budgets set in Settings → Spend, a run's steps as a timeline in
//! the detail panel, the notice when a repository's month reaches 80% of its budget, the
//! owner's Claude plan against its monthly credit, and each run saying whether its spend
//! was metered outside the agent or is the agent's own account.

use handoff_test_support as support;

use chrono::Utc;
use handoff::domain::agent_step::{AgentStep, ToolCall};
use handoff::domain::model_prices::TokenUsage;
use handoff::domain::{FeedbackId, PaidWith, RunFailureCode, RunId, SandboxBackend, SpendSource};
use handoff::store::spend::RunSpend;
use handoff::store::{CodeRunRequest, RunOutcome, SettingKey, Store};
use support::eventually::eventually_true;
use support::seed;
use support::window::github_world::{connected_repo, open_card, GithubWorld, REPO, RUN_LIMIT};
use support::window::notification_service::{NotificationService, SentNotification};

fn step(tool: &str, input: &str, input_tokens: u64, cost_usd: f64) -> AgentStep {
    AgentStep {
        model: "claude-sonnet-4-5".to_owned(),
        began_at: Utc::now(),
        duration_ms: 2300,
        status: 200,
        usage: TokenUsage {
            input: input_tokens,
            output: 400,
            ..TokenUsage::default()
        },
        cost_usd: Some(cost_usd),
        tool_calls: vec![ToolCall {
            name: tool.to_owned(),
            input: input.to_owned(),
        }],
        text: String::new(),
        details_left_out: false,
        usage_unread: false,
    }
}

/// A finished code run of `feedback_id` that spent `steps`.
async fn spent_run(store: &Store, feedback_id: FeedbackId, steps: &[AgentStep]) -> RunId {
    let started = store
        .runs()
        .start_code_run(&CodeRunRequest {
            feedback_id,
            backend: SandboxBackend::Local,
            agent_preset: "claude".to_owned(),
            instructions: None,
        })
        .await
        .unwrap();
    let run_id = started.run.id;
    let cost: f64 = steps.iter().filter_map(|step| step.cost_usd).sum();
    let tokens_in: u64 = steps.iter().map(|step| step.usage.all_input()).sum();
    let tokens_out: u64 = steps.iter().map(|step| step.usage.output).sum();
    store
        .spend()
        .record_run_spend(
            run_id,
            &RunSpend {
                source: Some(SpendSource::Metered),
                cost_usd: Some(cost),
                tokens_in: Some(tokens_in as i64),
                tokens_out: Some(tokens_out as i64),
                unpriced_tokens: None,
            },
            steps,
        )
        .await
        .unwrap();
    store
        .runs()
        .finish_run(
            run_id,
            &RunOutcome::Failed {
                failure_code: RunFailureCode::NoChanges,
                message: "the agent changed nothing".to_owned(),
                exit_code: Some(0),
            },
        )
        .await
        .unwrap();
    run_id
}

#[tokio::test(flavor = "multi_thread")]
async fn the_month_is_drawn_with_its_budget_and_a_runs_steps_read_as_a_timeline() {
    let world = GithubWorld::new().await;
    let store = &world.store;
    let repo = connected_repo(&world.fake, store, "").await;
    let header = seed::add_feedback(store, REPO, "Sticky header", "Keep it on top.").await;
    let footer = seed::add_feedback(store, REPO, "Footer links", "Fix them.").await;
    spent_run(
        store,
        header.id,
        &[
            step("Read", r#"{"file_path":"src/header.css"}"#, 30_000, 1.25),
            step(
                "Edit",
                r#"{"file_path":"src/header.css","old_string":"a","new_string":"b"}"#,
                42_000,
                2.0,
            ),
            step("Bash", r#"{"command":"npm test"}"#, 50_000, 0.25),
        ],
    )
    .await;
    // The footer's second answer broke off before its usage: charged all it reserved.
    let mut unread = step("Write", r#"{"file_path":"footer.css"}"#, 0, 0.5);
    unread.usage.output = 0;
    unread.usage_unread = true;
    spent_run(
        store,
        footer.id,
        &[
            step("Write", r#"{"file_path":"footer.html"}"#, 20_000, 2.0),
            unread,
        ],
    )
    .await;
    let app = world.open_signed_in_window().await;

    // The repository's monthly budget, set in its settings; one that does not read is
    // refused with nothing saved.
    app.click("#open-settings").await;
    app.wait_for(&format!(".repo-form[data-repo=\"{REPO}\"]"))
        .await;
    app.type_into(".repo-form input[name=monthlyBudget]", "ten")
        .await;
    app.click(".save-repo").await;
    let refused = app
        .text_eventually_containing(
            "const e = document.querySelector('.repo-form .form-error'); return e && !e.hidden ? e.textContent : '';",
            "Budget per month",
        )
        .await;
    assert!(refused.contains("\"ten\""), "{refused}");
    assert_eq!(
        store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .monthly_budget_usd,
        None
    );
    app.type_into(".repo-form input[name=monthlyBudget]", "10")
        .await;
    app.click(".save-repo").await;
    app.text_eventually_containing(
        "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
        &format!("Saved {REPO}"),
    )
    .await;
    assert_eq!(
        store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .monthly_budget_usd,
        Some(10.0)
    );

    // Settings → Spend, for the repository: the total against the budget, the chart, the
    // top items.
    app.click(".tab[data-tab=\"spend\"]").await;
    app.wait_for("#spend-panel .spend-chart").await;
    app.client
        .execute(
            &format!(
                "const s = document.querySelector('#spend-panel select[name=spendRepo]'); \
                 s.value = '{REPO}'; s.dispatchEvent(new Event('change'));"
            ),
            vec![],
        )
        .await
        .unwrap();
    let total = app
        .text_eventually_containing(
            "const t = document.querySelector('#spend-panel .spend-total'); return t ? t.textContent : '';",
            "of $10.00",
        )
        .await;
    assert_eq!(total, "$6.00 of $10.00 (60%)");
    assert_eq!(app.texts("#spend-panel .chart-budget").await.len(), 1);
    let label = app
        .eventually(
            "const c = document.querySelector('#spend-panel .spend-chart'); return c ? c.getAttribute('aria-label') : null;",
            |value| value.as_str().is_some_and(|text| text.contains("$6.00")),
        )
        .await;
    assert!(
        label.as_str().unwrap().contains("of a $10.00 budget"),
        "{label}"
    );
    let top = app.texts("#spend-panel .spend-top tr").await;
    assert_eq!(top.len(), 2, "{top:?}");
    assert!(
        top[0].contains("Sticky header") && top[0].contains("$3.50"),
        "{top:?}"
    );
    app.screenshot("spend-month").await;

    // The budgets, set here; one that does not read saves nothing.
    app.type_into("#spend-panel input[name=runUsd]", "2.50")
        .await;
    app.type_into("#spend-panel input[name=dayUsd]", "20").await;
    app.type_into("#spend-panel textarea[name=ownPrices]", "my-model cheap")
        .await;
    app.click("#spend-panel .save-budgets").await;
    let refused = app
        .text_eventually_containing(
            "const e = document.querySelector('#spend-panel .form-error'); return e && !e.hidden ? e.textContent : '';",
            "my-model cheap",
        )
        .await;
    assert!(refused.contains("Your prices"), "{refused}");
    assert_eq!(
        store
            .settings()
            .setting(SettingKey::BudgetRunUsd)
            .await
            .unwrap(),
        None
    );
    app.type_into("#spend-panel textarea[name=ownPrices]", "my-model 1 2")
        .await;
    app.click("#spend-panel .save-budgets").await;
    app.eventually(
        "const r = document.querySelector('#spend-panel tr[data-model=\"my-model\"]'); return r ? r.textContent : '';",
        |value| value.as_str().is_some_and(|text| text.contains("yours")),
    )
    .await;
    assert_eq!(
        store
            .settings()
            .setting(SettingKey::BudgetRunUsd)
            .await
            .unwrap()
            .as_deref(),
        Some("2.50")
    );
    assert_eq!(
        store
            .settings()
            .setting(SettingKey::BudgetDayUsd)
            .await
            .unwrap()
            .as_deref(),
        Some("20")
    );
    app.click("#settings-close").await;

    // The item's run: its steps, what the agent read, changed and ran, and each cost.
    open_card(&app, header.id.0).await;
    app.click("#detail .run .show-steps").await;
    app.wait_for("#detail .steps .step").await;
    let steps = app.texts("#detail .steps .step").await;
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert!(
        steps[0].contains("read")
            && steps[0].contains("src/header.css")
            && steps[0].contains("$1.25 "),
        "{steps:?}"
    );
    assert!(
        steps[1].contains("wrote") && steps[1].contains("42k in"),
        "{steps:?}"
    );
    assert!(
        steps[2].contains("ran") && steps[2].contains("npm test"),
        "{steps:?}"
    );
    let spend = app.texts("#detail .run .run-spend").await;
    assert!(
        spend[0].contains("$3.50") && spend[0].contains("metered"),
        "{spend:?}"
    );
    app.show_for_picture("#detail .run").await;
    app.screenshot("run-steps").await;

    // A step whose answer's usage could not be read says it was charged all it reserved.
    open_card(&app, footer.id.0).await;
    app.click("#detail .run .show-steps").await;
    app.wait_for("#detail .steps .step[data-step=\"2\"]").await;
    let steps = app.texts("#detail .steps .step").await;
    assert!(
        steps[1].contains("$0.50") && steps[1].contains("charged all it reserved"),
        "{steps:?}"
    );
    assert!(!steps[0].contains("charged all it reserved"), "{steps:?}");
    app.show_for_picture("#detail .run").await;
    app.screenshot("run-steps-unread").await;
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_month_at_eighty_percent_of_its_budget_says_so_once() {
    let world = GithubWorld::new().await;
    let notifications = NotificationService::start(world.keyring.bus_address()).await;
    let repo = connected_repo(&world.fake, &world.store, "").await;
    world
        .store
        .spend()
        .set_monthly_budget(repo.id, Some(0.10))
        .await
        .unwrap();
    let first = seed::add_feedback(
        &world.store,
        REPO,
        "Spend",
        "Costly.\n@@usage 0.09\n@@write a.txt one",
    )
    .await;
    let app = world.open_signed_in(first.id.0).await;

    app.click("#detail .update-button").await;

    let sent = notifications
        .wait_for(RUN_LIMIT, |sent| sent.summary == "Budget at 80%")
        .await;
    assert!(
        sent.body
            .contains("has spent $0.09 of its $0.10 monthly budget (90%)"),
        "{sent:?}"
    );
    let note = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('#detail .run-note')].map(n => n.textContent).join('|');",
            "monthly budget",
        )
        .await;
    assert!(note.contains("90%"), "{note}");
    // The month is spent past its budget: the next run is refused before it starts,
    // and no second notice comes.
    let second = seed::add_feedback(&world.store, REPO, "More", "@@write b.txt two").await;
    world
        .store
        .spend()
        .set_monthly_budget(repo.id, Some(0.09))
        .await
        .unwrap();
    open_card(&app, second.id.0).await;
    app.click("#detail .update-button").await;
    let refused = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
            "budget this month",
        )
        .await;
    assert!(refused.contains("$0.09 of its $0.09"), "{refused}");
    let button = app.texts(".toast.error .button.small").await;
    assert_eq!(button, ["Budgets"], "the refusal offers the step past it");
    app.screenshot("refusal-with-its-fix").await;
    // Its button does what the command line's hint says (raise this repository's
    // monthly budget): it opens the budgets, on this repository's month.
    app.click(".toast.error .button.small").await;
    app.eventually(
        "const d = document.getElementById('settings-dialog'); return d.open ? d.dataset.tab : '';",
        |value| value == "spend",
    )
    .await;
    app.wait_for("#spend-panel .spend-chart").await;
    app.eventually(
        "const s = document.querySelector('#spend-panel select.spend-repo'); return s ? s.value : '';",
        |value| value == REPO,
    )
    .await;
    // Notices are handed out in the order of their runs' events: once a later run's
    // notice is here, a second budget notice would have come before it.
    app.click("#settings-close").await;
    world
        .store
        .spend()
        .set_monthly_budget(repo.id, None)
        .await
        .unwrap();
    let third = seed::add_feedback(&world.store, REPO, "Last", "@@write c.txt three").await;
    open_card(&app, third.id.0).await;
    app.click("#detail .update-button").await;
    let other_than_budget = |sent: &&SentNotification| sent.summary != "Budget at 80%";
    eventually_true("the third run's notice is sent", || async {
        notifications
            .sent()
            .iter()
            .filter(other_than_budget)
            .count()
            == 2
    })
    .await;
    let budget_notices = notifications
        .sent()
        .into_iter()
        .filter(|sent| sent.summary == "Budget at 80%")
        .count();
    assert_eq!(budget_notices, 1);
    app.close().await;
    world.store.close().await;
}

/// A run of `feedback_id` the owner's Claude plan paid for, which drew `cost_usd`.
async fn run_paid_with_the_plan(store: &Store, feedback_id: FeedbackId, cost_usd: f64) {
    let run_id = spent_run(
        store,
        feedback_id,
        &[step(
            "Edit",
            r#"{"file_path":"src/app.js"}"#,
            80_000,
            cost_usd,
        )],
    )
    .await;
    store
        .spend()
        .set_run_paid_with(run_id, PaidWith::ClaudePlan)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_owners_claude_plan_is_named_and_its_credit_drawn_is_shown() {
    const PLAN_TOKEN: &str = "sk-ant-oat01-window-test-plan-token-0123456789";
    let world = GithubWorld::new().await;
    let store = &world.store;
    connected_repo(&world.fake, store, "").await;
    let item = seed::add_feedback(store, REPO, "Dark mode", "Add it.").await;
    run_paid_with_the_plan(store, item.id, 4.5).await;
    let app = world.open_signed_in_window().await;

    // The plan, named among the budgets: what its runs drew, against its credit.
    app.click("#open-settings").await;
    app.click(".tab[data-tab=\"spend\"]").await;
    app.wait_for("#spend-panel select[name=claudePlan]").await;
    assert!(app.texts("#spend-panel .plan-credit").await.is_empty());
    app.client
        .execute(
            "const s = document.querySelector('#spend-panel select[name=claudePlan]'); \
             s.value = 'max-5x';",
            vec![],
        )
        .await
        .unwrap();
    app.click("#spend-panel .save-budgets").await;
    let credit = app
        .text_eventually_containing(
            "const p = document.querySelector('#spend-panel .plan-credit'); return p ? p.textContent : '';",
            "Claude Max 5x",
        )
        .await;
    assert!(
        credit.contains("Claude Max 5x: $4.50 of its $100.00 monthly credit drawn (5%)"),
        "{credit}"
    );
    assert!(
        credit.contains("Its runs stop once the credit is drawn"),
        "{credit}"
    );
    assert!(credit.contains("No plan token is kept"), "{credit}");
    assert_eq!(
        store
            .settings()
            .setting(SettingKey::ClaudePlan)
            .await
            .unwrap()
            .as_deref(),
        Some("max-5x")
    );

    // The token, in Keys: an API key pasted there is refused; the plan's own is kept.
    app.click(".tab[data-tab=\"keys\"]").await;
    app.type_into(
        ".key-row[data-key=\"claude-plan\"] .key-input",
        "sk-ant-api03-an-api-key-in-the-wrong-place",
    )
    .await;
    app.click(".key-row[data-key=\"claude-plan\"] .save-key")
        .await;
    let refused = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join('|');",
            "not a plan token",
        )
        .await;
    assert!(
        refused.contains("keep it as the anthropic key"),
        "{refused}"
    );
    app.type_into(".key-row[data-key=\"claude-plan\"] .key-input", PLAN_TOKEN)
        .await;
    app.click(".key-row[data-key=\"claude-plan\"] .save-key")
        .await;
    app.eventually(
        "const r = document.querySelector('.key-row[data-key=\"claude-plan\"]'); return r ? r.dataset.set : null;",
        |value| value == "true",
    )
    .await;
    app.click(".tab[data-tab=\"spend\"]").await;
    app.eventually(
        "const p = document.querySelector('#spend-panel .plan-credit'); return p ? p.textContent : '';",
        |value| {
            value
                .as_str()
                .is_some_and(|text| text.contains("Claude Max 5x") && !text.contains("No plan token"))
        },
    )
    .await;
    app.show_for_picture("#spend-panel .plan-credit").await;
    app.screenshot("spend-plan").await;
    app.click("#settings-close").await;

    // The run says its cost came from the plan's credit.
    open_card(&app, item.id.0).await;
    let spend = app
        .text_eventually_containing(
            "return [...document.querySelectorAll('#detail .run .run-spend')].map(s => s.textContent).join('|');",
            "$4.50",
        )
        .await;
    assert!(spend.contains("from the Claude plan's credit"), "{spend}");
    app.close().await;
    world.store.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runs_row_says_whether_its_spend_was_metered_or_as_the_agent_reported() {
    let world = GithubWorld::new().await;
    let store = &world.store;
    connected_repo(&world.fake, store, "").await;
    let metered = seed::add_feedback(store, REPO, "Sticky header", "Keep it on top.").await;
    spent_run(
        store,
        metered.id,
        &[step("Read", r#"{"file_path":"src/a.css"}"#, 30_000, 0.75)],
    )
    .await;
    // A run on E2B, whose egress rule adds the key: no forwarder of Handoff's saw its
    // calls, so its spend is what the agent reported.
    let reported = seed::add_feedback(store, REPO, "Footer links", "Fix them.").await;
    let started = store
        .runs()
        .start_code_run(&CodeRunRequest {
            feedback_id: reported.id,
            backend: SandboxBackend::E2b,
            agent_preset: "claude".to_owned(),
            instructions: None,
        })
        .await
        .unwrap();
    store
        .spend()
        .record_run_spend(
            started.run.id,
            &RunSpend {
                source: Some(SpendSource::Reported),
                cost_usd: Some(0.42),
                tokens_in: Some(12_000),
                tokens_out: Some(900),
                unpriced_tokens: None,
            },
            &[],
        )
        .await
        .unwrap();
    store
        .runs()
        .finish_run(
            started.run.id,
            &RunOutcome::Failed {
                failure_code: RunFailureCode::NoChanges,
                message: "the agent changed nothing".to_owned(),
                exit_code: Some(0),
            },
        )
        .await
        .unwrap();
    let app = world.open_signed_in_window().await;

    open_card(&app, metered.id.0).await;
    let spend = app
        .text_eventually_containing(
            "const s = document.querySelector('#detail .run .run-spend'); return s ? s.textContent : '';",
            "$0.75",
        )
        .await;
    assert!(spend.contains("metered"), "{spend}");
    assert!(!spend.contains("as reported"), "{spend}");

    open_card(&app, reported.id.0).await;
    let spend = app
        .text_eventually_containing(
            "const s = document.querySelector('#detail .run .run-spend'); return s ? s.textContent : '';",
            "$0.42",
        )
        .await;
    assert!(spend.contains("as reported by the agent"), "{spend}");
    assert!(!spend.contains("metered"), "{spend}");
    app.show_for_picture("#detail .run").await;
    app.screenshot("run-spend-reported").await;
    app.close().await;
    world.store.close().await;
}
