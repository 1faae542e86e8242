//! The meter of one run, kept by its key forwarder: every model call's tokens, cost and
//! steps, read from the provider's own answer as it streams past, and the run's budget,
//! which the forwarder holds by refusing the next call once it is spent.
//!
//! Because the meter stands outside the sandbox, the agent can neither hide nor misstate
//! what it spent. A call already under way when the budget runs out finishes; the next
//! one gets an error in the provider's own shape, so the agent stops as it would when
//! its account runs dry.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use chrono::Utc;
use futures::Stream;
use serde::{Deserialize, Serialize};

use super::provider_answer::{AnswerReader, ModelApi};
use crate::domain::agent_step::{AgentStep, STEPS_KEPT_BYTES_PER_RUN};
pub use crate::domain::budgets::SpendLimit;
use crate::domain::model_prices::{PriceTable, TokenUsage};

/// What a run spent so far, by the meter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MeteredSpend {
    pub usage: TokenUsage,
    /// Dollars of the calls whose model has a price.
    pub cost_usd: f64,
    /// Tokens of calls whose model has no price (so `cost_usd` leaves them out).
    pub unpriced_tokens: u64,
    /// What the unpriced tokens would cost at the table's dearest price for each kind:
    /// what a dollar budget counts them as, so that it holds for a model with no price.
    pub unpriced_at_most_usd: f64,
    pub calls: u64,
    /// Calls refused because the budget was spent.
    pub refused_calls: u64,
}

#[derive(Debug, Default)]
struct MeterState {
    steps: Vec<AgentStep>,
    spend: MeteredSpend,
    detail_bytes: usize,
}

/// A run's meter: shared by the forwarder that fills it and the run that reads it.
#[derive(Debug)]
pub struct RunMeter {
    limit: SpendLimit,
    prices: PriceTable,
    state: Mutex<MeterState>,
}

impl RunMeter {
    pub fn new(limit: SpendLimit, prices: PriceTable) -> Arc<RunMeter> {
        Arc::new(RunMeter {
            limit,
            prices,
            state: Mutex::new(MeterState::default()),
        })
    }

    /// A meter that only counts.
    pub fn unlimited() -> Arc<RunMeter> {
        RunMeter::new(SpendLimit::none(), PriceTable::default())
    }

    pub fn limit(&self) -> SpendLimit {
        self.limit
    }

