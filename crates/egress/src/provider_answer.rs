//! Reading a provider's answer on the side, as it streams past the key forwarder: the
//! model, the tokens by kind, the tool calls asked for and the text written. Nothing
//! here changes or holds back a byte; the reader only looks.
//!
//! The shapes read:
//! - Anthropic's Messages API: usage in `message_start` and `message_delta` when
//!   streaming (the delta's figures are the running totals), in the body when not;
//!   tool calls are `tool_use` blocks, their input streamed as `input_json_delta`;
//! - OpenAI's Responses API: the response of `response.completed` (or `.incomplete`,
//!   `.failed`) when streaming, the body when not; input tokens include the cached ones;
//! - Chat Completions: the chunk that carries `usage` when streaming, the body when not.

use serde_json::Value;

use handoff_domain::agent_step::{cut_text, ToolCall, STEP_TEXT_KEPT_BYTES, TOOL_INPUT_KEPT_BYTES};
use handoff_domain::model_prices::TokenUsage;

/// The largest plain (not streamed) answer read whole; a larger one passes unread.
const LARGEST_READ_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// Which of the provider's APIs a model call used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelApi {
    AnthropicMessages,
    OpenaiResponses,
    ChatCompletions,
}

impl ModelApi {
    /// The API a request path calls, if it is a model call that costs tokens (token
    /// counting and model lists are not).
    pub fn of_path(path: &str) -> Option<ModelApi> {
        let path = path.trim_end_matches('/');
        if path.ends_with("/messages") {
            Some(ModelApi::AnthropicMessages)
        } else if path.ends_with("/responses") {
            Some(ModelApi::OpenaiResponses)
        } else if path.ends_with("/chat/completions") {
            Some(ModelApi::ChatCompletions)
        } else {
            None
        }
    }
}

/// What one answer said, once read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerReading {
    /// The model the answer names, if it names one.
    pub model: Option<String>,
    pub usage: TokenUsage,
    /// Whether the answer reported its final usage: the whole body's, or a stream's last
    /// figures (Messages' `message_delta`, Responses' `response.completed`, Chat
    /// Completions' usage chunk). A Messages stream cut off after `message_start` has
    /// told its input but not its output, so it has not.
    pub usage_reported: bool,
    pub tool_calls: Vec<ToolCall>,
    pub text: String,
}

/// A tool call being assembled from streamed pieces.
#[derive(Debug, Default)]
struct ToolCallPieces {
    name: String,
    input: String,
}

/// Reads one answer as its bytes pass.
#[derive(Debug)]
pub struct AnswerReader {
    api: ModelApi,
    streaming: bool,
    /// Bytes of the current, unfinished line (streaming) or of the whole body.
    pending: Vec<u8>,
    /// The body grew past what is read whole; it is left unread.
    overflowed: bool,
    reading: AnswerReading,
    /// Streamed tool calls by their block or call index.
    calls: Vec<(u64, ToolCallPieces)>,
}

impl AnswerReader {
    /// A reader for an answer of `api`; `content_type` says whether it streams.
    pub fn new(api: ModelApi, content_type: Option<&str>) -> Self {
        let streaming = content_type.is_some_and(|value| value.contains("text/event-stream"));
        AnswerReader {
            api,
            streaming,
            pending: Vec::new(),
            overflowed: false,
            reading: AnswerReading::default(),
            calls: Vec::new(),
        }
    }

