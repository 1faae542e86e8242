//! One step of an agent, as its key forwarder saw it: a model call with its tokens,
//! cost and duration, the tool calls the model asked for and the text it wrote. This is
//! what a run paid for, step by step, measured outside the agent.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::model_prices::TokenUsage;

/// The longest a tool call's input is kept.
pub const TOOL_INPUT_KEPT_BYTES: usize = 2 * 1024;
/// The longest the model's text of one step is kept.
pub const STEP_TEXT_KEPT_BYTES: usize = 2 * 1024;
/// The most a run's steps may take together; later steps keep only their figures.
pub const STEPS_KEPT_BYTES_PER_RUN: usize = 5 * 1024 * 1024;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// Its input as the model wrote it (JSON, a command, a patch), cut to
    /// [`TOOL_INPUT_KEPT_BYTES`].
    pub input: String,
}

/// One model call of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    /// The model as the provider named it in its answer (or as the request asked).
    pub model: String,
    pub began_at: DateTime<Utc>,
    /// From the request to the answer's last byte.
    pub duration_ms: u64,
    /// The provider's HTTP status.
    pub status: u16,
    pub usage: TokenUsage,
    /// Dollars, from the price table; `None` when the model has no price.
    pub cost_usd: Option<f64>,
    pub tool_calls: Vec<ToolCall>,
    /// What the model wrote, cut to [`STEP_TEXT_KEPT_BYTES`].
    pub text: String,
    /// Whether the step's tool inputs and text were left out because the run's steps
    /// reached [`STEPS_KEPT_BYTES_PER_RUN`].
    #[serde(default)]
    pub details_left_out: bool,
    /// Whether the answer's usage could not be read (it broke off, or came in a shape
    /// the meter does not read): the call was charged all it reserved.
    #[serde(default)]
    pub usage_unread: bool,
}

impl AgentStep {
    /// The bytes the step's text parts take.
    pub fn detail_bytes(&self) -> usize {
        self.text.len()
            + self
                .tool_calls
                .iter()
                .map(|call| call.name.len() + call.input.len())
                .sum::<usize>()
    }

    /// The step without its tool inputs and text, for a run past its cap.
    pub fn without_details(mut self) -> Self {
        for call in &mut self.tool_calls {
            call.input.clear();
        }
        self.text.clear();
        self.details_left_out = true;
        self
    }

    /// Every text of the step passed through `scrub` (secrets out).
    pub fn scrubbed(mut self, scrub: impl Fn(&str) -> String) -> Self {
        self.text = scrub(&self.text);
        for call in &mut self.tool_calls {
            call.name = scrub(&call.name);
            call.input = scrub(&call.input);
        }
        self.model = scrub(&self.model);
        self
    }
}

/// `text` cut to at most `limit` bytes on a character boundary, with "…" when cut.
pub fn cut_text(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_on_a_character_boundary() {
        assert_eq!(cut_text("short", 10), "short");
        assert_eq!(cut_text("ééé", 3), "é…");
        assert_eq!(cut_text("abcdef", 4), "abcd…");
    }
}