    pub fn prices(&self) -> &PriceTable {
        &self.prices
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn spend(&self) -> MeteredSpend {
        self.state().spend
    }

    /// The steps so far, in the order their answers ended.
    pub fn steps(&self) -> Vec<AgentStep> {
        self.state().steps.clone()
    }

    /// Whether the budget is spent: the next call would be refused.
    pub fn budget_spent(&self) -> bool {
        let spend = self.spend();
        self.limit
            .tokens
            .is_some_and(|tokens| spend.usage.total() >= tokens)
            || self
                .limit
                .usd
                .is_some_and(|usd| spend.cost_usd + spend.unpriced_at_most_usd >= usd)
    }

    /// Whether a call was refused for the budget.
    pub fn budget_reached(&self) -> bool {
        self.spend().refused_calls > 0
    }

    /// Adds one finished call.
    pub fn record(&self, step: AgentStep) {
        let mut state = self.state();
        state.spend.calls += 1;
        state.spend.usage.add(&step.usage);
        match step.cost_usd {
            Some(cost) => state.spend.cost_usd += cost,
            None => {
                state.spend.unpriced_tokens += step.usage.total();
                state.spend.unpriced_at_most_usd += self.prices.dearest().cost_of(&step.usage);
            }
        }
        let step = if state.detail_bytes + step.detail_bytes() > STEPS_KEPT_BYTES_PER_RUN {
            step.without_details()
        } else {
            state.detail_bytes += step.detail_bytes();
            step
        };
        state.steps.push(step);
    }

    /// Adds the calls another meter recorded (the egress gate's, for a run in Docker).
    pub fn absorb(&self, steps: Vec<AgentStep>, refused_calls: u64) {
        for step in steps {
            self.record(step);
        }
        self.state().spend.refused_calls += refused_calls;
    }

    /// The provider-shaped refusal of a call once the budget is spent (and counts it).
    pub fn refusal(&self, api: Option<ModelApi>) -> Response {
        let spend = {
            let mut state = self.state();
            state.spend.refused_calls += 1;
            state.spend
        };
        let message = format!(
            "Handoff: this run's budget ({}) is spent: ${:.2} and {} tokens used. Raise the \
             budget in Handoff's settings and retry the run.",
            self.limit.describe(),
            spend.cost_usd,
            spend.usage.total()
        );
        tracing::info!(
            cost_usd = spend.cost_usd,
            tokens = spend.usage.total(),
            "a run's model call was refused: its budget is spent"
        );
        // A 400 is what each provider answers for a request it will not serve however
        // often it is tried, so that no agent retries it.
        let body = match api {
            Some(ModelApi::AnthropicMessages) => serde_json::json!({
                "type": "error",
                "error": { "type": "invalid_request_error", "message": message },
            }),
            _ => serde_json::json!({
                "error": { "message": message, "type": "invalid_request_error",
                           "param": null, "code": "budget_reached" },
            }),
        };
        (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response()
    }

    /// The provider's answer to a call of `api` (whose body was `request`), passed on as
    /// it streams, and read on the side into a step when it ends.
    pub fn metered_body(
        self: &Arc<Self>,
        api: ModelApi,
        request: Bytes,
        status: u16,
        content_type: Option<&str>,
        began: (Instant, chrono::DateTime<Utc>),
        answer: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    ) -> Body {
        Body::from_stream(MeteredStream {
            inner: Box::pin(answer),
            pending: Some(PendingStep {
                reader: AnswerReader::new(api, content_type),
                request,
                status,
                began,
                meter: self.clone(),
            }),
        })
    }
}

/// A step whose answer is still passing.
struct PendingStep {
    reader: AnswerReader,
    /// The request's body, for its model.
    request: Bytes,
    status: u16,
    began: (Instant, chrono::DateTime<Utc>),
    meter: Arc<RunMeter>,
}

impl PendingStep {
    fn finish(self) {
        let reading = self.reader.finish();
        // The answer names its model; the request is read only when it does not.
        let model = reading
            .model
            .or_else(|| requested_model(&self.request))
            .unwrap_or_else(|| "unknown".to_owned());
        let cost_usd = self.meter.prices.cost_of(&model, &reading.usage);
        self.meter.record(AgentStep {
            model,
            began_at: self.began.1,
            duration_ms: u64::try_from(self.began.0.elapsed().as_millis()).unwrap_or(u64::MAX),
            status: self.status,
            usage: reading.usage,
            cost_usd,
            tool_calls: reading.tool_calls,
            text: reading.text,
            details_left_out: false,
        });
    }
}

/// The model a request's body asks for.
fn requested_model(request: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ModelField {
        model: Option<String>,
    }
    serde_json::from_slice::<ModelField>(request)
        .ok()
        .and_then(|body| body.model)
}

/// The answer's bytes, passed on untouched, with a reader looking at each piece.
struct MeteredStream {
    inner: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    pending: Option<PendingStep>,
}

impl Stream for MeteredStream {
    type Item = reqwest::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(context);
        match &polled {
            Poll::Ready(Some(Ok(bytes))) => {
                if let Some(pending) = &mut self.pending {
                    pending.reader.feed(bytes);
                }
            }
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => {
                if let Some(pending) = self.pending.take() {
                    pending.finish();
                }
            }
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for MeteredStream {
    /// An answer the agent stopped reading still counts what it carried so far.
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            pending.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::agent_step::ToolCall;

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
        }
    }

    #[test]
    fn the_budget_is_spent_once_dollars_or_tokens_reach_it() {
        let prices = PriceTable::default();
        let meter = RunMeter::new(
            SpendLimit {
                usd: Some(0.01),
                tokens: None,
            },
            prices.clone(),
        );
        meter.record(step("claude-sonnet-4-5", 1000, 100, &prices));
        assert!(!meter.budget_spent(), "$0.0045 of $0.01");
        meter.record(step("claude-sonnet-4-5", 1000, 400, &prices));
        assert!(meter.budget_spent(), "$0.0135 of $0.01");
        let meter = RunMeter::new(
            SpendLimit {
                usd: None,
                tokens: Some(2000),
            },
            prices.clone(),
        );
        meter.record(step("my-own-model", 1500, 400, &prices));
        assert!(!meter.budget_spent());
        assert_eq!(meter.spend().unpriced_tokens, 1900);
        assert_eq!(meter.spend().cost_usd, 0.0);
        meter.record(step("my-own-model", 50, 50, &prices));
        assert!(meter.budget_spent());
    }

    #[test]
    fn a_dollar_budget_holds_for_a_model_with_no_price() {
        let prices = PriceTable::default();
        let meter = RunMeter::new(
            SpendLimit {
                usd: Some(1.0),
                tokens: None,
            },
            prices.clone(),
        );
        // Counted at the dearest price of each kind among the defaults ($15 a million
        // for input, $75 for output): 20,000 tokens in and 2,000 out come to $0.45.
        assert_eq!(prices.dearest().input, 15.0);
        assert_eq!(prices.dearest().output, 75.0);
        meter.record(step("our-own-model", 20_000, 2_000, &prices));
        meter.record(step("our-own-model", 20_000, 2_000, &prices));
        assert!(!meter.budget_spent(), "$0.90 of $1");
        assert_eq!(
            meter.spend().cost_usd,
            0.0,
            "shown as no price, never as a guess"
        );
        meter.record(step("our-own-model", 20_000, 2_000, &prices));
        assert!(meter.budget_spent(), "$1.35 of $1");
    }

    #[test]
    fn past_five_megabytes_steps_keep_their_figures_only() {
        let prices = PriceTable::default();
        let meter = RunMeter::unlimited();
        let calls = STEPS_KEPT_BYTES_PER_RUN / 1005 + 10;
        for _ in 0..calls {
            meter.record(step("gpt-5", 10, 1, &prices));
        }
        let steps = meter.steps();
        assert_eq!(steps.len(), calls);
        assert!(!steps[0].details_left_out);
        assert!(steps.last().unwrap().details_left_out);
        assert!(steps.last().unwrap().tool_calls[0].input.is_empty());
        assert_eq!(meter.spend().usage.input, 10 * calls as u64);
    }
}
