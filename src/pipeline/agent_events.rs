//! The agents' event lines, as a person reads them in a run's log. Claude Code
//! (`--output-format stream-json`) and Codex (`exec --json`) print one JSON event per
//! line so that their tokens and cost can be read; the log shows each as a line of
//! text instead: what the agent said, each tool it used with its file or command, each
//! result's first line, and the end with its cost. A line in neither shape, and any
//! line that is not JSON, is kept as it came. The raw events stay in the run's
//! `out/agent-output-tail.txt`, where the usage is read.

use serde_json::Value;

/// The longest part of one event the log shows (a command, a result's first line).
const SHOWN_CHARS: usize = 240;
/// The longest line held back while waiting for its end, before it is let through as
/// it is.
const LONGEST_HELD_LINE: usize = 1024 * 1024;

/// Turns complete event lines of one output stream into text; everything else passes
/// through as it comes. Only a line that starts with `{` waits for its end.
#[derive(Debug, Default)]
pub struct EventLines {
    /// The start of a line that may be an event, waiting for its newline.
    held: Vec<u8>,
    /// Whether the stream is in the middle of a line that is not an event.
    inside_plain_line: bool,
}

impl EventLines {
    /// Takes `bytes` and returns what can be shown now; with `last`, everything.
    pub fn take(&mut self, bytes: &[u8], last: bool) -> Vec<u8> {
        let mut input = std::mem::take(&mut self.held);
        input.extend_from_slice(bytes);
        let mut shown = Vec::with_capacity(input.len());
        let mut rest = input.as_slice();
        while !rest.is_empty() {
            let newline = rest.iter().position(|byte| *byte == b'\n');
            if self.inside_plain_line {
                let end = newline.map_or(rest.len(), |at| at + 1);
                shown.extend_from_slice(&rest[..end]);
                self.inside_plain_line = newline.is_none();
                rest = &rest[end..];
                continue;
            }
            match newline {
                Some(at) => {
                    shown.extend_from_slice(&shown_line(&rest[..at]));
                    rest = &rest[at + 1..];
                }
                None if !last && rest[0] == b'{' && rest.len() < LONGEST_HELD_LINE => {
                    self.held = rest.to_vec();
                    rest = &[];
                }
                None => {
                    shown.extend_from_slice(rest);
                    self.inside_plain_line = !last;
                    rest = &[];
                }
            }
        }
        shown
    }
}

/// One complete line (without its newline) as the log shows it, newline included;
/// nothing for an event that says nothing worth a line.
fn shown_line(line: &[u8]) -> Vec<u8> {
    let text = line
        .first()
        .filter(|first| **first == b'{')
        .and_then(|_| serde_json::from_slice::<Value>(line).ok())
        .and_then(|event| event_text(&event));
    match text {
        Some(text) if text.is_empty() => Vec::new(),
        Some(text) => format!("{text}\n").into_bytes(),
        None => {
            let mut kept = line.to_vec();
            kept.push(b'\n');
            kept
        }
    }
}

/// The text of an event of Claude Code or Codex; `None` for any other line.
pub fn event_text(event: &Value) -> Option<String> {
    let kind = event["type"].as_str()?;
    if event.get("session_id").is_some() {
        return claude_event_text(kind, event);
    }
    codex_event_text(kind, event)
}

fn cut(text: &str) -> String {
    let first_line = text.trim().lines().next().unwrap_or_default();
    let more = text.trim().lines().nth(1).is_some();
    let mut shown: String = first_line.chars().take(SHOWN_CHARS).collect();
    if more || first_line.chars().count() > SHOWN_CHARS {
        shown.push('…');
    }
    shown
}

/// What a tool call is about: its file, its command or its pattern.
fn tool_subject(input: &Value) -> String {
    for field in [
        "file_path",
        "command",
        "pattern",
        "path",
        "url",
        "description",
    ] {
        if let Some(subject) = input[field].as_str() {
            return cut(subject);
        }
    }
    cut(&input.to_string())
}

