//! OpenAI's Chat Completions API as the stand-in model answers it (platform.openai.com,
//! "Chat Completions"), which aider uses through litellm: a JSON completion, or when
//! `stream` is set, `chat.completion.chunk` events ending with a usage chunk and
//! `[DONE]`. aider edits files from the text itself, so a file to write becomes one of
//! its SEARCH/REPLACE blocks (an empty SEARCH creates the file).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::{event_stream, identifier, json_response, ModelTurn, OUTPUT_TOKENS_PER_TURN};

/// The text of a turn, as aider reads it.
fn text_of(turn: &ModelTurn) -> String {
    match turn {
        ModelTurn::WriteFile { path, contents } => format!(
            "{path}\n```\n<<<<<<< SEARCH\n=======\n{}\n>>>>>>> REPLACE\n```\n",
            contents.trim_end_matches('\n')
        ),
        ModelTurn::RunCommand(command) => format!("```bash\n{command}\n```\n"),
        ModelTurn::Text(text)
        | ModelTurn::WriteOutput { contents: text, .. }
        | ModelTurn::ShowInput { file: text }
        | ModelTurn::Error { message: text, .. } => text.clone(),
    }
}

pub(super) fn answer(body: &Value, turn: &ModelTurn, input_tokens: u64) -> Response {
    if let ModelTurn::Error { status, message } = turn {
        return json_response(
            StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &json!({ "error": { "message": message, "type": "invalid_request_error",
                                "param": null, "code": null } }),
        );
    }
    let id = identifier("chatcmpl");
    let model = body["model"].as_str().unwrap_or("gpt-stand-in").to_owned();
    let text = text_of(turn);
    let usage = json!({
        "prompt_tokens": input_tokens,
        "completion_tokens": OUTPUT_TOKENS_PER_TURN,
        "total_tokens": input_tokens + OUTPUT_TOKENS_PER_TURN,
    });
    if body["stream"] != json!(true) {
        return json_response(
            StatusCode::OK,
            &json!({ "id": id, "object": "chat.completion", "created": 0, "model": model,
                     "choices": [{ "index": 0, "finish_reason": "stop", "logprobs": null,
                                   "message": { "role": "assistant", "content": text,
                                                "refusal": null } }],
                     "usage": usage }),
        );
    }
    // Only the last chunk carries usage, and its choices are empty.
    let chunk = |delta: Value, finish: Value, usage: Value| {
        let mut chunk = json!({ "id": id, "object": "chat.completion.chunk", "created": 0,
                                "model": model, "choices": [] });
        if usage.is_null() {
            chunk["choices"] = json!([{ "index": 0, "delta": delta, "finish_reason": finish }]);
        } else {
            chunk["usage"] = usage;
        }
        chunk
    };
    event_stream(
        &[
            (
                None,
                chunk(
                    json!({ "role": "assistant", "content": text }),
                    Value::Null,
                    Value::Null,
                ),
            ),
            (None, chunk(json!({}), json!("stop"), Value::Null)),
            (None, chunk(json!({}), Value::Null, usage)),
        ],
        true,
    )
}
