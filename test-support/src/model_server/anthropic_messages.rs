//! Anthropic's Messages API as the stand-in model answers it (docs.anthropic.com,
//! "Messages" and "Streaming messages"): a message whose content is a text block or a
//! `tool_use` block for Claude Code's own tools (`Write`, `Bash`), with usage in
//! `message_start` and `message_delta` when streaming and in the body when not; errors
//! in Anthropic's `{"type":"error","error":{…}}` shape.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{event_stream, identifier, json_response, ModelTurn, OUTPUT_TOKENS_PER_TURN};

/// The working folder Claude Code names in its system prompt ("Working directory: …").
fn working_folder(body: &Value) -> Option<String> {
    let texts: Vec<String> = match &body["system"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    texts.iter().find_map(|text| {
        text.lines().find_map(|line| {
            line.trim()
                .strip_prefix("Working directory: ")
                .map(|folder| folder.trim().to_owned())
        })
    })
}

/// The content block a turn becomes, and the stop reason that goes with it.
fn content_of(body: &Value, turn: &ModelTurn) -> (Value, &'static str) {
    match turn {
        ModelTurn::WriteFile { path, contents } => {
            let path = if path.starts_with('/') {
                path.clone()
            } else {
                match working_folder(body) {
                    Some(folder) => format!("{}/{path}", folder.trim_end_matches('/')),
                    None => path.clone(),
                }
            };
            (
                json!({ "type": "tool_use", "id": identifier("toolu"), "name": "Write",
                        "input": { "file_path": path, "content": contents } }),
                "tool_use",
            )
        }
        ModelTurn::RunCommand(command) => (
            json!({ "type": "tool_use", "id": identifier("toolu"), "name": "Bash",
                    "input": { "command": command, "description": "Run the scripted command" } }),
            "tool_use",
        ),
        ModelTurn::Text(text)
        | ModelTurn::WriteOutput { contents: text, .. }
        | ModelTurn::ShowInput { file: text }
        | ModelTurn::Error { message: text, .. } => {
            (json!({ "type": "text", "text": text }), "end_turn")
        }
    }
}

fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

pub(super) fn answer(body: &Value, turn: &ModelTurn, input_tokens: u64) -> Response {
    if let ModelTurn::Error { status, message } = turn {
        return json_response(
            StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &json!({ "type": "error",
                     "error": { "type": error_type(*status), "message": message } }),
        );
    }
    let model = body["model"]
        .as_str()
        .unwrap_or("claude-stand-in")
        .to_owned();
    let id = identifier("msg");
    let (block, stop_reason) = content_of(body, turn);
    let usage = json!({
        "input_tokens": input_tokens,
        "output_tokens": OUTPUT_TOKENS_PER_TURN,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    });
    if body["stream"] != json!(true) {
        return json_response(
            StatusCode::OK,
            &json!({ "id": id, "type": "message", "role": "assistant", "model": model,
                     "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
                     "usage": usage }),
        );
    }
    let (start_block, delta) = match block["type"].as_str() {
        Some("tool_use") => (
            json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
            json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }),
        ),
        _ => (
            json!({ "type": "text", "text": "" }),
            json!({ "type": "text_delta", "text": block["text"] }),
        ),
    };
    event_stream(
        &[
            (
                Some("message_start"),
                json!({ "type": "message_start",
                        "message": { "id": id, "type": "message", "role": "assistant",
                                     "model": model, "content": [], "stop_reason": null,
                                     "stop_sequence": null,
                                     "usage": { "input_tokens": input_tokens,
                                                "output_tokens": 1,
                                                "cache_creation_input_tokens": 0,
                                                "cache_read_input_tokens": 0 } } }),
            ),
            (
                Some("content_block_start"),
                json!({ "type": "content_block_start", "index": 0, "content_block": start_block }),
            ),
            (
                Some("content_block_delta"),
                json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
            ),
            (
                Some("content_block_stop"),
                json!({ "type": "content_block_stop", "index": 0 }),
            ),
            (
                Some("message_delta"),
                json!({ "type": "message_delta",
                        "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                        "usage": { "output_tokens": OUTPUT_TOKENS_PER_TURN } }),
            ),
            (Some("message_stop"), json!({ "type": "message_stop" })),
        ],
        false,
    )
}
