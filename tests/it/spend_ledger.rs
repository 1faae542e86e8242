//! The spend ledger in the store: every model call reserved at its worst case before it
//! leaves, while its run, its repository's month and the day have something left, shared
//! by runs at once and by two processes on one database; settled with what was metered; a call never
//! settled charged all it reserved.

use handoff_test_support as support;

use chrono::Utc;
use handoff::domain::budgets::SpendLimit;
use handoff::domain::call_reservation::{
    CallAsk, CallBudgets, CallCharge, CallRefusal, PlanBudget,
};
use handoff::domain::claude_plan::ClaudePlan;
use handoff::domain::{PaidWith, RepoId, RunId, SandboxBackend, Stage};
use handoff::store::spend_ledger::LedgerRun;
use handoff::store::StageRunRequest;
use handoff::Store;
use support::seed::{self, DEMO_REPO};

/// A call whose worst case is $0.30 and which is charged $0.30.
fn thirty_cents() -> CallAsk {
    CallAsk {
        model: "claude-sonnet-4-5".to_owned(),
        usd: 0.30,
        tokens: 20_000,
        unpriced: false,
    }
}

async fn review_run(store: &Store, repo_id: RepoId, pr_number: u64) -> RunId {
    store
        .stage_runs()
        .start_stage_run(&StageRunRequest {
            repo_id,
            pr_number: Some(pr_number),
            feedback_id: None,
            stage: Stage::Review,
            backend: SandboxBackend::Docker,
            agent_preset: "claude".to_owned(),
            parent_run_id: None,
            quota_units: 1,
        })
        .await
        .unwrap()
        .id
}

fn ledger_run(run_id: RunId, repo_id: RepoId, month_usd: Option<f64>) -> LedgerRun {
    LedgerRun {
        run_id,
        repo_id,
        own_chain: None,
        budgets: CallBudgets {
            run: SpendLimit {
                usd: Some(5.0),
                tokens: None,
            },
            repo: DEMO_REPO.to_owned(),
            repo_month_usd: month_usd,
            day_usd: None,
            plan_credit: None,
        },
    }
}

