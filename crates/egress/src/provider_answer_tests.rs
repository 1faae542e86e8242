//! The answers as the providers document them, fed in awkward pieces.

use super::*;

/// Feeds `body` in pieces of `piece` bytes, the way a network hands it over.
fn read(api: ModelApi, content_type: &str, body: &str, piece: usize) -> AnswerReading {
    let mut reader = AnswerReader::new(api, Some(content_type));
    for chunk in body.as_bytes().chunks(piece) {
        reader.feed(chunk);
    }
    reader.finish()
}

const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":25,"cache_creation_input_tokens":1000,"cache_read_input_tokens":3000,"output_tokens":1}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll write "}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the file."}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\": \"src/a.rs\","}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"content\": \"fn a() {}\"}"}}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":89}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

#[test]
fn anthropic_streamed_usage_takes_every_kind_of_token_and_the_running_output_total() {
    for piece in [1, 7, 64, 100_000] {
        let reading = read(
            ModelApi::AnthropicMessages,
            "text/event-stream; charset=utf-8",
            ANTHROPIC_STREAM,
            piece,
        );
        assert_eq!(
            reading.usage,
            TokenUsage {
                input: 25,
                cache_write: 1000,
                cache_write_hour: 0,
                cache_read: 3000,
                output: 89,
                reasoning: 0
            },
            "in pieces of {piece}"
        );
        assert!(reading.usage_reported);
        assert_eq!(reading.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
        assert_eq!(reading.text, "I'll write the file.");
        assert_eq!(
            reading.tool_calls,
            vec![ToolCall {
                name: "Write".into(),
                input: r#"{"file_path": "src/a.rs", "content": "fn a() {}"}"#.into()
            }]
        );
    }
}

#[test]
fn anthropic_message_delta_with_input_figures_replaces_the_start() {
    let body = concat!(
        r#"data: {"type":"message_start","message":{"model":"claude-haiku-4-5","usage":{"input_tokens":10,"output_tokens":1}}}"#,
        "\n\n",
        r#"data: {"type":"message_delta","usage":{"input_tokens":12,"cache_read_input_tokens":5,"output_tokens":40}}"#,
        "\n\n",
    );
    let reading = read(ModelApi::AnthropicMessages, "text/event-stream", body, 5);
    assert_eq!(reading.usage.input, 12);
    assert_eq!(reading.usage.cache_read, 5);
    assert_eq!(reading.usage.output, 40);
}

#[test]
fn anthropic_plain_answer_is_read_from_its_body() {
    let body = r#"{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5",
        "content":[{"type":"text","text":"Running the tests."},
                   {"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"cargo test"}}],
        "stop_reason":"tool_use",
        "usage":{"input_tokens":2095,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":503}}"#;
    let reading = read(ModelApi::AnthropicMessages, "application/json", body, 13);
    assert_eq!(reading.usage.input, 2095);
    assert_eq!(reading.usage.output, 503);
    assert_eq!(reading.model.as_deref(), Some("claude-opus-4-5"));
    assert_eq!(reading.tool_calls[0].name, "Bash");
    assert_eq!(reading.tool_calls[0].input, r#"{"command":"cargo test"}"#);
    assert_eq!(reading.text, "Running the tests.");
}

#[test]
fn openai_responses_stream_counts_cached_input_apart_and_keeps_reasoning() {
    let response = r#"{"id":"resp_1","object":"response","model":"gpt-5-codex","status":"completed",
        "output":[{"type":"reasoning","summary":[]},
                  {"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"},
                  {"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c2"},
                  {"type":"message","content":[{"type":"output_text","text":"Done."}]}],
        "usage":{"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},
                 "output_tokens":700,"output_tokens_details":{"reasoning_tokens":512},"total_tokens":5700}}"#
        .replace('\n', " ");
    let body = format!(
        "event: response.created\ndata: {{\"type\":\"response.created\",\"response\":{{\"model\":\"gpt-5-codex\"}}}}\n\n\
         event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"delta\":\"Done.\"}}\n\n\
         event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{response}}}\n\n"
    );
    for piece in [3, 4096] {
        let reading = read(ModelApi::OpenaiResponses, "text/event-stream", &body, piece);
        assert_eq!(
            reading.usage,
            TokenUsage {
                input: 904,
                cache_write: 0,
                cache_write_hour: 0,
                cache_read: 4096,
                output: 700,
                reasoning: 512
            }
        );
        assert_eq!(reading.model.as_deref(), Some("gpt-5-codex"));
        let names: Vec<&str> = reading
            .tool_calls
            .iter()
            .map(|call| call.name.as_str())
            .collect();
        assert_eq!(names, ["shell", "apply_patch"]);
        assert_eq!(reading.text, "Done.");
    }
    let plain = read(ModelApi::OpenaiResponses, "application/json", &response, 50);
    assert_eq!(plain.usage.input + plain.usage.cache_read, 5000);
}

#[test]
fn chat_completions_usage_chunk_and_streamed_tool_calls_are_read() {
    let body = concat!(
        r#"data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":"Edit"}}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"write_file","arguments":"{\"path\":"}}]}}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
        "\n\n",
        r#"data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":20,"total_tokens":320,"prompt_tokens_details":{"cached_tokens":100}}}"#,
        "\n\n",
        "data: [DONE]\n\n",
    );
    let reading = read(ModelApi::ChatCompletions, "text/event-stream", body, 11);
    assert_eq!(reading.usage.input, 200);
    assert_eq!(reading.usage.cache_read, 100);
    assert_eq!(reading.usage.output, 20);
    assert_eq!(reading.tool_calls[0].name, "write_file");
    assert_eq!(reading.tool_calls[0].input, r#"{"path":"a.txt"}"#);
    let plain = r#"{"model":"gpt-4.1","choices":[{"message":{"content":"hi","tool_calls":[]}}],
                    "usage":{"prompt_tokens":7,"completion_tokens":3}}"#;
    let reading = read(ModelApi::ChatCompletions, "application/json", plain, 9);
    assert_eq!(reading.usage.input, 7);
    assert_eq!(reading.usage.output, 3);
    assert_eq!(reading.text, "hi");
}

#[test]
fn cache_writes_kept_for_an_hour_are_read_and_cost_twice_the_input() {
    let body = r#"{"model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000},"cache_read_input_tokens":0,"output_tokens":5}}"#;
    let reading = read(ModelApi::AnthropicMessages, "application/json", body, 7);
    assert_eq!(reading.usage.cache_write, 3000);
    assert_eq!(reading.usage.cache_write_hour, 2000);
    let cost = handoff_domain::model_prices::PriceTable::default()
        .cost_of("claude-sonnet-4-5", &reading.usage)
        .unwrap();
    // $3 in, $3.75 a five-minute write, $6 an hour's write, $15 out (a million each).
    let expected = (10.0 * 3.0 + 1000.0 * 3.75 + 2000.0 * 6.0 + 5.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-12, "{cost} {expected}");
}

#[test]
fn a_messages_stream_cut_off_before_its_last_usage_has_not_reported_it() {
    // The provider's connection ends after the text: `message_start` told the input and
    // a placeholder output of 1, never the output written.
    let cut = ANTHROPIC_STREAM
        .split("event: message_delta")
        .next()
        .expect("the stream up to its last usage");
    let reading = read(ModelApi::AnthropicMessages, "text/event-stream", cut, 64);
    assert!(!reading.usage_reported, "{reading:?}");
    assert_eq!(reading.usage.input, 25, "what it did say is kept");
    assert_eq!(reading.text, "I'll write the file.");
}

#[test]
fn an_answer_without_usage_says_so_and_garbage_is_no_panic() {
    let reading = read(
        ModelApi::AnthropicMessages,
        "application/json",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        4,
    );
    assert!(!reading.usage_reported);
    assert_eq!(reading.usage, TokenUsage::default());
    let reading = read(
        ModelApi::OpenaiResponses,
        "text/event-stream",
        "data: {not json\n\ndata: \u{0}\u{1}\n",
        2,
    );
    assert!(!reading.usage_reported);
}

#[test]
fn a_long_tool_input_is_cut() {
    let long = "x".repeat(10_000);
    let body = format!(
        r#"{{"model":"m","content":[{{"type":"tool_use","name":"Write","input":{{"content":"{long}"}}}}],"usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    );
    let reading = read(ModelApi::AnthropicMessages, "application/json", &body, 1000);
    assert!(reading.tool_calls[0].input.len() <= TOOL_INPUT_KEPT_BYTES + 3);
}

#[test]
fn model_calls_are_told_from_other_endpoints() {
    assert_eq!(
        ModelApi::of_path("/v1/messages"),
        Some(ModelApi::AnthropicMessages)
    );
    assert_eq!(ModelApi::of_path("/v1/messages/count_tokens"), None);
    assert_eq!(
        ModelApi::of_path("/v1/responses"),
        Some(ModelApi::OpenaiResponses)
    );
    assert_eq!(
        ModelApi::of_path("/v1/chat/completions"),
        Some(ModelApi::ChatCompletions)
    );
    assert_eq!(ModelApi::of_path("/v1/models"), None);
}
