//! OpenAI's Responses API as the stand-in model answers it (platform.openai.com,
//! "Responses" and "Streaming responses"): `response.created`, the output item, and
//! `response.completed` with usage (cached and reasoning tokens included). A command
//! becomes a call of Codex's `exec_command` function when the request offers it, or,
//! for models that run Codex's code mode, a call of its `exec` tool whose JavaScript
//! calls `tools.exec_command`. Errors come in OpenAI's `{"error":{…}}` shape.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{
    command_writing, event_stream, identifier, json_response, ModelTurn, OUTPUT_TOKENS_PER_TURN,
};

/// How long a scripted command may run before Codex hands back what it printed so far.
const COMMAND_WAIT_MS: u64 = 120_000;

/// Whether the request offers `exec_command` as a function of its own (not code mode).
fn offers_exec_command_function(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|tools| {
        tools
            .iter()
            .any(|tool| tool["type"] == "function" && tool["name"] == "exec_command")
    })
}

/// The output item that asks the agent to run `command`.
fn command_call(body: &Value, command: &str) -> Value {
    // Codex answers with what a command printed so far once its yield time passes;
    // the script waits for the end instead, as a model would by calling `wait`.
    if offers_exec_command_function(body) {
        return json!({ "type": "function_call", "id": identifier("fc"),
                       "call_id": identifier("call"), "name": "exec_command",
                       "arguments": json!({ "cmd": command,
                                            "yield_time_ms": COMMAND_WAIT_MS }).to_string(),
                       "status": "completed" });
    }
    let script = format!(
        "// @exec: {{\"yield_time_ms\": {COMMAND_WAIT_MS}}}\n\
         const result = await tools.exec_command({{cmd: {}, yield_time_ms: {COMMAND_WAIT_MS}}});\n\
         text(result);",
        Value::String(command.to_owned())
    );
    json!({ "type": "custom_tool_call", "id": identifier("ctc"),
            "call_id": identifier("call"), "name": "exec", "input": script,
            "status": "completed" })
}

fn error_code(status: u16) -> (&'static str, &'static str) {
    match status {
        401 => ("invalid_request_error", "invalid_api_key"),
        429 => ("rate_limit_error", "rate_limit_exceeded"),
        503 | 529 => ("server_error", "server_overloaded"),
        _ => ("server_error", "server_error"),
    }
}

pub(super) fn answer(body: &Value, turn: &ModelTurn, input_tokens: u64) -> Response {
    let item = match turn {
        ModelTurn::Error { status, message } => {
            let (kind, code) = error_code(*status);
            return json_response(
                StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                &json!({ "error": { "message": message, "type": kind, "param": null,
                                    "code": code } }),
            );
        }
        ModelTurn::WriteFile { path, contents } => {
            command_call(body, &command_writing(path, contents))
        }
        ModelTurn::RunCommand(command) => command_call(body, command),
        ModelTurn::Text(text)
        | ModelTurn::WriteOutput { contents: text, .. }
        | ModelTurn::ShowInput { file: text } => json!({
            "type": "message", "id": identifier("msg"), "role": "assistant",
            "status": "completed",
            "content": [{ "type": "output_text", "text": text, "annotations": [],
                          "logprobs": [] }] }),
    };
    let id = identifier("resp");
    let model = body["model"].as_str().unwrap_or("gpt-stand-in").to_owned();
    let response = |status: &str, usage: Option<Value>, output: Value| {
        let mut response = json!({
            "id": id, "object": "response", "created_at": 0, "model": model,
            "status": status, "output": output, "error": null, "incomplete_details": null,
            "instructions": null, "tools": [], "parallel_tool_calls": false,
            "metadata": {}, "tool_choice": "auto", "temperature": 1.0, "top_p": 1.0 });
        if let Some(usage) = usage {
            response["usage"] = usage;
        }
        response
    };
    let usage = json!({
        "input_tokens": input_tokens,
        "input_tokens_details": { "cached_tokens": 0, "cache_write_tokens": 0 },
        "output_tokens": OUTPUT_TOKENS_PER_TURN,
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": input_tokens + OUTPUT_TOKENS_PER_TURN,
    });
    event_stream(
        &[
            (
                Some("response.created"),
                json!({ "type": "response.created", "sequence_number": 0,
                        "response": response("in_progress", None, json!([])) }),
            ),
            (
                Some("response.output_item.added"),
                json!({ "type": "response.output_item.added", "sequence_number": 1,
                        "output_index": 0, "item": item }),
            ),
            (
                Some("response.output_item.done"),
                json!({ "type": "response.output_item.done", "sequence_number": 2,
                        "output_index": 0, "item": item }),
            ),
            (
                Some("response.completed"),
                json!({ "type": "response.completed", "sequence_number": 3,
                        "response": response("completed", Some(usage), json!([item])) }),
            ),
        ],
        false,
    )
}
