//! Reading a model call's request before the key forwarder lets it leave: the model it
//! names, whether it streams, the most output it may ask for and how many input tokens
//! it holds at most; what that worst case costs (the call's [`CallAsk`]); and the one
//! change made on the way out, so that every answer reports its usage: a Chat
//! Completions stream is asked for its usage (`stream_options.include_usage`).
//!
//! Input tokens are counted without the model's tokenizer, on the safe side: one token
//! for every three bytes of the request's text (English runs near four a token, code
//! near three), and 1,600 for each image or file sent as data, whatever its size (a
//! provider counts an image by its pixels, not its bytes). Input is priced at the dearest
//! way the provider may bill it: the cache write's price (an hour's, twice the input,
//! when the request caches for an hour). The answer settles the call with what the
//! provider counted.

use serde_json::Value;

use super::provider_answer::ModelApi;
use handoff_domain::call_reservation::CallAsk;
use handoff_domain::model_prices::{PriceTable, TokenUsage};

/// What an image or a file sent as data counts for, in tokens, at most.
const TOKENS_PER_ATTACHMENT: u64 = 1_600;
/// Bytes of text counted as one token.
const BYTES_PER_TOKEN: u64 = 3;
/// A string this long without a space, under a data key, is an attachment's data.
const ATTACHMENT_DATA_BYTES: usize = 1_024;

/// What a model call's request says, read before it leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub api: ModelApi,
    /// The model it names, if any.
    pub model: Option<String>,
    pub streams: bool,
    /// The most output tokens it asks for, if it says.
    pub max_output_tokens: Option<u64>,
    /// Input tokens at most, counted as the module says.
    pub input_tokens_at_most: u64,
    /// Whether it asks for part of its input to be cached for an hour (a
    /// `cache_control` with `"ttl": "1h"`), which costs twice the input price.
    pub caches_for_an_hour: bool,
    /// The body to send when it must differ from what the agent sent: a Chat
    /// Completions stream that did not ask for its usage is made to.
    pub body_to_send: Option<Vec<u8>>,
}

/// A request that is not a model call the forwarder can meter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the request's body is not a JSON object: {0}")]
pub struct UnreadableRequest(String);

impl ModelRequest {
    /// Reads a request of `api` from its body.
    pub fn read(api: ModelApi, body: &[u8]) -> Result<ModelRequest, UnreadableRequest> {
        let body: Value =
            serde_json::from_slice(body).map_err(|error| UnreadableRequest(error.to_string()))?;
        if !body.is_object() {
            return Err(UnreadableRequest("it is not an object".to_owned()));
        }
        let model = body["model"].as_str().map(str::to_owned);
        let streams = body["stream"].as_bool().unwrap_or(false);
        let fields: &[&str] = match api {
            ModelApi::AnthropicMessages => &["max_tokens"],
            ModelApi::OpenaiResponses => &["max_output_tokens"],
            ModelApi::ChatCompletions => &["max_completion_tokens", "max_tokens"],
        };
        let max_output_tokens = fields.iter().find_map(|field| body[*field].as_u64());
        let mut counted = Counted::default();
        counted.add(None, &body);
        let body_to_send = (api == ModelApi::ChatCompletions && streams)
            .then(|| with_usage_asked(body))
            .flatten();
        Ok(ModelRequest {
            api,
            model,
            streams,
            max_output_tokens,
            input_tokens_at_most: counted.text_bytes.div_ceil(BYTES_PER_TOKEN)
                + counted.attachments * TOKENS_PER_ATTACHMENT,
            caches_for_an_hour: counted.caches_for_an_hour,
            body_to_send,
        })
    }

    /// The call's worst case at `prices`: its input at the dearer of the model's input
    /// and cache-write prices, and the most output it asked for (or the model's
    /// ceiling) at its output price.
    pub fn ask(&self, prices: &PriceTable) -> CallAsk {
        let model = self.model.clone().unwrap_or_else(|| "unknown".to_owned());
        let output = self
            .max_output_tokens
            .unwrap_or_else(|| PriceTable::output_ceiling(&model));
        let (price, unpriced) = prices.reservation_price(&model);
        let usage = TokenUsage {
            input: self.input_tokens_at_most,
            output,
            ..TokenUsage::default()
        };
        let input_price = if self.caches_for_an_hour {
            price.input.max(price.cache_write_hour())
        } else {
            price.input.max(price.cache_write)
        };
        let usd = usage.input as f64 * input_price / 1e6 + usage.output as f64 * price.output / 1e6;
        CallAsk {
            model,
            usd,
            tokens: usage.total(),
            unpriced,
        }
    }
}

/// A Chat Completions stream's body asking for its usage; `None` when it does already.
fn with_usage_asked(mut body: Value) -> Option<Vec<u8>> {
    if body["stream_options"]["include_usage"].as_bool() == Some(true) {
        return None;
    }
    let options = &mut body["stream_options"];
    if !options.is_object() {
        *options = Value::Object(serde_json::Map::new());
    }
    options["include_usage"] = Value::Bool(true);
    serde_json::to_vec(&body).ok()
}

/// Text bytes and attachments found in a request.
#[derive(Debug, Default)]
struct Counted {
    text_bytes: u64,
    attachments: u64,
    caches_for_an_hour: bool,
}

