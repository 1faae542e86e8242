//! A stand-in model server: it plays a scripted conversation the way the fake GitHub
//! plays GitHub, so that the real agent programs (Claude Code, Codex, aider) run in the
//! tests against it with nothing leaving the machine.
//!
//! It speaks the three APIs those agents use, each in its own file: Anthropic's Messages
//! API (streaming and not, with `count_tokens`), OpenAI's Responses API (streaming) and
//! Chat Completions (streaming and not). A script is a list of [`ModelTurn`]s; each
//! request that offers the model tools (or, for Chat Completions, every request) takes
//! the next turn, and when the script is spent the model ends with a short text (or,
//! when the script ends with an error, gives that error again). Every
//! request is recorded with its key header and body, so a test sees what the agent sent
//! and which key reached the provider.

mod anthropic_messages;
mod chat_completions;
mod openai_responses;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

/// One turn of the scripted model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelTurn {
    /// Asks the agent to write `contents` to `path` (relative to its working folder,
    /// or absolute).
    WriteFile { path: String, contents: String },
    /// Asks the agent to write `contents` to one of the stage's output files (`output.md`,
    /// `results.json`), found as a model finds it: the absolute path ending in
    /// `/out/FILE` that the prompt names.
    WriteOutput { file: String, contents: String },
    /// Asks the agent to run a shell command; its output comes back in the next request.
    RunCommand(String),
    /// Asks the agent to print one of the stage's input files (`corrections.md`,
    /// `diff.patch`), found as a model finds it: the absolute path ending in
    /// `/handoff/inputs/FILE` that the prompt names.
    ShowInput { file: String },
    /// Ends the conversation with this text.
    Text(String),
    /// Answers with an HTTP error in the provider's own error shape: 401 for a bad key,
    /// 529 (Anthropic) or 503 for an overload, 429 for a rate limit.
    Error { status: u16, message: String },
}

/// The tokens every scripted answer reports: what a test expects a run to record.
pub const INPUT_TOKENS_PER_TURN: u64 = 1200;
pub const OUTPUT_TOKENS_PER_TURN: u64 = 80;

/// One request the server got.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub method: String,
    /// The path and query, as sent.
    pub path: String,
    /// Anthropic's key header.
    pub x_api_key: Option<String>,
    /// OpenAI's key header, and a Claude plan token's.
    pub authorization: Option<String>,
    /// The betas an Anthropic request names.
    pub anthropic_beta: Option<String>,
    /// Who sent it, as its user agent says.
    pub user_agent: Option<String>,
    /// Whether the server refused its credential (so it took no turn).
    pub refused_credential: bool,
    /// The body, parsed as JSON (`Null` when it is not JSON).
    pub body: serde_json::Value,
    /// The turn of the script it was answered with, if it took one.
    pub turn: Option<usize>,
}

impl ModelRequest {
    /// The body as text, to look for what the agent sent back (a command's output…).
    pub fn body_text(&self) -> String {
        self.body.to_string()
    }
}

#[derive(Debug, Default)]
struct Conversation {
    script: Vec<ModelTurn>,
    next_turn: usize,
    received: Vec<ModelRequest>,
    /// The input tokens each answer reports, when not [`INPUT_TOKENS_PER_TURN`].
    reported_input_tokens: Option<u64>,
    /// How many requests took a turn so far, for those who wait on it.
    turns_taken: tokio::sync::watch::Sender<usize>,
    /// The Claude plan token of the account, when it pays with a plan: Anthropic calls
    /// are then taken only with it, as `Authorization: Bearer` with the OAuth beta.
    plan_token: Option<String>,
}

type Shared = Arc<Mutex<Conversation>>;

