//! The budgets and prices as both front ends save them (the window's Spend panel,
//! `handoff spend set`): every field is read before any is kept, so one that does not
//! read saves none of them, and saving shows the month again with what was kept.

use handoff_test_support as support;

use handoff::error_code::ErrorCode;
use handoff_api::spend::{save_budget_settings, spend_view, BudgetSettingsInput};
use handoff_api::AppCore;
use support::temp_store;

/// A change that spoils one field of good budgets.
type Spoil = fn(&mut BudgetSettingsInput);

fn good_budgets() -> BudgetSettingsInput {
    BudgetSettingsInput {
        run_usd: "2.50".to_owned(),
        run_tokens: "400000".to_owned(),
        day_usd: "20".to_owned(),
        own_prices: "my-model 1 2".to_owned(),
        claude_plan: String::new(),
        plan_past_credit: String::new(),
    }
}

#[tokio::test]
async fn budgets_are_read_all_together_and_one_that_does_not_read_saves_none() {
    let (dir, store) = temp_store().await;
    let core = AppCore::new(store, dir.path());
    let before = spend_view(&core, None).await.unwrap().settings;
    assert_eq!(
        before.run_usd, "5",
        "a run's budget is $5 until the owner says"
    );

    let refusals: [(Spoil, &str); 6] = [
        (|input| input.run_usd = "ten".to_owned(), "Per run"),
        (|input| input.day_usd = "-3".to_owned(), "Per day"),
        (
            |input| input.run_tokens = "lots".to_owned(),
            "Tokens per run",
        ),
        (
            |input| input.own_prices = "my-model one 2".to_owned(),
            "Your prices",
        ),
        (|input| input.claude_plan = "gold".to_owned(), "Claude plan"),
        (
            |input| input.plan_past_credit = "maybe".to_owned(),
            "Past the plan's credit",
        ),
    ];
    for (spoil, field) in refusals {
        let mut input = good_budgets();
        spoil(&mut input);
        let refused = save_budget_settings(&core, &input, None)
            .await
            .expect_err("refused");
        assert_eq!(refused.code, ErrorCode::InvalidInput, "{}", refused.message);
        assert!(refused.message.starts_with(field), "{}", refused.message);
        let kept = spend_view(&core, None).await.unwrap().settings;
        assert_eq!(
            (kept.run_usd, kept.run_tokens, kept.day_usd, kept.own_prices),
            (
                before.run_usd.clone(),
                before.run_tokens.clone(),
                before.day_usd.clone(),
                before.own_prices.clone()
            ),
            "a refused {field} saves none of the others"
        );
    }

    let saved = save_budget_settings(&core, &good_budgets(), None)
        .await
        .unwrap()
        .settings;
    assert_eq!(saved.run_usd, "2.50");
    assert_eq!(saved.run_tokens, "400000");
    assert_eq!(saved.day_usd, "20");
    assert_eq!(saved.own_prices, "my-model 1 2");
    assert!(
        saved
            .prices
            .iter()
            .any(|price| price.model == "my-model" && price.own),
        "the owner's price is among the prices: {:?}",
        saved.prices
    );

    // Emptied, a day has no limit again and a run goes back to the default.
    let emptied = save_budget_settings(&core, &BudgetSettingsInput::default(), None)
        .await
        .unwrap()
        .settings;
    assert_eq!(
        (emptied.run_usd.as_str(), emptied.day_usd.as_str()),
        ("5", "")
    );
}
