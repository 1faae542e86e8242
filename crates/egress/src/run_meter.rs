//! The meter of one run, kept by its key forwarder: every model call reserved at its
//! worst case before it leaves, and its tokens, cost and steps read from the provider's
//! own answer as it streams past, which settles the reservation.
//!
//! Because the meter stands outside the sandbox, the agent can neither hide nor misstate
//! what it spent. A call is let through only when its run's budget can hold its worst
//! case on top of what the run has charged and holds already, and, through the meter's
//! [`CallLedger`], when the repository's month and the day can too: calls at once and
//! runs at once share those. A refused call gets an error in the provider's own shape,
//! so the agent stops as it would when its account runs dry.
//!
//! Every answer is settled: read to its end even when the agent stops reading (up to
//! [`DRAIN_AT_MOST`]), and charged all it reserved when its usage cannot be read.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use chrono::Utc;
use futures::{Stream, StreamExt as _};
use serde::{Deserialize, Serialize};

use super::call_ledger::{CallLedger, LedgerEntry, LedgerRefusal};
use super::provider_answer::{AnswerReader, ModelApi};
use handoff_domain::agent_step::{AgentStep, STEPS_KEPT_BYTES_PER_RUN};
pub use handoff_domain::budgets::SpendLimit;
use handoff_domain::call_reservation::{CallAsk, CallBudgets, CallCharge, Committed};
use handoff_domain::model_prices::{PriceTable, TokenUsage};

/// How long, and how much, an answer the agent stopped reading is read on for its usage.
pub const DRAIN_AT_MOST: (Duration, usize) = (Duration::from_secs(10 * 60), 64 * 1024 * 1024);

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
    /// What the budgets were charged: the priced calls' cost, the unpriced ones at the
    /// dearest price, and unread answers at their whole reservation.
    #[serde(default)]
    pub charged_usd: f64,
    #[serde(default)]
    pub charged_tokens: u64,
    pub calls: u64,
    /// Calls refused because a budget could not hold them.
    pub refused_calls: u64,
    /// Answers whose usage could not be read (charged their whole reservation).
    #[serde(default)]
    pub unread_calls: u64,
}

/// A call let through and not yet settled.
#[derive(Debug, Clone)]
struct HeldCall {
    ask: CallAsk,
    entry: Option<LedgerEntry>,
}

#[derive(Debug, Default)]
struct MeterState {
    steps: Vec<AgentStep>,
    spend: MeteredSpend,
    detail_bytes: usize,
    held: HashMap<u64, HeldCall>,
    next_reservation: u64,
    /// Settlements still being written to the ledger.
    writing: Vec<tokio::task::JoinHandle<()>>,
    /// Why the meter stopped seeing the run's calls, when it did (its gate stopped).
    lost: Option<String>,
    /// Why the last call refused was refused.
    last_refusal: Option<String>,
}

/// A run's meter: shared by the forwarder that fills it and the run that reads it.
#[derive(Debug)]
pub struct RunMeter {
    limit: SpendLimit,
    prices: PriceTable,
    ledger: Option<Arc<dyn CallLedger>>,
    state: Mutex<MeterState>,
    /// How many calls have settled, for those who wait on it.
    settled_calls: tokio::sync::watch::Sender<u64>,
}

impl RunMeter {
    /// A meter that holds the run's own `limit` by itself.
    pub fn new(limit: SpendLimit, prices: PriceTable) -> Arc<RunMeter> {
        RunMeter::with_ledger(limit, prices, None)
    }

