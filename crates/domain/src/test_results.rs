//! Test results: what the `test` stage's agent reports — one entry per scenario of
//! the plan, passed or failed, with its evidence — read strictly, keyed so a re-run finds
//! the same scenario again, and summarised for the PR.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::untrusted_text::without_mentions;

/// One scenario's result as the agent reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    pub passed: bool,
    #[serde(default)]
    pub evidence: String,
}

#[derive(Debug, Deserialize)]
struct ResultsFile {
    scenarios: Vec<ScenarioResult>,
}

/// Why a results file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsError {
    #[error("results.json is not the expected JSON ({0}): it must be {{\"scenarios\": [{{\"name\", \"passed\", \"evidence\"}}]}}")]
    Shape(String),
    #[error("results.json lists no scenario")]
    Empty,
    #[error("scenario {0} of results.json has no name")]
    Unnamed(usize),
}

/// The longest evidence kept per scenario, in characters.
pub const EVIDENCE_MAX_CHARS: usize = 8_000;

/// Reads the agent's `results.json`.
pub fn parse_test_results(text: &str) -> Result<Vec<ScenarioResult>, ResultsError> {
    let file: ResultsFile =
        serde_json::from_str(text).map_err(|error| ResultsError::Shape(error.to_string()))?;
    if file.scenarios.is_empty() {
        return Err(ResultsError::Empty);
    }
    file.scenarios
        .into_iter()
        .enumerate()
        .map(|(index, mut scenario)| {
            scenario.name = scenario.name.trim().to_owned();
            if scenario.name.is_empty() {
                return Err(ResultsError::Unnamed(index + 1));
            }
            if scenario.evidence.chars().count() > EVIDENCE_MAX_CHARS {
                scenario.evidence = scenario
                    .evidence
                    .chars()
                    .take(EVIDENCE_MAX_CHARS)
                    .collect::<String>()
                    + "…";
            }
            Ok(scenario)
        })
        .collect()
}

/// A scenario's key: the same for the same name however it is spaced or cased, so a
/// re-run updates the issue of a scenario instead of filing another.
pub fn scenario_key(name: &str) -> String {
    let normalized = name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let digest = Sha256::digest(normalized.as_bytes());
    digest[..6]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The hidden first line of the issue filed for a failing scenario.
pub fn failure_issue_marker(pr_number: u64, key: &str) -> String {
    format!("<!-- handoff-qa-failure pr={pr_number} scenario={key} -->")
}

/// The body of the issue of a failing scenario.
pub fn failure_issue_body(pr_number: u64, run_id: i64, scenario: &ScenarioResult) -> String {
    format!(
        "{}\n### ❌ QA failure: {}\n\nFound by Handoff's test stage on #{pr_number} (run {run_id}).\n\n**Evidence**\n\n```\n{}\n```\n",
        failure_issue_marker(pr_number, &scenario_key(&scenario.name)),
        without_mentions(&scenario.name),
        without_mentions(&scenario.evidence.replace("```", "` ` `"))
    )
}

/// A scenario as the summary shows it: its result and the issue filed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryLine<'a> {
    pub scenario: &'a ScenarioResult,
    pub issue_number: Option<u64>,
}

fn cell(text: &str) -> String {
    without_mentions(&text.replace('|', "\\|").replace('\n', " "))
}

/// The content of the results comment.
pub fn results_summary(lines: &[SummaryLine<'_>], run_id: i64, note: Option<&str>) -> String {
    let failed = lines.iter().filter(|line| !line.scenario.passed).count();
    let mut text = format!(
        "**{} scenarios: {} passed, {} failed** (Handoff run {run_id})\n\n| # | Scenario | Result | Issue |\n|---|---|---|---|\n",
        lines.len(),
        lines.len() - failed,
        failed
    );
    for (index, line) in lines.iter().enumerate() {
        text.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            index + 1,
            cell(&line.scenario.name),
            if line.scenario.passed {
                "✅ passed"
            } else {
                "❌ failed"
            },
            line.issue_number
                .map(|n| format!("#{n}"))
                .unwrap_or_default()
        ));
    }
    if let Some(note) = note {
        text.push_str(&format!("\n{note}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_strictly() {
        let parsed = parse_test_results(r#"{"scenarios": [{"name": " Login ", "passed": true}, {"name": "Button", "passed": false, "evidence": "20px"}]}"#).unwrap();
        assert_eq!(parsed[0].name, "Login");
        assert!(!parsed[1].passed);
        assert!(matches!(
            parse_test_results("not json"),
            Err(ResultsError::Shape(_))
        ));
        assert_eq!(
            parse_test_results(r#"{"scenarios": []}"#),
            Err(ResultsError::Empty)
        );
        assert_eq!(
            parse_test_results(r#"{"scenarios": [{"name": "", "passed": true}]}"#),
            Err(ResultsError::Unnamed(1))
        );
        assert!(matches!(
            parse_test_results(r#"{"scenarios": [{"name": "x"}]}"#),
            Err(ResultsError::Shape(_))
        ));
    }

    #[test]
    fn a_scenario_keeps_its_key_across_spacing_and_case() {
        assert_eq!(
            scenario_key("Button  is 44px"),
            scenario_key("button is 44PX")
        );
        assert_ne!(
            scenario_key("Button is 44px"),
            scenario_key("Button is 45px")
        );
    }

    #[test]
    fn the_summary_counts_and_links() {
        let passed = ScenarioResult {
            name: "Login".into(),
            passed: true,
            evidence: String::new(),
        };
        let failed = ScenarioResult {
            name: "A | B".into(),
            passed: false,
            evidence: "x".into(),
        };
        let summary = results_summary(
            &[
                SummaryLine {
                    scenario: &passed,
                    issue_number: None,
                },
                SummaryLine {
                    scenario: &failed,
                    issue_number: Some(9),
                },
            ],
            4,
            None,
        );
        assert!(summary.starts_with("**2 scenarios: 1 passed, 1 failed** (Handoff run 4)"));
        assert!(summary.contains("| 2 | A \\| B | ❌ failed | #9 |"));
    }
}