pub struct ModelServer {
    address: SocketAddr,
    conversation: Shared,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl ModelServer {
    /// Starts the server with `script`. It listens on every address of this machine, so
    /// that a sandbox's egress gate reaches it through the engine's host gateway; its
    /// address for settings is the loopback one.
    pub async fn start(script: Vec<ModelTurn>) -> ModelServer {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
            .await
            .expect("the model server listens");
        let address = listener.local_addr().expect("its address");
        let conversation = Arc::new(Mutex::new(Conversation {
            script,
            ..Conversation::default()
        }));
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(conversation.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, router)
                .await
                .expect("the model server serves");
        });
        ModelServer {
            address,
            conversation,
            server,
        }
    }

    /// Waits until `calls` model calls (requests that took a turn) have come.
    pub async fn wait_for_model_calls(&self, calls: usize) {
        let mut taken = self
            .conversation
            .lock()
            .expect("conversation")
            .turns_taken
            .subscribe();
        let waited = taken.wait_for(|taken| *taken >= calls).await.map(|_| ());
        waited.expect("the model server stopped");
    }

    /// Has every answer from now on report `tokens` input tokens: a call that costs a
    /// given amount, whatever the agent sent.
    pub fn report_input_tokens(&self, tokens: u64) {
        self.conversation
            .lock()
            .expect("conversation")
            .reported_input_tokens = Some(tokens);
    }

    /// Takes Anthropic calls only with the plan token `token`, as Anthropic's API takes
    /// an account's plan: sent as `Authorization: Bearer` and naming the OAuth beta. An
    /// API key (`x-api-key`), another token, or the token without the beta is refused
    /// with 401 in Anthropic's error shape, and takes no turn.
    pub fn take_plan_token_only(&self, token: &str) {
        self.conversation.lock().expect("conversation").plan_token = Some(token.to_owned());
    }

    /// `http://127.0.0.1:PORT`, for a provider's `api_base` setting.
    pub fn api_base(&self) -> String {
        format!("http://127.0.0.1:{}", self.address.port())
    }

    /// Replaces what is left of the script (for the next run of the same test).
    pub fn play_next(&self, script: Vec<ModelTurn>) {
        let mut conversation = self.conversation.lock().expect("conversation");
        conversation.script = script;
        conversation.next_turn = 0;
    }

    pub fn received(&self) -> Vec<ModelRequest> {
        self.conversation
            .lock()
            .expect("conversation")
            .received
            .clone()
    }

    /// The requests that took a turn of the script: the model calls of the conversation.
    pub fn model_calls(&self) -> Vec<ModelRequest> {
        self.received()
            .into_iter()
            .filter(|request| request.turn.is_some())
            .collect()
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// Why Anthropic's API, for an account that pays with the plan token `token`, refuses a
/// request with `headers`, if it does (its words for each case).
fn plan_credential_refusal(headers: &HeaderMap, token: &str) -> Option<&'static str> {
    if header(headers, "x-api-key").is_some() {
        return Some("invalid x-api-key");
    }
    if header(headers, "authorization").as_deref() != Some(&format!("Bearer {token}")) {
        return Some("Invalid bearer token");
    }
    let betas = header(headers, "anthropic-beta").unwrap_or_default();
    if !betas
        .split(',')
        .any(|beta| beta.trim() == "oauth-2025-04-20")
    {
        return Some("OAuth authentication is currently not supported.");
    }
    None
}

/// The API a request speaks, from its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    AnthropicMessages,
    AnthropicCountTokens,
    OpenaiResponses,
    ChatCompletions,
}

fn api_of(method: &str, path: &str) -> Option<Api> {
    if method != "POST" {
        return None;
    }
    match path {
        "/v1/messages" => Some(Api::AnthropicMessages),
        "/v1/messages/count_tokens" => Some(Api::AnthropicCountTokens),
        "/v1/responses" => Some(Api::OpenaiResponses),
        "/v1/chat/completions" => Some(Api::ChatCompletions),
        _ => None,
    }
}

/// Whether the request offers the model tools: only those take a turn, so that an
/// agent's side requests (a title, a quota probe) do not eat the script.
fn offers_tools(api: Api, body: &serde_json::Value) -> bool {
    match api {
        Api::AnthropicMessages => body["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty()),
        Api::OpenaiResponses => {
            body["tools"]
                .as_array()
                .is_some_and(|tools| !tools.is_empty())
                || body["input"].as_array().is_some_and(|items| {
                    items.iter().any(|item| item["type"] == "additional_tools")
                })
        }
        Api::ChatCompletions => true,
        Api::AnthropicCountTokens => false,
    }
}

async fn answer(State(conversation): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let method = parts.method.to_string();
    let api = api_of(&method, parts.uri.path());
    let (turn, input_tokens) = {
        let mut conversation = conversation.lock().expect("conversation");
        let input_tokens = conversation
            .reported_input_tokens
            .unwrap_or(INPUT_TOKENS_PER_TURN);
        let credential_refused = match (api, conversation.plan_token.as_deref()) {
            (Some(Api::AnthropicMessages | Api::AnthropicCountTokens), Some(token)) => {
                plan_credential_refusal(&parts.headers, token)
            }
            _ => None,
        };
        let turn = match api {
            _ if credential_refused.is_some() => None,
            Some(api) if offers_tools(api, &body) => {
                let index = conversation.next_turn;
                conversation.next_turn += 1;
                conversation.turns_taken.send_modify(|taken| *taken += 1);
                Some(index)
            }
            _ => None,
        };
        conversation.received.push(ModelRequest {
            method: method.clone(),
            path: parts
                .uri
                .path_and_query()
                .map_or_else(|| parts.uri.path().to_owned(), |path| path.to_string()),
            x_api_key: header(&parts.headers, "x-api-key"),
            authorization: header(&parts.headers, "authorization"),
            anthropic_beta: header(&parts.headers, "anthropic-beta"),
            user_agent: header(&parts.headers, "user-agent"),
            refused_credential: credential_refused.is_some(),
            body: body.clone(),
            turn,
        });
        if let Some(message) = credential_refused {
            drop(conversation);
            return anthropic_messages::answer(
                &body,
                &ModelTurn::Error {
                    status: 401,
                    message: message.to_owned(),
                },
                0,
            );
        }
        let turn = turn.map(|index| match conversation.script.get(index) {
            Some(turn) => turn.clone(),
            // A provider that refuses goes on refusing, however often it is retried.
            None => match conversation.script.last() {
                Some(last @ ModelTurn::Error { .. }) => last.clone(),
                _ => ModelTurn::Text("Done.".to_owned()),
            },
        });
        (turn, input_tokens)
    };
    let turn = match turn.unwrap_or_else(|| ModelTurn::Text("OK".to_owned())) {
        ModelTurn::WriteOutput { file, contents } => {
            match path_named(&body, &format!("/out/{file}")) {
                Some(path) => ModelTurn::WriteFile { path, contents },
                None => ModelTurn::Text(format!("The prompt names no {file} to write.")),
            }
        }
        ModelTurn::ShowInput { file } => {
            match path_named(&body, &format!("/handoff/inputs/{file}")) {
                Some(path) => {
                    ModelTurn::RunCommand(format!("cat '{}'", path.replace('\'', "'\\''")))
                }
                None => ModelTurn::Text(format!("The prompt names no {file} to read.")),
            }
        }
        turn => turn,
    };
    match api {
        Some(Api::AnthropicMessages) => anthropic_messages::answer(&body, &turn, input_tokens),
        Some(Api::AnthropicCountTokens) => json_response(
            StatusCode::OK,
            &serde_json::json!({ "input_tokens": INPUT_TOKENS_PER_TURN }),
        ),
        Some(Api::OpenaiResponses) => openai_responses::answer(&body, &turn, input_tokens),
        Some(Api::ChatCompletions) => chat_completions::answer(&body, &turn, input_tokens),
        None => json_response(
            StatusCode::NOT_FOUND,
            &serde_json::json!({ "error": { "message": "not a model endpoint" } }),
        ),
    }
}

/// A JSON answer.
fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a JSON response")
}