    /// A meter that also reserves each call in `ledger`.
    pub fn with_ledger(
        limit: SpendLimit,
        prices: PriceTable,
        ledger: Option<Arc<dyn CallLedger>>,
    ) -> Arc<RunMeter> {
        Arc::new(RunMeter {
            limit,
            prices,
            ledger,
            state: Mutex::new(MeterState::default()),
            settled_calls: tokio::sync::watch::Sender::new(0),
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

    /// Whether a call was refused for a budget.
    pub fn budget_reached(&self) -> bool {
        self.spend().refused_calls > 0
    }

    /// Calls let through whose answers have not been settled yet.
    pub fn calls_under_way(&self) -> usize {
        self.state().held.len()
    }

    /// Says that the meter stopped seeing the run's calls, and why.
    pub fn lose(&self, why: impl Into<String>) {
        let mut state = self.state();
        if state.lost.is_none() {
            state.lost = Some(why.into());
        }
    }

    /// Why the last refused call was refused, if one was.
    pub fn last_refusal(&self) -> Option<String> {
        self.state().last_refusal.clone()
    }

    /// Why the meter stopped seeing the run's calls, if it did.
    pub fn lost(&self) -> Option<String> {
        self.state().lost.clone()
    }

    /// Lets a call of worst case `ask` through, or says which budget cannot hold it. The
    /// reservation's number, to settle it with.
    pub async fn reserve(&self, ask: CallAsk) -> Result<u64, LedgerRefusal> {
        let (id, within_run) = {
            let mut state = self.state();
            let held_usd: f64 = state.held.values().map(|held| held.ask.usd).sum();
            let held_tokens: u64 = state.held.values().map(|held| held.ask.tokens).sum();
            let committed = Committed {
                run_usd: state.spend.charged_usd + held_usd,
                run_tokens: state.spend.charged_tokens + held_tokens,
                ..Committed::default()
            };
            let own = CallBudgets {
                run: self.limit,
                repo: String::new(),
                repo_month_usd: None,
                day_usd: None,
                plan_credit: None,
            };
            let within_run = own.check(&ask, committed);
            let id = state.next_reservation;
            state.next_reservation += 1;
            if within_run.is_ok() {
                state.held.insert(
                    id,
                    HeldCall {
                        ask: ask.clone(),
                        entry: None,
                    },
                );
            } else {
                state.spend.refused_calls += 1;
            }
            if let Err(refusal) = &within_run {
                state.last_refusal = Some(refusal.to_string());
            }
            (id, within_run)
        };
        within_run?;
        let Some(ledger) = &self.ledger else {
            return Ok(id);
        };
        match ledger.reserve(ask).await {
            Ok(entry) => {
                if let Some(held) = self.state().held.get_mut(&id) {
                    held.entry = Some(entry);
                }
                Ok(id)
            }
            Err(refusal) => {
                let mut state = self.state();
                state.held.remove(&id);
                state.spend.refused_calls += 1;
                state.last_refusal = Some(refusal.to_string());
                Err(refusal)
            }
        }
    }

    /// The worst case of reservation `id`, while it is held.
    pub fn held_ask(&self, id: u64) -> Option<CallAsk> {
        self.state().held.get(&id).map(|held| held.ask.clone())
    }

    /// Settles reservation `id` with the call's `step` as the answer was read (`None`:
    /// it could not be read at all, and is charged all it reserved).
    pub fn settle(&self, id: u64, step: AgentStep) {
        let Some(held) = self.state().held.remove(&id) else {
            tracing::warn!(
                reservation = id,
                "a model call was settled twice or never reserved"
            );
            return;
        };
        let charge = self.charge_of(&held.ask, &step);
        self.record(step.clone(), charge);
        if let (Some(ledger), Some(entry)) = (&self.ledger, held.entry) {
            let written = ledger.settle(entry, charge, step);
            let writing = tokio::spawn(written);
            self.state().writing.push(writing);
        }
        self.settled_calls.send_modify(|settled| *settled += 1);
    }

    /// What a call of worst case `ask` is charged for `step`: its cost (at the dearest
    /// price when its model has none), or all it reserved when its usage was unread.
    fn charge_of(&self, ask: &CallAsk, step: &AgentStep) -> CallCharge {
        if step.usage_unread {
            return CallCharge::whole(ask);
        }
        CallCharge {
            usd: step
                .cost_usd
                .unwrap_or_else(|| self.prices.dearest().cost_of(&step.usage)),
            tokens: step.usage.total(),
            unread: false,
        }
    }

    /// Waits until `calls` calls in all have settled (an answer the agent stopped reading
    /// settles once it has been read to its end).
    pub async fn wait_until_settled(&self, calls: u64) {
        let mut settled = self.settled_calls.subscribe();
        let waited = settled
            .wait_for(|settled| *settled >= calls)
            .await
            .map(|_| ());
        if let Err(error) = waited {
            tracing::warn!(%error, "a meter stopped while it was waited on");
        }
    }

    /// Waits until every settlement has reached the ledger.
    pub async fn settled(&self) {
        let writing = std::mem::take(&mut self.state().writing);
        for written in writing {
            if let Err(error) = written.await {
                tracing::warn!(%error, "a model call's settlement could not be written");
            }
        }
    }

    /// Adds one finished call, charged `charge`.
    fn record(&self, step: AgentStep, charge: CallCharge) {
        let mut state = self.state();
        state.spend.calls += 1;
        state.spend.usage.add(&step.usage);
        state.spend.charged_usd += charge.usd;
        state.spend.charged_tokens += charge.tokens;
        if step.usage_unread {
            state.spend.unread_calls += 1;
        }
        match step.cost_usd {
            Some(cost) => state.spend.cost_usd += cost,
            None => {
                state.spend.unpriced_tokens += step.usage.total();
                state.spend.unpriced_at_most_usd += charge.usd;
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

    /// The provider-shaped refusal of a call that a budget cannot hold.
    pub fn refusal(&self, api: Option<ModelApi>, refusal: &LedgerRefusal) -> Response {
        let spend = self.spend();
        let message = match refusal {
            LedgerRefusal::Budget(refusal) => format!(
                "Handoff: {refusal}. Raise the budget in Handoff's settings and retry the run."
            ),
            LedgerRefusal::Unavailable(_) => format!("Handoff: {refusal}; the call was not sent."),
        };
        tracing::info!(
            charged_usd = spend.charged_usd,
            tokens = spend.usage.total(),
            %refusal,
            "a run's model call was refused"
        );
        provider_error(api, StatusCode::BAD_REQUEST, "budget_reached", &message)
    }

    /// The provider's answer to a call of `api` (whose request is `request`), passed on
    /// as it streams and read on the side; its end settles reservation `reservation`.
    pub fn metered_body(
        self: &Arc<Self>,
        reservation: u64,
        request: &super::model_request::ModelRequest,
        status: u16,
        content_type: Option<&str>,
        began: (Instant, chrono::DateTime<Utc>),
        answer: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    ) -> Body {
        Body::from_stream(MeteredStream {
            inner: Some(Box::pin(answer)),
            pending: Some(PendingStep {
                reader: AnswerReader::new(request.api, content_type),
                requested_model: request.model.clone(),
                reservation,
                status,
                began,
                meter: self.clone(),
            }),
        })
    }
}

/// An error in the shape of `api`'s provider. A 400 is what each provider answers for a
/// request it will not serve however often it is tried, so that no agent retries it.
pub fn provider_error(
    api: Option<ModelApi>,
    status: StatusCode,
    code: &str,
    message: &str,
) -> Response {
    let body = match api {
        Some(ModelApi::AnthropicMessages) => serde_json::json!({
            "type": "error",
            "error": { "type": "invalid_request_error", "message": message },
        }),
        _ => serde_json::json!({
            "error": { "message": message, "type": "invalid_request_error",
                       "param": null, "code": code },
        }),
    };
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A step whose answer is still passing.
struct PendingStep {
    reader: AnswerReader,
    requested_model: Option<String>,
    reservation: u64,
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
            .or(self.requested_model)
            .unwrap_or_else(|| "unknown".to_owned());
        let cost_usd = self.meter.prices.cost_of(&model, &reading.usage);
        // A provider bills nothing for a call it refused; an answer it served whose
        // usage cannot be read is charged all it reserved.
        let usage_unread = !reading.usage_reported && (200..300).contains(&self.status);
        let step = AgentStep {
            model,
            began_at: self.began.1,
            duration_ms: u64::try_from(self.began.0.elapsed().as_millis()).unwrap_or(u64::MAX),
            status: self.status,
            usage: reading.usage,
            cost_usd: if usage_unread {
                self.meter
                    .held_ask(self.reservation)
                    .filter(|ask| !ask.unpriced)
                    .map(|ask| ask.usd)
            } else {
                cost_usd
            },
            tool_calls: reading.tool_calls,
            text: reading.text,
            details_left_out: false,
            usage_unread,
        };
        if usage_unread {
            tracing::warn!(
                model = %step.model,
                "a model answer's usage could not be read; the call is charged all it reserved"
            );
        }
        self.meter.settle(self.reservation, step);
    }
}

type AnswerStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The answer's bytes, passed on untouched, with a reader looking at each piece.
struct MeteredStream {
    inner: Option<AnswerStream>,
    pending: Option<PendingStep>,
}

impl Stream for MeteredStream {
    type Item = reqwest::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = inner.as_mut().poll_next(context);
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
    /// An answer the agent stopped reading is read on to its end (within
    /// [`DRAIN_AT_MOST`]) for the usage it reports last.
    fn drop(&mut self) {
        let Some(mut pending) = self.pending.take() else {
            return;
        };
        let (Some(mut inner), Ok(runtime)) =
            (self.inner.take(), tokio::runtime::Handle::try_current())
        else {
            pending.finish();
            return;
        };
        runtime.spawn(async move {
            let (most_time, most_bytes) = DRAIN_AT_MOST;
            let mut read = 0_usize;
            let drained = tokio::time::timeout(most_time, async {
                while let Some(Ok(bytes)) = inner.next().await {
                    read += bytes.len();
                    pending.reader.feed(&bytes);
                    if read > most_bytes {
                        break;
                    }
                }
            })
            .await;
            if drained.is_err() {
                tracing::warn!("a model answer the agent stopped reading did not end in time");
            }
            pending.finish();
        });
    }
}

#[cfg(test)]
#[path = "run_meter_tests.rs"]
mod tests;