    /// Takes the next piece of the answer.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        if !self.streaming {
            if self.pending.len() + bytes.len() > LARGEST_READ_ANSWER_BYTES {
                self.overflowed = true;
                self.pending = Vec::new();
            } else {
                self.pending.extend_from_slice(bytes);
            }
            return;
        }
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            self.pending.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.pending);
            self.stream_line(&line);
            rest = &rest[end + 1..];
        }
        if self.pending.len() + rest.len() > LARGEST_READ_ANSWER_BYTES {
            // One event larger than any answer is read whole: skip to its end.
            self.pending.clear();
        } else {
            self.pending.extend_from_slice(rest);
        }
    }

    /// What the answer said.
    pub fn finish(mut self) -> AnswerReading {
        if self.streaming {
            let line = std::mem::take(&mut self.pending);
            self.stream_line(&line);
        } else if !self.overflowed {
            if let Ok(body) = serde_json::from_slice::<Value>(&self.pending) {
                self.whole_body(&body);
            }
        }
        for (_, pieces) in std::mem::take(&mut self.calls) {
            self.reading.tool_calls.push(ToolCall {
                name: pieces.name,
                input: cut_text(&pieces.input, TOOL_INPUT_KEPT_BYTES),
            });
        }
        self.reading.text = cut_text(self.reading.text.trim(), STEP_TEXT_KEPT_BYTES);
        self.reading
    }

    fn stream_line(&mut self, line: &[u8]) {
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let Ok(event) = serde_json::from_slice::<Value>(data.trim_ascii()) else {
            return;
        };
        match self.api {
            ModelApi::AnthropicMessages => self.anthropic_event(&event),
            ModelApi::OpenaiResponses => self.responses_event(&event),
            ModelApi::ChatCompletions => self.chat_chunk(&event),
        }
    }

    fn whole_body(&mut self, body: &Value) {
        match self.api {
            ModelApi::AnthropicMessages => {
                self.name_model(&body["model"]);
                self.anthropic_usage(&body["usage"], true);
                for block in body["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") => self.add_text(&block["text"]),
                        Some("tool_use") => self.reading.tool_calls.push(ToolCall {
                            name: text_of(&block["name"]),
                            input: cut_text(&block["input"].to_string(), TOOL_INPUT_KEPT_BYTES),
                        }),
                        _ => {}
                    }
                }
            }
            ModelApi::OpenaiResponses => self.responses_object(body),
            ModelApi::ChatCompletions => {
                self.name_model(&body["model"]);
                self.openai_usage(&body["usage"], ["prompt_tokens", "completion_tokens"]);
                let message = &body["choices"][0]["message"];
                self.add_text(&message["content"]);
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    self.reading.tool_calls.push(ToolCall {
                        name: text_of(&call["function"]["name"]),
                        input: cut_text(
                            &text_of(&call["function"]["arguments"]),
                            TOOL_INPUT_KEPT_BYTES,
                        ),
                    });
                }
            }
        }
    }

    fn name_model(&mut self, model: &Value) {
        if let Some(model) = model.as_str().filter(|model| !model.is_empty()) {
            self.reading.model = Some(model.to_owned());
        }
    }

    fn add_text(&mut self, text: &Value) {
        if let Some(text) = text.as_str() {
            if self.reading.text.len() < STEP_TEXT_KEPT_BYTES * 2 {
                self.reading.text.push_str(text);
            }
        }
    }

    fn pieces(&mut self, index: u64) -> &mut ToolCallPieces {
        let at = match self.calls.iter().position(|(held, _)| *held == index) {
            Some(at) => at,
            None => {
                self.calls.push((index, ToolCallPieces::default()));
                self.calls.len() - 1
            }
        };
        &mut self.calls[at].1
    }

    fn add_input(&mut self, index: u64, piece: &Value) {
        if let Some(piece) = piece.as_str() {
            let pieces = self.pieces(index);
            if pieces.input.len() < TOOL_INPUT_KEPT_BYTES * 2 {
                pieces.input.push_str(piece);
            }
        }
    }

    /// Anthropic's usage object: each figure present replaces the one held, since a
    /// `message_delta` carries running totals. `last` says whether these are the
    /// answer's last figures (a body's, or `message_delta`'s), not `message_start`'s,
    /// whose output is a placeholder.
    fn anthropic_usage(&mut self, usage: &Value, last: bool) {
        if !usage.is_object() {
            return;
        }
        if last {
            self.reading.usage_reported = true;
        }
        let usage_now = &mut self.reading.usage;
        for (field, slot) in [
            ("input_tokens", &mut usage_now.input),
            ("cache_creation_input_tokens", &mut usage_now.cache_write),
            ("cache_read_input_tokens", &mut usage_now.cache_read),
            ("output_tokens", &mut usage_now.output),
        ] {
            if let Some(count) = usage[field].as_u64() {
                *slot = count;
            }
        }
        // Of the cache writes, those kept for an hour cost more.
        if let Some(hour) = usage["cache_creation"]["ephemeral_1h_input_tokens"].as_u64() {
            usage_now.cache_write_hour = hour;
        }
    }

    fn anthropic_event(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("message_start") => {
                self.name_model(&event["message"]["model"]);
                self.anthropic_usage(&event["message"]["usage"], false);
            }
            Some("content_block_start") => {
                let block = &event["content_block"];
                let index = event["index"].as_u64().unwrap_or(0);
                match block["type"].as_str() {
                    Some("tool_use" | "server_tool_use") => {
                        self.pieces(index).name = text_of(&block["name"]);
                    }
                    Some("text") => self.add_text(&block["text"]),
                    _ => {}
                }
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                let index = event["index"].as_u64().unwrap_or(0);
                match delta["type"].as_str() {
                    Some("text_delta") => self.add_text(&delta["text"]),
                    Some("input_json_delta") => self.add_input(index, &delta["partial_json"]),
                    _ => {}
                }
            }
            Some("message_delta") => self.anthropic_usage(&event["usage"], true),
            _ => {}
        }
    }

    fn responses_event(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("response.completed" | "response.incomplete" | "response.failed") => {
                self.responses_object(&event["response"]);
            }
            Some("response.created" | "response.in_progress") => {
                self.name_model(&event["response"]["model"]);
            }
            _ => {}
        }
    }

    fn responses_object(&mut self, response: &Value) {
        self.name_model(&response["model"]);
        self.openai_usage(&response["usage"], ["input_tokens", "output_tokens"]);
        for item in response["output"].as_array().into_iter().flatten() {
            match item["type"].as_str() {
                Some("message") => {
                    for part in item["content"].as_array().into_iter().flatten() {
                        self.add_text(&part["text"]);
                    }
                }
                Some("function_call") => self.reading.tool_calls.push(ToolCall {
                    name: text_of(&item["name"]),
                    input: cut_text(&text_of(&item["arguments"]), TOOL_INPUT_KEPT_BYTES),
                }),
                Some("custom_tool_call") => self.reading.tool_calls.push(ToolCall {
                    name: text_of(&item["name"]),
                    input: cut_text(&text_of(&item["input"]), TOOL_INPUT_KEPT_BYTES),
                }),
                Some("local_shell_call") => self.reading.tool_calls.push(ToolCall {
                    name: "shell".to_owned(),
                    input: cut_text(
                        &item["action"]["command"].to_string(),
                        TOOL_INPUT_KEPT_BYTES,
                    ),
                }),
                _ => {}
            }
        }
    }

    /// OpenAI's usage object, whichever API: the input and output counts are named
    /// `fields` (`input_tokens`/`output_tokens`, or Chat Completions' `prompt_tokens`/
    /// `completion_tokens`), each with its `…_details`; cached input is part of the input.
    fn openai_usage(&mut self, usage: &Value, [input_field, output_field]: [&str; 2]) {
        if !usage.is_object() {
            return;
        }
        self.reading.usage_reported = true;
        let details = |field: &str| &usage[format!("{field}_details").as_str()];
        let input = usage[input_field].as_u64().unwrap_or(0);
        let cached = details(input_field)["cached_tokens"]
            .as_u64()
            .unwrap_or(0)
            .min(input);
        self.reading.usage = TokenUsage {
            input: input - cached,
            cache_write: 0,
            cache_write_hour: 0,
            cache_read: cached,
            output: usage[output_field].as_u64().unwrap_or(0),
            reasoning: details(output_field)["reasoning_tokens"]
                .as_u64()
                .unwrap_or(0),
        };
    }

    fn chat_chunk(&mut self, chunk: &Value) {
        self.name_model(&chunk["model"]);
        self.openai_usage(&chunk["usage"], ["prompt_tokens", "completion_tokens"]);
        let delta = &chunk["choices"][0]["delta"];
        self.add_text(&delta["content"]);
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0);
            if let Some(name) = call["function"]["name"].as_str() {
                self.pieces(index).name.push_str(name);
            }
            self.add_input(index, &call["function"]["arguments"]);
        }
    }
}

fn text_of(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

#[cfg(test)]
#[path = "provider_answer_tests.rs"]
mod tests;
