//! Spend in the store: what a full-auto chain holds back from its repository's month
//! while it runs, a month's figures, budget settings that do not read, and the 80%
//! notice given once a period.

use handoff_test_support as support;

use chrono::Utc;
use handoff::domain::budgets::BudgetRefusal;
use handoff::domain::{RunFailureCode, SandboxBackend, SpendSource, Stage};
use handoff::store::spend::RunSpend;
use handoff::store::{RunOutcome, SettingKey, StageRunRequest};
use handoff::StoreError;
use support::seed::{self, DEMO_REPO};
use support::temp_store;

/// What the month has spent or holds back, as a run of `own_chain` sees it.
async fn committed_this_month(
    store: &handoff::Store,
    repo: handoff::domain::RepoId,
    own_chain: Option<handoff::domain::RunId>,
) -> f64 {
    store
        .spend()
        .committed_so_far(repo, Utc::now(), own_chain)
        .await
        .unwrap()
        .repo_month_usd
}

fn spent(usd: f64) -> RunSpend {
    RunSpend {
        source: Some(SpendSource::Metered),
        cost_usd: Some(usd),
        tokens_in: Some(1000),
        tokens_out: Some(100),
        unpriced_tokens: None,
    }
}

fn stage(
    repo_id: handoff::domain::RepoId,
    stage: Stage,
    parent: Option<handoff::domain::RunId>,
) -> StageRunRequest {
    StageRunRequest {
        repo_id,
        pr_number: Some(7),
        feedback_id: None,
        stage,
        backend: SandboxBackend::Docker,
        agent_preset: "claude".to_owned(),
        parent_run_id: parent,
        quota_units: if parent.is_some() { 0 } else { 4 },
    }
}

#[tokio::test]
async fn a_full_auto_chain_holds_back_its_stages_budgets_until_it_ends() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let repo = store
        .spend()
        .set_monthly_budget(repo.id, Some(30.0))
        .await
        .unwrap();
    // Four stages at the default $5 a run: $20 of the $30 month.
    assert_eq!(
        store
            .spend()
            .check_budget_left(&repo, Some(4))
            .await
            .unwrap(),
        Some(20.0)
    );
    let chain = store
        .stage_runs()
        .start_stage_run(&stage(repo.id, Stage::FullAuto, None))
        .await
        .unwrap();
    store.spend().reserve_budget(chain.id, 20.0).await.unwrap();
    let now = Utc::now();

    // Others see the $20 as spent; the chain's own stages do not.
    assert_eq!(committed_this_month(&store, repo.id, None).await, 20.0);
    assert_eq!(
        committed_this_month(&store, repo.id, Some(chain.id)).await,
        0.0
    );
    let second = store
        .spend()
        .check_budget_left(&repo, Some(4))
        .await
        .unwrap_err();
    assert!(
        matches!(second, StoreError::BudgetSpent(BudgetRefusal::ChainNeedsMore { needs, left, .. }) if needs == 20.0 && left == 10.0),
        "{second}"
    );
    // What a stage spends comes out of what the chain holds back, not on top of it.
    let review = store
        .stage_runs()
        .start_stage_run(&stage(repo.id, Stage::Review, Some(chain.id)))
        .await
        .unwrap();
    store
        .spend()
        .record_run_spend(review.id, &spent(3.0), &[])
        .await
        .unwrap();
    assert_eq!(committed_this_month(&store, repo.id, None).await, 20.0);
    assert_eq!(
        store
            .spend()
            .spent_so_far(repo.id, now)
            .await
            .unwrap()
            .repo_month_usd,
        3.0
    );

    // Ended, the chain holds nothing back.
    for run in [review.id, chain.id] {
        store
            .runs()
            .finish_run(
                run,
                &RunOutcome::Failed {
                    failure_code: RunFailureCode::StageFailed,
                    message: "stopped".to_owned(),
                    exit_code: None,
                },
            )
            .await
            .unwrap();
    }
    assert_eq!(committed_this_month(&store, repo.id, None).await, 3.0);
    assert_eq!(
        store
            .spend()
            .check_budget_left(&repo, Some(4))
            .await
            .unwrap(),
        Some(20.0)
    );
}

#[tokio::test]
async fn a_budget_setting_that_does_not_read_is_named_and_refuses_runs() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    store
        .settings()
        .set_setting(SettingKey::BudgetRunUsd, "five")
        .await
        .unwrap();
    let refused = store
        .spend()
        .check_budget_left(&repo, None)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("budget.run_usd"), "{refused}");
    assert!(store
        .spend()
        .set_monthly_budget(repo.id, Some(-1.0))
        .await
        .is_err());
    assert_eq!(
        store
            .repositories()
            .repo(repo.id)
            .await
            .unwrap()
            .monthly_budget_usd,
        None
    );
    store
        .settings()
        .set_setting(SettingKey::BudgetRunUsd, "none")
        .await
        .unwrap();
    let budgets = store.spend().budgets_for(&repo).await.unwrap();
    assert_eq!(budgets.run.usd, None);
}

#[tokio::test]
async fn the_eighty_percent_notice_is_given_once_a_month() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let repo = store
        .spend()
        .set_monthly_budget(repo.id, Some(10.0))
        .await
        .unwrap();
    let budgets = store.spend().budgets_for(&repo).await.unwrap();
    let item = seed::add_feedback(&store, DEMO_REPO, "Costly", "Spend a lot.").await;
    seed::start_run(&store, &item).await;
    let run = seed::active_run(&store, &item).await;
    store
        .spend()
        .record_run_spend(run.id, &spent(7.0), &[])
        .await
        .unwrap();
    assert!(store
        .spend()
        .budget_notices(&repo, &budgets, Utc::now())
        .await
        .unwrap()
        .is_empty());
    store
        .spend()
        .record_run_spend(run.id, &spent(8.5), &[])
        .await
        .unwrap();
    let notices = store
        .spend()
        .budget_notices(&repo, &budgets, Utc::now())
        .await
        .unwrap();
    assert_eq!(notices.len(), 1);
    assert_eq!(
        notices[0].to_string(),
        "octocat/hello-world has spent $8.50 of its $10.00 monthly budget (85%)"
    );
    assert!(store
        .spend()
        .budget_notices(&repo, &budgets, Utc::now())
        .await
        .unwrap()
        .is_empty());
    let month = store
        .spend()
        .month_spend(Some(&repo), Utc::now())
        .await
        .unwrap();
    assert_eq!(month.cost_usd, 8.5);
    assert_eq!(month.top_items[0].feedback_id, Some(item.id));
    assert_eq!(month.by_stage[0].name, "code");
}
