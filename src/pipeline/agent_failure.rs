//! Why an agent failed, in its own words: the error it reported at the end of its
//! output (`out/agent-output-tail.txt`), so that a run that ends on a model error says
//! which ("API Error: 401 … invalid x-api-key") instead of only an exit code.
//! - Claude Code (`stream-json`/`json`): a `result` line with `is_error` and the text;
//! - Codex (`exec --json`): a `turn.failed` line with its error, or an `error` line.

use serde_json::Value;

/// The longest reason kept from an agent's output.
const LONGEST_REASON_CHARS: usize = 400;

/// The error the agent reported last, if it reported one in a shape Handoff knows.
pub fn agent_error_of(output: &str) -> Option<String> {
    let reason = output
        .lines()
        .rev()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|line| reported_error(&line))?;
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if reason.chars().count() > LONGEST_REASON_CHARS {
        let cut: String = reason.chars().take(LONGEST_REASON_CHARS).collect();
        format!("{cut}…")
    } else {
        reason
    })
    .filter(|reason| !reason.is_empty())
}

fn reported_error(line: &Value) -> Option<String> {
    match line["type"].as_str()? {
        "result" if line["is_error"] == Value::Bool(true) => line["result"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| line["subtype"].as_str().map(str::to_owned)),
        "turn.failed" => line["error"]["message"].as_str().map(str::to_owned),
        "error" => line["message"].as_str().map(str::to_owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_error_result_is_the_reason() {
        let output = concat!(
            r#"{"type":"system","subtype":"init"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"}"#,
            "\n"
        );
        let reason = agent_error_of(output).unwrap();
        assert!(reason.starts_with("API Error: 401"), "{reason}");
        assert!(reason.contains("invalid x-api-key"), "{reason}");
    }

    #[test]
    fn codexs_failed_turn_is_the_reason() {
        let output = concat!(
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: invalid_api_key"}}"#,
            "\n"
        );
        assert_eq!(
            agent_error_of(output).as_deref(),
            Some("unexpected status 401 Unauthorized: invalid_api_key")
        );
    }

    #[test]
    fn a_success_or_plain_text_gives_no_reason() {
        assert_eq!(
            agent_error_of(r#"{"type":"result","is_error":false,"result":"done"}"#),
            None
        );
        assert_eq!(agent_error_of("error: something\n"), None);
    }

    #[test]
    fn a_long_reason_is_cut() {
        let long = format!(r#"{{"type":"error","message":"{}"}}"#, "x".repeat(1000));
        let reason = agent_error_of(&long).unwrap();
        assert_eq!(reason.chars().count(), LONGEST_REASON_CHARS + 1);
    }
}
