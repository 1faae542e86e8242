//! What an agent reports of its model calls as it runs, read from its output line by
//! line: where no key forwarder stands (E2B, whose egress rule adds the key), the only
//! account of a run's spend while it runs.
//!
//! - Claude Code (`--output-format stream-json`): each `assistant` event carries its
//!   message's `usage` (input, cache-creation, cache-read and output tokens); a message
//!   told in several events is counted once, at its latest figures.
//! - Codex (`exec --json`): a `turn.completed` event per turn with its `usage` (input,
//!   of which cached, and output tokens); it names no model, so its tokens are priced at
//!   the table's dearest price unless a model was named earlier in the output.
//!
//! Each report is priced as the meter prices an answer (the dearest price for a model
//! with no price), and what it adds to the run is given as a [`ReportedCall`].

use std::collections::HashMap;

use serde_json::Value;

use crate::domain::model_prices::{PriceTable, TokenUsage};

/// What one line of the agent's output adds to its reported spend.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedCall {
    pub model: String,
    /// Dollars added (at the dearest price when the model has none).
    pub usd: f64,
    /// Tokens added.
    pub tokens: u64,
}

/// The agent's reports so far.
#[derive(Debug, Default)]
pub struct ReportedSpend {
    /// What each Claude message was counted at so far: dollars and tokens.
    messages: HashMap<String, (f64, u64)>,
    /// The model the output named last (Codex's turns name none).
    model: Option<String>,
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
}

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

impl ReportedSpend {
    /// Reads the next piece of the agent's output; what its complete lines add.
    pub fn feed(&mut self, bytes: &[u8], prices: &PriceTable) -> Vec<ReportedCall> {
        let mut added = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            self.pending.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.pending);
            added.extend(self.line(&String::from_utf8_lossy(&line), prices));
            rest = &rest[end + 1..];
        }
        // A line longer than any event is not one: it is dropped.
        if self.pending.len() + rest.len() <= 4 * 1024 * 1024 {
            self.pending.extend_from_slice(rest);
        } else {
            self.pending.clear();
        }
        added
    }

    fn price(&self, model: &str, usage: &TokenUsage, prices: &PriceTable) -> f64 {
        prices
            .cost_of(model, usage)
            .unwrap_or_else(|| prices.dearest().cost_of(usage))
    }

    fn line(&mut self, line: &str, prices: &PriceTable) -> Option<ReportedCall> {
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        let event: Value = serde_json::from_str(line).ok()?;
        match event["type"].as_str()? {
            "system" if event["model"].is_string() => {
                self.model = event["model"].as_str().map(str::to_owned);
                None
            }
            "assistant" => {
                let message = &event["message"];
                let model = message["model"].as_str().unwrap_or("unknown").to_owned();
                let usage = &message["usage"];
                if !usage.is_object() {
                    return None;
                }
                let usage = TokenUsage {
                    input: count(&usage["input_tokens"]),
                    cache_write: count(&usage["cache_creation_input_tokens"]),
                    cache_write_hour: count(&usage["cache_creation"]["ephemeral_1h_input_tokens"]),
                    cache_read: count(&usage["cache_read_input_tokens"]),
                    output: count(&usage["output_tokens"]),
                    reasoning: 0,
                };
                let usd = self.price(&model, &usage, prices);
                let id = message["id"].as_str().unwrap_or_default().to_owned();
                let (counted_usd, counted_tokens) =
                    self.messages.get(&id).copied().unwrap_or_default();
                let (new_usd, new_tokens) =
                    (usd.max(counted_usd), usage.total().max(counted_tokens));
                if !id.is_empty() {
                    self.messages.insert(id, (new_usd, new_tokens));
                }
                self.model = Some(model.clone());
                let call = ReportedCall {
                    model,
                    usd: new_usd - counted_usd,
                    tokens: new_tokens - counted_tokens,
                };
                (call.usd > 0.0 || call.tokens > 0).then_some(call)
            }
            "turn.completed" => {
                let usage = &event["usage"];
                let input = count(&usage["input_tokens"]);
                let cached = count(&usage["cached_input_tokens"]).min(input);
                let usage = TokenUsage {
                    input: input - cached,
                    cache_write: 0,
                    cache_write_hour: 0,
                    cache_read: cached,
                    output: count(&usage["output_tokens"]),
                    reasoning: 0,
                };
                let model = self.model.clone().unwrap_or_else(|| "unknown".to_owned());
                Some(ReportedCall {
                    usd: self.price(&model, &usage, prices),
                    tokens: usage.total(),
                    model,
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_message_told_in_several_events_is_counted_once() {
        let prices = PriceTable::default();
        let mut spend = ReportedSpend::default();
        let event = |output: u64| {
            format!(
                "{}\n",
                serde_json::json!({"type": "assistant", "message": {"id": "msg_1",
                    "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1000,
                    "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                    "output_tokens": output}}})
            )
        };
        let first = spend.feed(event(100).as_bytes(), &prices);
        assert_eq!(first.len(), 1);
        assert!((first[0].usd - (1000.0 * 3.0 + 100.0 * 15.0) / 1e6).abs() < 1e-12);
        // The same message again, its output grown: only the difference is added.
        let again = spend.feed(event(300).as_bytes(), &prices);
        assert!(
            (again[0].usd - 200.0 * 15.0 / 1e6).abs() < 1e-12,
            "{again:?}"
        );
        assert_eq!(again[0].tokens, 200);
        assert!(spend.feed(event(300).as_bytes(), &prices).is_empty());
    }

    #[test]
    fn codex_turns_are_counted_each_and_a_line_may_come_in_pieces() {
        let prices = PriceTable::default();
        let mut spend = ReportedSpend::default();
        let line = serde_json::json!({"type": "turn.completed", "usage": {"input_tokens": 2000,
            "cached_input_tokens": 500, "output_tokens": 100}})
        .to_string();
        let (head, tail) = line.split_at(20);
        assert!(spend.feed(head.as_bytes(), &prices).is_empty());
        let calls = spend.feed(format!("{tail}\n").as_bytes(), &prices);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].model, "unknown");
        assert_eq!(calls[0].tokens, 2100);
        // No model named: the dearest price ($15, $1.50 cached, $75 a million).
        let dearest = prices.dearest();
        let expected =
            (1500.0 * dearest.input + 500.0 * dearest.cache_read + 100.0 * dearest.output) / 1e6;
        assert!((calls[0].usd - expected).abs() < 1e-12, "{calls:?}");
        assert!(spend
            .feed(b"plain text from the agent\n", &prices)
            .is_empty());
    }
}