/// Makes calls of `ask` for `run`, each settled at its worst case, until one is refused;
/// how many went.
async fn spend_until_refused(store: Store, run: LedgerRun, ask: CallAsk) -> (u32, CallRefusal) {
    let mut calls = 0;
    loop {
        match store
            .spend()
            .reserve_model_call(&run, &ask, Utc::now())
            .await
            .unwrap()
        {
            Ok(entry) => {
                calls += 1;
                // Let the other run in before this call settles.
                tokio::task::yield_now().await;
                store
                    .spend()
                    .settle_model_call(
                        entry,
                        &CallCharge {
                            usd: ask.usd,
                            tokens: ask.tokens,
                            unread: false,
                        },
                        Utc::now(),
                    )
                    .await
                    .unwrap();
            }
            Err(refusal) => return (calls, refusal),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_runs_in_two_processes_share_one_month_and_never_pass_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    // The other process: its own pool of connections on the same database.
    let other_process = Store::open_in(dir.path()).await.unwrap();
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let first = review_run(&store, repo.id, 1).await;
    let second = review_run(&store, repo.id, 2).await;

    let (one, two) = tokio::join!(
        tokio::spawn(spend_until_refused(
            store.clone(),
            ledger_run(first, repo.id, Some(1.0)),
            thirty_cents()
        )),
        tokio::spawn(spend_until_refused(
            other_process.clone(),
            ledger_run(second, repo.id, Some(1.0)),
            thirty_cents()
        )),
    );
    let ((one, refused_one), (two, refused_two)) = (one.unwrap(), two.unwrap());

    // Calls go while the month has something left: four of $0.30 between the two runs,
    // the last taking it past $1.00 by at most its own worst case, never a fifth.
    assert_eq!(one + two, 4, "{one} and {two} calls");
    assert!(
        matches!(refused_one, CallRefusal::MonthSpent { .. }),
        "{refused_one}"
    );
    assert!(
        matches!(refused_two, CallRefusal::MonthSpent { .. }),
        "{refused_two}"
    );
    let month = store
        .spend()
        .spent_so_far(repo.id, Utc::now())
        .await
        .unwrap()
        .repo_month_usd;
    assert!((month - 1.20).abs() < 1e-9, "{month}");
    assert!(
        refused_one.to_string().contains("$1.20 charged or held"),
        "{refused_one}"
    );
}

#[tokio::test]
async fn a_call_under_way_counts_against_the_month_before_its_run_ends() {
    let (_dir, store) = support::temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let run = review_run(&store, repo.id, 1).await;
    let entry = store
        .spend()
        .reserve_model_call(&ledger_run(run, repo.id, None), &thirty_cents(), Utc::now())
        .await
        .unwrap()
        .unwrap();

    let month = store
        .spend()
        .spent_so_far(repo.id, Utc::now())
        .await
        .unwrap();
    assert!(
        (month.repo_month_usd - 0.30).abs() < 1e-9,
        "held: {month:?}"
    );
    assert!((month.day_usd - 0.30).abs() < 1e-9, "{month:?}");

    store
        .spend()
        .settle_model_call(
            entry,
            &CallCharge {
                usd: 0.05,
                tokens: 3_000,
                unread: false,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let month = store
        .spend()
        .spent_so_far(repo.id, Utc::now())
        .await
        .unwrap();
    assert!(
        (month.repo_month_usd - 0.05).abs() < 1e-9,
        "settled: {month:?}"
    );
}

#[tokio::test]
async fn a_call_never_settled_is_charged_all_it_reserved_when_its_run_ends() {
    let (_dir, store) = support::temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let run = review_run(&store, repo.id, 1).await;
    let ledger = ledger_run(run, repo.id, None);
    let settled = store
        .spend()
        .reserve_model_call(&ledger, &thirty_cents(), Utc::now())
        .await
        .unwrap()
        .unwrap();
    store
        .spend()
        .settle_model_call(
            settled,
            &CallCharge {
                usd: 0.10,
                tokens: 5_000,
                unread: false,
            },
            Utc::now(),
        )
        .await
        .unwrap();
    store
        .spend()
        .reserve_model_call(&ledger, &thirty_cents(), Utc::now())
        .await
        .unwrap()
        .unwrap();

    let closed = store
        .spend()
        .close_run_ledger(run, Utc::now())
        .await
        .unwrap();

    assert_eq!(closed.calls, 2);
    assert_eq!(closed.unread_calls, 1);
    assert!((closed.charged_usd - 0.40).abs() < 1e-9, "{closed:?}");
    assert_eq!(closed.charged_tokens, 25_000);
}

#[tokio::test]
async fn a_runs_own_budget_holds_its_calls_whatever_the_month_has_left() {
    let (_dir, store) = support::temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let run = review_run(&store, repo.id, 1).await;
    let mut ledger = ledger_run(run, repo.id, Some(100.0));
    ledger.budgets.run = SpendLimit {
        usd: Some(0.5),
        tokens: None,
    };
    let (calls, refusal) = spend_until_refused(store.clone(), ledger, thirty_cents()).await;
    assert_eq!(
        calls, 2,
        "$0.20 left after the first; spent after the second"
    );
    assert!(matches!(refusal, CallRefusal::RunSpent { .. }), "{refusal}");
}

/// The ledger run of a run the owner's Claude Pro plan pays for, with no other budget.
fn on_the_plan(run_id: RunId, repo_id: RepoId) -> LedgerRun {
    let mut run = ledger_run(run_id, repo_id, None);
    run.budgets.run = SpendLimit::none();
    run.budgets.plan_credit = Some(PlanBudget {
        plan: "Claude Pro".to_owned(),
        usd: ClaudePlan::Pro.monthly_credit_usd(),
    });
    run
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_on_the_plan_of_two_repositories_share_its_monthly_credit() {
    let (_dir, store) = support::temp_store().await;
    let first_repo = seed::add_repo(&store, DEMO_REPO).await;
    let second_repo = seed::add_repo(&store, "octo/other").await;
    let first = review_run(&store, first_repo.id, 1).await;
    let second = review_run(&store, second_repo.id, 2).await;
    let by_api_key = review_run(&store, second_repo.id, 3).await;
    for run in [first, second] {
        store
            .spend()
            .set_run_paid_with(run, PaidWith::ClaudePlan)
            .await
            .unwrap();
    }
    store
        .spend()
        .set_run_paid_with(by_api_key, PaidWith::ApiKey)
        .await
        .unwrap();
    let six_dollars = CallAsk {
        usd: 6.0,
        tokens: 300_000,
        ..thirty_cents()
    };

    let (one, two) = tokio::join!(
        tokio::spawn(spend_until_refused(
            store.clone(),
            on_the_plan(first, first_repo.id),
            six_dollars.clone()
        )),
        tokio::spawn(spend_until_refused(
            store.clone(),
            on_the_plan(second, second_repo.id),
            six_dollars.clone()
        )),
    );
    let ((one, refused), (two, _)) = (one.unwrap(), two.unwrap());

    // $0, $6, $12 and $18 each leave the $20 credit something: four calls go between
    // the two repositories' runs, and never a fifth.
    assert_eq!(one + two, 4, "{one} and {two} calls");
    assert!(
        matches!(refused, CallRefusal::PlanCreditSpent { .. }),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .starts_with("the Claude Pro plan's monthly credit ($20.00) is spent: $24.00"),
        "{refused}"
    );
    assert!((store.spend().plan_month_charged(Utc::now()).await.unwrap() - 24.0).abs() < 1e-9);
    // A run the API key pays for is not held to the plan's credit, nor counted in it.
    let api_key_call = store
        .spend()
        .reserve_model_call(
            &ledger_run(by_api_key, second_repo.id, None),
            &thirty_cents(),
            Utc::now(),
        )
        .await
        .unwrap();
    assert!(api_key_call.is_ok(), "{api_key_call:?}");
    assert!((store.spend().plan_month_charged(Utc::now()).await.unwrap() - 24.0).abs() < 1e-9);
}
