//! What a run's agent spent, as the agent itself reports it: the tokens and the cost
//! a run records. The job script keeps the end of what the agent printed
//! (`out/agent-output-tail.txt`), where the agents Handoff knows write their account:
//! - Claude Code (`--output-format stream-json` or `json`): a `result` line with
//!   `total_cost_usd` and `usage` (input, cache-creation, cache-read and output tokens);
//! - Codex (`exec --json`): a `turn.completed` line per turn with its `usage`;
//! - aider: "Tokens: 1.2k sent, 80 received. Cost: $0.01 message, $0.02 session.".
//!
//! An agent of the owner's own may instead write `out/usage.json`
//! (`{"cost_usd":…, "tokens_in":…, "tokens_out":…}`), which comes first.

use serde_json::Value;

/// Tokens and cost of one run; each part is unknown when the agent does not say it.
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize)]
pub struct AgentUsage {
    pub cost_usd: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
}

impl AgentUsage {
    /// Whether the agent said anything at all.
    pub fn is_known(&self) -> bool {
        self.cost_usd.is_some() || self.tokens_in.is_some() || self.tokens_out.is_some()
    }

    /// `out/usage.json`'s text, if it is the account it should be.
    pub fn from_usage_file(text: &str) -> Result<AgentUsage, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The account at the end of an agent's output, if it gives one.
    pub fn from_agent_output(text: &str) -> Option<AgentUsage> {
        [claude_result, codex_turns, aider_report]
            .iter()
            .find_map(|reader| reader(text))
    }
}

fn json_lines(text: &str) -> impl DoubleEndedIterator<Item = Value> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
}

fn integer(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

/// Claude Code's last `result` line.
fn claude_result(text: &str) -> Option<AgentUsage> {
    let result = json_lines(text)
        .rev()
        .find(|line| line["type"] == "result" && line.get("total_cost_usd").is_some())?;
    let usage = &result["usage"];
    Some(AgentUsage {
        cost_usd: result["total_cost_usd"].as_f64(),
        tokens_in: usage.is_object().then(|| {
            integer(&usage["input_tokens"])
                + integer(&usage["cache_creation_input_tokens"])
                + integer(&usage["cache_read_input_tokens"])
        }),
        tokens_out: usage.is_object().then(|| integer(&usage["output_tokens"])),
    })
}

/// Codex's `turn.completed` lines, added up (it gives tokens, not dollars).
fn codex_turns(text: &str) -> Option<AgentUsage> {
    let turns: Vec<Value> = json_lines(text)
        .filter(|line| line["type"] == "turn.completed" && line["usage"].is_object())
        .collect();
    if turns.is_empty() {
        return None;
    }
    Some(AgentUsage {
        cost_usd: None,
        tokens_in: Some(
            turns
                .iter()
                .map(|turn| integer(&turn["usage"]["input_tokens"]))
                .sum(),
        ),
        tokens_out: Some(
            turns
                .iter()
                .map(|turn| integer(&turn["usage"]["output_tokens"]))
                .sum(),
        ),
    })
}

/// A count as aider prints it: `980`, `1.2k`, `3.4M`.
fn aider_count(word: &str) -> Option<i64> {
    let word = word.trim().trim_end_matches(',');
    let (number, scale) = match word.chars().last()? {
        'k' | 'K' => (&word[..word.len() - 1], 1_000.0),
        'm' | 'M' => (&word[..word.len() - 1], 1_000_000.0),
        _ => (word, 1.0),
    };
    number
        .replace(',', "")
        .parse::<f64>()
        .ok()
        .map(|count| (count * scale).round() as i64)
}

/// aider's last "Tokens: … Cost: …" line; the session's cost is the run's.
fn aider_report(text: &str) -> Option<AgentUsage> {
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| line.starts_with("Tokens:") && line.contains(" sent"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let before = |marker: &str| {
        words
            .iter()
            .position(|word| word.trim_end_matches([',', '.']) == marker)
            .and_then(|index| index.checked_sub(1))
            .and_then(|index| aider_count(words[index]))
    };
    let cost_usd = line
        .split("Cost:")
        .nth(1)
        .and_then(|costs| {
            costs
                .split(',')
                .find(|part| part.contains("session"))
                .or_else(|| costs.split(',').next())
        })
        .and_then(|part| {
            part.trim()
                .trim_start_matches('$')
                .split_whitespace()
                .next()
        })
        .and_then(|amount| amount.parse::<f64>().ok());
    Some(AgentUsage {
        cost_usd,
        tokens_in: before("sent"),
        tokens_out: before("received"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_result_line_gives_cost_and_every_input_token() {
        let output = concat!(
            r#"{"type":"system","subtype":"init","model":"claude-x"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.0421,"usage":{"input_tokens":1200,"cache_creation_input_tokens":300,"cache_read_input_tokens":500,"output_tokens":80}}"#,
            "\n"
        );
        assert_eq!(
            AgentUsage::from_agent_output(output),
            Some(AgentUsage {
                cost_usd: Some(0.0421),
                tokens_in: Some(2000),
                tokens_out: Some(80),
            })
        );
    }

    #[test]
    fn codexs_turns_are_added_up_and_cost_stays_unknown() {
        let output = concat!(
            r#"{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":50,"output_tokens":40}}"#,
            "\n",
            "handoff: a line of Handoff's own\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":0,"output_tokens":10}}"#,
            "\n"
        );
        assert_eq!(
            AgentUsage::from_agent_output(output),
            Some(AgentUsage {
                cost_usd: None,
                tokens_in: Some(500),
                tokens_out: Some(50),
            })
        );
    }

    #[test]
    fn aiders_last_report_gives_the_sessions_cost() {
        let output = "Tokens: 100 sent, 20 received. Cost: $0.00045 message, $0.00045 session.\n\
                      Applied edit to a.txt\n\
                      Tokens: 1.2k sent, 80 received. Cost: $0.0031 message, $0.0036 session.\n";
        assert_eq!(
            AgentUsage::from_agent_output(output),
            Some(AgentUsage {
                cost_usd: Some(0.0036),
                tokens_in: Some(1200),
                tokens_out: Some(80),
            })
        );
    }

    #[test]
    fn output_without_an_account_gives_nothing() {
        assert_eq!(AgentUsage::from_agent_output("hello\n{not json\n"), None);
        assert_eq!(
            AgentUsage::from_agent_output(r#"{"type":"result","result":"no cost"}"#),
            None
        );
        assert!(!AgentUsage::default().is_known());
    }

    #[test]
    fn a_usage_file_is_read_as_written() {
        let usage =
            AgentUsage::from_usage_file(r#"{"cost_usd":0.5,"tokens_in":10,"tokens_out":2}"#)
                .unwrap();
        assert_eq!(usage.cost_usd, Some(0.5));
        assert!(AgentUsage::from_usage_file("[1]").is_err());
    }
}