/// A server-sent-events answer of `(event name, data)` pairs; a name of `None` writes
/// only the data line (Chat Completions names no events).
fn event_stream(events: &[(Option<&str>, serde_json::Value)], done: bool) -> Response {
    let mut text = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            text.push_str(&format!("event: {name}\n"));
        }
        text.push_str(&format!("data: {data}\n\n"));
    }
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from(text))
        .expect("an event stream")
}

/// The absolute path ending in `end_of_path` (`/out/FILE`) that a request's text names.
fn path_named(body: &serde_json::Value, end_of_path: &str) -> Option<String> {
    // The text as the model reads it: every string of the request.
    fn strings(value: &serde_json::Value, found: &mut Vec<String>) {
        match value {
            serde_json::Value::String(text) => found.push(text.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|item| strings(item, found)),
            serde_json::Value::Object(fields) => {
                fields.values().for_each(|item| strings(item, found))
            }
            _ => {}
        }
    }
    let mut texts = Vec::new();
    strings(body, &mut texts);
    texts.iter().find_map(|text| {
        let end = text.find(end_of_path)? + end_of_path.len();
        let start = text[..end]
            .rfind(|c: char| c.is_whitespace() || c == '`' || c == '"' || c == '\'')
            .map_or(0, |index| index + 1);
        let path = &text[start..end];
        path.starts_with('/').then(|| path.to_owned())
    })
}

/// A shell command that writes `contents` to `path`, for agents whose only way to
/// write is a command.
fn command_writing(path: &str, contents: &str) -> String {
    let quote = |text: &str| format!("'{}'", text.replace('\'', "'\\''"));
    let folder = std::path::Path::new(path)
        .parent()
        .map(|folder| folder.to_string_lossy().into_owned())
        .filter(|folder| !folder.is_empty());
    let make_folder = folder.map_or(String::new(), |folder| {
        format!("mkdir -p {} && ", quote(&folder))
    });
    format!(
        "{make_folder}printf '%s' {} > {}",
        quote(contents),
        quote(path)
    )
}

/// An identifier for a tool call or a message.
fn identifier(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{prefix}_{:024}", NEXT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_file_is_found_in_the_prompt() {
        let body = serde_json::json!({ "messages": [{ "content": [
            { "type": "text", "text": "Write the review to `/tmp/w 1/x/out/output.md`: it is read." }
        ] }] });
        assert_eq!(
            path_named(&body, "/out/output.md"),
            None,
            "a path with a space is cut"
        );
        let body = serde_json::json!({ "input": [{ "content": [
            { "text": "Write the review to /tmp/run-7/out/output.md now" }
        ] }] });
        assert_eq!(
            path_named(&body, "/out/output.md").as_deref(),
            Some("/tmp/run-7/out/output.md")
        );
        assert_eq!(path_named(&body, "/out/results.json"), None);
    }

    #[test]
    fn a_written_file_survives_quotes() {
        assert_eq!(
            command_writing("docs/a b.txt", "it's"),
            r"mkdir -p 'docs' && printf '%s' 'it'\''s' > 'docs/a b.txt'"
        );
        assert_eq!(command_writing("a.txt", "x"), "printf '%s' 'x' > 'a.txt'");
    }
}