fn claude_event_text(kind: &str, event: &Value) -> Option<String> {
    match (kind, event["subtype"].as_str()) {
        ("system", Some("init")) => Some(format!(
            "claude: started ({})",
            event["model"].as_str().unwrap_or("its default model")
        )),
        ("system", Some("api_retry")) => Some(format!(
            "claude: the model answered {} ({}); retry {} of {}",
            event["error_status"],
            event["error"].as_str().unwrap_or("an error"),
            event["attempt"],
            event["max_retries"]
        )),
        ("assistant", _) => {
            let lines: Vec<String> = event["message"]["content"]
                .as_array()?
                .iter()
                .filter_map(|block| match block["type"].as_str()? {
                    "text" => Some(format!("claude: {}", block["text"].as_str()?.trim())),
                    "tool_use" => Some(format!(
                        "claude → {} {}",
                        block["name"].as_str()?,
                        tool_subject(&block["input"])
                    )),
                    _ => None,
                })
                .collect();
            Some(lines.join("\n"))
        }
        ("user", _) => {
            let lines: Vec<String> = event["message"]["content"]
                .as_array()?
                .iter()
                .filter(|block| block["type"] == "tool_result")
                .map(|block| {
                    let content = match &block["content"] {
                        Value::String(text) => text.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|part| part["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let error = if block["is_error"] == Value::Bool(true) {
                        "error: "
                    } else {
                        ""
                    };
                    format!("  ← {error}{}", cut(&content))
                })
                .collect();
            Some(lines.join("\n"))
        }
        ("result", _) if event["is_error"] == Value::Bool(true) => Some(format!(
            "claude: failed: {}",
            cut(event["result"].as_str().unwrap_or("no reason given"))
        )),
        ("result", _) => Some(format!(
            "claude: done in {:.1} s, {} turn(s){}",
            event["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
            event["num_turns"].as_i64().unwrap_or(0),
            event["total_cost_usd"]
                .as_f64()
                .map_or(String::new(), |cost| format!(", ${cost:.4}"))
        )),
        _ => None,
    }
}

fn codex_event_text(kind: &str, event: &Value) -> Option<String> {
    let item = &event["item"];
    match kind {
        "thread.started" => Some("codex: started".to_owned()),
        "turn.started" | "item.updated" => Some(String::new()),
        "turn.completed" => Some(format!(
            "codex: turn done ({} tokens in, {} out)",
            event["usage"]["input_tokens"], event["usage"]["output_tokens"]
        )),
        "turn.failed" => Some(format!(
            "codex: failed: {}",
            cut(event["error"]["message"]
                .as_str()
                .unwrap_or("no reason given"))
        )),
        "error" => Some(format!("codex: {}", cut(event["message"].as_str()?))),
        "item.started" if item["type"] == "command_execution" => Some(format!(
            "codex → $ {}",
            cut(item["command"].as_str().unwrap_or_default())
        )),
        "item.started" => Some(String::new()),
        "item.completed" => match item["type"].as_str()? {
            "agent_message" => Some(format!("codex: {}", item["text"].as_str()?.trim())),
            "command_execution" => Some(format!(
                "  ← exit {}: {}",
                item["exit_code"],
                cut(item["aggregated_output"].as_str().unwrap_or_default())
            )),
            "file_change" => Some(format!(
                "codex → changed {}",
                item["changes"]
                    .as_array()
                    .map(|changes| changes
                        .iter()
                        .filter_map(|change| change["path"].as_str())
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            )),
            "reasoning" => Some(String::new()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(lines: &[&[u8]]) -> String {
        let mut events = EventLines::default();
        let mut out = Vec::new();
        for (index, bytes) in lines.iter().enumerate() {
            out.extend(events.take(bytes, index + 1 == lines.len()));
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn claude_codes_events_read_as_what_it_did() {
        let text = shown(&[
            br#"{"type":"system","subtype":"init","model":"claude-x","session_id":"s"}
{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"/w/repo/a.md","content":"hi"}}]},"session_id":"s"}
{"type":"user","message":{"content":[{"type":"tool_result","content":"File created successfully\nmore"}]},"session_id":"s"}
{"type":"assistant","message":{"content":[{"type":"text","text":"I added a.md."}]},"session_id":"s"}
{"type":"result","is_error":false,"duration_ms":4200,"num_turns":2,"total_cost_usd":0.0123,"session_id":"s"}
"#,
        ]);
        assert_eq!(
            text,
            "claude: started (claude-x)\n\
             claude → Write /w/repo/a.md\n  \
             ← File created successfully…\n\
             claude: I added a.md.\n\
             claude: done in 4.2 s, 2 turn(s), $0.0123\n"
        );
    }

    #[test]
    fn codexs_events_read_as_what_it_did() {
        let text = shown(&[
            br#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.started","item":{"type":"command_execution","command":"bash -lc ls"}}
{"type":"item.completed","item":{"type":"command_execution","command":"bash -lc ls","aggregated_output":"a.md\n","exit_code":0}}
{"type":"item.completed","item":{"type":"agent_message","text":"Listed."}}
{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}
"#,
        ]);
        assert_eq!(
            text,
            "codex: started\ncodex → $ bash -lc ls\n  ← exit 0: a.md\ncodex: Listed.\n\
             codex: turn done (10 tokens in, 2 out)\n"
        );
    }

    #[test]
    fn an_event_split_across_pieces_waits_for_its_end_and_plain_text_never_waits() {
        let mut events = EventLines::default();
        assert_eq!(events.take(b"plain start ", false), b"plain start ");
        assert_eq!(events.take(b"{ still plain\n", false), b"{ still plain\n");
        assert_eq!(
            events.take(br#"{"type":"thread.sta"#, false),
            b"",
            "the start of an event waits"
        );
        assert_eq!(events.take(b"rted\"}\n", false), b"codex: started\n");
        assert_eq!(
            events.take(br#"{"unfinished": tr"#, true),
            br#"{"unfinished": tr"#,
            "at the end, what waited is shown as it is"
        );
    }

    #[test]
    fn other_json_lines_are_kept_as_they_came() {
        let text = shown(&[b"{\"type\":\"message\",\"text\":\"mine\"}\n{not json}\n"]);
        assert_eq!(
            text,
            "{\"type\":\"message\",\"text\":\"mine\"}\n{not json}\n"
        );
    }
}
