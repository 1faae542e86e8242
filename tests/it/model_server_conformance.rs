//! The stand-in model server answers as OpenAI's published API description says: every
//! event of a streamed Responses answer (a function call, a call of Codex's code-mode
//! tool, a message), a Chat Completion whole and streamed, and an error body are checked
//! against the official schemas (test-support/specs/openai/).

use handoff_test_support as support;

use serde_json::{json, Value};
use support::model_server::{ModelServer, ModelTurn};
use support::openapi_schema::{openai_description, violations_in};

/// The schema an answer must follow, by name.
fn schema(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn assert_conforms(description: &Value, name: &str, value: &Value) {
    let found = violations_in(description, &schema(name), value);
    assert!(found.is_empty(), "{name}: {found:#?}\nin {value}");
}

/// The `data:` payloads of a server-sent-events body, with their event names.
fn events(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|line| line.strip_prefix("event: "))
                .map(str::to_owned);
            let data = block
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .collect::<Vec<_>>()
                .join("\n");
            (name, data)
        })
        .collect()
}

async fn post(server: &ModelServer, path: &str, body: Value) -> (u16, String) {
    let answer = handoff::http_client::default_client()
        .post(format!("{}{path}", server.api_base()))
        .json(&body)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

#[tokio::test]
async fn streamed_responses_follow_openais_description() {
    let description = openai_description();
    let server = ModelServer::start(vec![
        ModelTurn::RunCommand("ls".to_owned()),
        ModelTurn::WriteFile {
            path: "a.md".to_owned(),
            contents: "hi".to_owned(),
        },
        ModelTurn::Text("Done.".to_owned()),
    ])
    .await;
    let with_function = json!({ "model": "gpt-x", "stream": true, "input": [],
        "tools": [{ "type": "function", "name": "exec_command", "parameters": {} }] });
    let code_mode = json!({ "model": "gpt-x", "stream": true,
        "input": [{ "type": "additional_tools", "role": "developer", "tools": [] }] });
    let mut seen = Vec::new();
    for body in [with_function, code_mode.clone(), code_mode] {
        let (status, text) = post(&server, "/v1/responses", body).await;
        assert_eq!(status, 200, "{text}");
        for (name, data) in events(&text) {
            let event: Value = serde_json::from_str(&data).unwrap();
            let name = name.expect("every Responses event is named");
            assert_eq!(event["type"], name.as_str());
            let schema_name = match name.as_str() {
                "response.created" => "ResponseCreatedEvent",
                "response.output_item.added" => "ResponseOutputItemAddedEvent",
                "response.output_item.done" => "ResponseOutputItemDoneEvent",
                "response.completed" => "ResponseCompletedEvent",
                other => panic!("an event the description was not checked for: {other}"),
            };
            assert_conforms(&description, schema_name, &event);
            if name == "response.output_item.done" {
                seen.push(event["item"]["type"].as_str().unwrap().to_owned());
            }
        }
    }
    assert_eq!(seen, ["function_call", "custom_tool_call", "message"]);
}

#[tokio::test]
async fn chat_completions_follow_openais_description() {
    let description = openai_description();
    let server = ModelServer::start(vec![
        ModelTurn::WriteFile {
            path: "a.md".to_owned(),
            contents: "hi".to_owned(),
        },
        ModelTurn::Text("Done.".to_owned()),
    ])
    .await;
    let (status, whole) = post(
        &server,
        "/v1/chat/completions",
        json!({ "model": "gpt-x", "messages": [] }),
    )
    .await;
    assert_eq!(status, 200);
    let whole: Value = serde_json::from_str(&whole).unwrap();
    assert_conforms(&description, "CreateChatCompletionResponse", &whole);
    assert!(whole["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .contains(">>>>>>> REPLACE"));

    let (status, streamed) = post(
        &server,
        "/v1/chat/completions",
        json!({ "model": "gpt-x", "messages": [], "stream": true }),
    )
    .await;
    assert_eq!(status, 200);
    let chunks = events(&streamed);
    assert_eq!(chunks.last().unwrap().1, "[DONE]");
    for (_, data) in &chunks[..chunks.len() - 1] {
        let chunk: Value = serde_json::from_str(data).unwrap();
        assert_conforms(&description, "CreateChatCompletionStreamResponse", &chunk);
    }
}

#[tokio::test]
async fn an_error_follows_openais_description() {
    let description = openai_description();
    let server = ModelServer::start(vec![ModelTurn::Error {
        status: 401,
        message: "invalid x-api-key".to_owned(),
    }])
    .await;
    for path in ["/v1/responses", "/v1/chat/completions"] {
        let (status, text) = post(
            &server,
            path,
            json!({ "model": "gpt-x", "stream": true, "input": [], "messages": [],
                    "tools": [{ "type": "function", "name": "exec_command" }] }),
        )
        .await;
        assert_eq!(status, 401, "{path}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_conforms(&description, "ErrorResponse", &error);
    }
}

#[test]
fn the_check_catches_an_answer_that_breaks_the_description() {
    let description = openai_description();
    let broken = json!({ "type": "response.output_item.done", "sequence_number": 2,
        "output_index": 0,
        "item": { "type": "function_call", "name": "exec_command", "arguments": "{}" } });
    let found = violations_in(
        &description,
        &schema("ResponseOutputItemDoneEvent"),
        &broken,
    );
    assert!(
        found.iter().any(|violation| violation.contains("oneOf")),
        "a call without its call_id matches no kind of output item: {found:?}"
    );
    let no_sequence = json!({ "type": "response.created", "response": {} });
    assert!(!violations_in(&description, &schema("ResponseCreatedEvent"), &no_sequence).is_empty());
}
