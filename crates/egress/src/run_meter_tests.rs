//! The meter: calls let through only while the budget holds their worst case, and
//! charged what they used or, when unread, all they reserved.

use super::*;
use handoff_domain::agent_step::ToolCall;

fn step(model: &str, input: u64, output: u64, prices: &PriceTable) -> AgentStep {
    let usage = TokenUsage {
        input,
        output,
        ..TokenUsage::default()
    };
    AgentStep {
        model: model.to_owned(),
        began_at: Utc::now(),
        duration_ms: 10,
        status: 200,
        usage,
        cost_usd: prices.cost_of(model, &usage),
        tool_calls: vec![ToolCall {
            name: "Write".into(),
            input: "x".repeat(1000),
        }],
        text: String::new(),
        details_left_out: false,
        usage_unread: false,
    }
}

fn ask(model: &str, usd: f64, tokens: u64) -> CallAsk {
    CallAsk {
        model: model.to_owned(),
        usd,
        tokens,
        unpriced: false,
    }
}

fn dollars(usd: f64) -> SpendLimit {
    SpendLimit {
        usd: Some(usd),
        tokens: None,
    }
}

#[tokio::test]
async fn calls_at_once_are_let_through_only_while_the_budget_has_something_left() {
    let meter = RunMeter::new(dollars(1.0), PriceTable::default());
    let mut granted = Vec::new();
    for _ in 0..20 {
        if let Ok(id) = meter.reserve(ask("claude-sonnet-4-5", 0.30, 1_000)).await {
            granted.push(id);
        }
    }
    assert_eq!(
        granted.len(),
        4,
        "$0.90 held leaves something of $1; $1.20 none"
    );
    assert_eq!(meter.spend().refused_calls, 16);
    assert!(meter.budget_reached());
    // One settles for less than it reserved: room for one more.
    let prices = PriceTable::default();
    meter.settle(granted[0], step("claude-sonnet-4-5", 10_000, 100, &prices));
    assert!(meter
        .reserve(ask("claude-sonnet-4-5", 0.30, 1_000))
        .await
        .is_ok());
    assert!(meter
        .reserve(ask("claude-sonnet-4-5", 0.30, 1_000))
        .await
        .is_err());
}

#[tokio::test]
async fn a_token_budget_counts_what_calls_hold_and_what_they_used() {
    let prices = PriceTable::default();
    let meter = RunMeter::new(
        SpendLimit {
            usd: None,
            tokens: Some(2_000),
        },
        prices.clone(),
    );
    let first = meter
        .reserve(ask("my-own-model", 0.0, 1_500))
        .await
        .unwrap();
    let second = meter.reserve(ask("my-own-model", 0.0, 600)).await.unwrap();
    assert!(
        meter.reserve(ask("my-own-model", 0.0, 1)).await.is_err(),
        "2,100 tokens held"
    );
    meter.settle(first, step("my-own-model", 1_000, 400, &prices));
    meter.settle(second, step("my-own-model", 50, 50, &prices));
    assert_eq!(meter.spend().unpriced_tokens, 1_500);
    assert_eq!(meter.spend().cost_usd, 0.0);
    assert!(meter.reserve(ask("my-own-model", 0.0, 600)).await.is_ok());
}

#[tokio::test]
async fn a_model_with_no_price_is_charged_at_the_dearest_price() {
    let prices = PriceTable::default();
    let meter = RunMeter::new(dollars(1.0), prices.clone());
    // Counted at the dearest price of each kind among the defaults ($15 a million
    // for input, $75 for output): 20,000 tokens in and 2,000 out come to $0.45.
    assert_eq!(prices.dearest().input, 15.0);
    assert_eq!(prices.dearest().output, 75.0);
    for _ in 0..2 {
        let id = meter
            .reserve(ask("our-own-model", 0.5, 22_000))
            .await
            .unwrap();
        meter.settle(id, step("our-own-model", 20_000, 2_000, &prices));
    }
    let spend = meter.spend();
    assert!((spend.charged_usd - 0.90).abs() < 1e-9, "{spend:?}");
    assert_eq!(spend.cost_usd, 0.0, "shown as no price, never as a guess");
    assert!(meter
        .reserve(ask("our-own-model", 0.5, 22_000))
        .await
        .is_ok());
    assert!(meter
        .reserve(ask("our-own-model", 0.5, 22_000))
        .await
        .is_err());
}

#[tokio::test]
async fn an_answer_whose_usage_is_unread_is_charged_all_it_reserved() {
    let prices = PriceTable::default();
    let meter = RunMeter::new(dollars(5.0), prices.clone());
    let id = meter.reserve(ask("gpt-5", 1.28, 128_100)).await.unwrap();
    let mut unread = step("gpt-5", 0, 0, &prices);
    unread.usage_unread = true;
    meter.settle(id, unread);
    let spend = meter.spend();
    assert!((spend.charged_usd - 1.28).abs() < 1e-9, "{spend:?}");
    assert_eq!(spend.charged_tokens, 128_100);
    assert_eq!(spend.unread_calls, 1);
}

#[tokio::test]
async fn past_five_megabytes_steps_keep_their_figures_only() {
    let prices = PriceTable::default();
    let meter = RunMeter::unlimited();
    let calls = STEPS_KEPT_BYTES_PER_RUN / 1005 + 10;
    for _ in 0..calls {
        let id = meter.reserve(ask("gpt-5", 0.0, 11)).await.unwrap();
        meter.settle(id, step("gpt-5", 10, 1, &prices));
    }
    let steps = meter.steps();
    assert_eq!(steps.len(), calls);
    assert!(!steps[0].details_left_out);
    assert!(steps.last().unwrap().details_left_out);
    assert!(steps.last().unwrap().tool_calls[0].input.is_empty());
    assert_eq!(meter.spend().usage.input, 10 * calls as u64);
}