impl Counted {
    fn add(&mut self, key: Option<&str>, value: &Value) {
        match value {
            Value::String(text) => {
                let is_data = matches!(key, Some("data" | "file_data" | "image_url" | "url"))
                    && text.len() >= ATTACHMENT_DATA_BYTES
                    && !text.contains(' ');
                if is_data {
                    self.attachments += 1;
                } else {
                    self.text_bytes += text.len() as u64;
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.add(key, item)),
            Value::Object(fields) => {
                if key == Some("cache_control") && fields.get("ttl") == Some(&Value::from("1h")) {
                    self.caches_for_an_hour = true;
                }
                for (name, field) in fields {
                    self.text_bytes += name.len() as u64;
                    self.add(Some(name), field);
                }
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => self.text_bytes += 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_for_its_model_its_output_and_its_input_at_most() {
        let body = serde_json::json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "stream": true,
            "messages": [{"role": "user", "content": "x".repeat(3000)}],
        });
        let request =
            ModelRequest::read(ModelApi::AnthropicMessages, body.to_string().as_bytes()).unwrap();
        assert_eq!(request.model.as_deref(), Some("claude-sonnet-4-5"));
        assert!(request.streams);
        assert_eq!(request.max_output_tokens, Some(1000));
        assert!(
            (1000..1030).contains(&request.input_tokens_at_most),
            "{}",
            request.input_tokens_at_most
        );
        let ask = request.ask(&PriceTable::default());
        // Input at the cache-write price ($3.75 a million) and 1,000 out at $15.
        let expected = request.input_tokens_at_most as f64 * 3.75 / 1e6 + 1000.0 * 15.0 / 1e6;
        assert!((ask.usd - expected).abs() < 1e-12, "{ask:?}");
        assert_eq!(ask.tokens, request.input_tokens_at_most + 1000);
        assert!(!ask.unpriced);
    }

    #[test]
    fn a_request_that_caches_for_an_hour_is_reserved_at_the_hours_price() {
        let body = serde_json::json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1000,
            "system": [{"type": "text", "text": "x".repeat(3000),
                        "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": "go"}],
        });
        let request =
            ModelRequest::read(ModelApi::AnthropicMessages, body.to_string().as_bytes()).unwrap();
        assert!(request.caches_for_an_hour);
        let ask = request.ask(&PriceTable::default());
        // Input at twice Sonnet's $3 a million, and 1,000 out at $15.
        let expected = request.input_tokens_at_most as f64 * 6.0 / 1e6 + 1000.0 * 15.0 / 1e6;
        assert!((ask.usd - expected).abs() < 1e-12, "{ask:?}");
    }

    #[test]
    fn a_request_that_says_no_output_limit_is_reserved_at_the_models_ceiling() {
        let body = br#"{"model":"gpt-5","input":"hello","stream":true}"#;
        let request = ModelRequest::read(ModelApi::OpenaiResponses, body).unwrap();
        assert_eq!(request.max_output_tokens, None);
        let ask = request.ask(&PriceTable::default());
        assert!(ask.tokens >= 128_000, "{ask:?}");
        assert!(ask.usd >= 128_000.0 * 10.0 / 1e6, "{ask:?}");
    }

    #[test]
    fn a_model_without_a_price_is_reserved_at_the_dearest_and_marked() {
        let body = br#"{"model":"our-own-model","max_tokens":100,"messages":[]}"#;
        let request = ModelRequest::read(ModelApi::ChatCompletions, body).unwrap();
        let ask = request.ask(&PriceTable::default());
        assert!(ask.unpriced);
        assert!(ask.usd >= 100.0 * 75.0 / 1e6, "{ask:?}");
    }

    #[test]
    fn an_image_counts_as_an_image_not_as_its_bytes() {
        let image = "A".repeat(3_000_000);
        let body = serde_json::json!({
            "model": "claude-sonnet-4-5", "max_tokens": 10,
            "messages": [{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
                {"type": "text", "text": "what is this?"}
            ]}],
        });
        let request =
            ModelRequest::read(ModelApi::AnthropicMessages, body.to_string().as_bytes()).unwrap();
        assert!(
            (1_600..1_800).contains(&request.input_tokens_at_most),
            "{}",
            request.input_tokens_at_most
        );
    }

    #[test]
    fn a_chat_stream_is_asked_for_its_usage_and_nothing_else_changes() {
        let body =
            br#"{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
        let request = ModelRequest::read(ModelApi::ChatCompletions, body).unwrap();
        let sent: Value = serde_json::from_slice(&request.body_to_send.unwrap()).unwrap();
        assert_eq!(sent["stream_options"]["include_usage"], true);
        assert_eq!(sent["messages"][0]["content"], "hi");
        let asked = br#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true}}"#;
        let request = ModelRequest::read(ModelApi::ChatCompletions, asked).unwrap();
        assert_eq!(request.body_to_send.clone(), None);
        let not_streamed = br#"{"model":"gpt-4o","messages":[]}"#;
        let request = ModelRequest::read(ModelApi::ChatCompletions, not_streamed).unwrap();
        assert_eq!(request.body_to_send.clone(), None);
        let responses = br#"{"model":"gpt-5","stream":true,"input":"hi"}"#;
        let request = ModelRequest::read(ModelApi::OpenaiResponses, responses).unwrap();
        assert_eq!(request.body_to_send.clone(), None);
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_unreadable() {
        assert!(ModelRequest::read(ModelApi::AnthropicMessages, b"not json").is_err());
        assert!(ModelRequest::read(ModelApi::AnthropicMessages, b"[1,2]").is_err());
    }
}
