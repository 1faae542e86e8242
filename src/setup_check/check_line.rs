//! One line of Check setup: how the check came out (ok, a warning, a failure), what was
//! found, and the one fix the window offers as a button and the command line as a
//! command; and the report of every line, as bad as its worst one.

use serde::{Deserialize, Serialize};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failure,
}

pub use handoff_domain::fix::Fix;

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    /// Stable, for the front ends: `github`, `repo:owner/name`, `image:owner/name`, …
    pub id: String,
    /// What was checked, in a few words.
    pub subject: String,
    pub status: CheckStatus,
    /// What was found.
    pub detail: String,
    pub fix: Option<Fix>,
    /// The fix in one sentence (the front ends add their button or command).
    pub fix_sentence: Option<String>,
}

impl CheckLine {
    pub fn ok(
        id: impl Into<String>,
        subject: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status: CheckStatus::Ok,
            detail: detail.into(),
            fix: None,
            fix_sentence: None,
        }
    }

    pub fn not_ok(
        status: CheckStatus,
        id: impl Into<String>,
        subject: impl Into<String>,
        detail: impl Into<String>,
        fix: Fix,
    ) -> Self {
        CheckLine {
            id: id.into(),
            subject: subject.into(),
            status,
            detail: detail.into(),
            fix_sentence: Some(fix.to_string()),
            fix: Some(fix),
        }
    }

    /// The line as one sentence or two: what was found, and the fix.
    pub fn sentence(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}: {}. {fix}", self.subject, self.detail),
            None => format!("{}: {}", self.subject, self.detail),
        }
    }
}

impl std::fmt::Display for CheckLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence())
    }
}

/// Every line of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupReport {
    pub lines: Vec<CheckLine>,
}

impl SetupReport {
    /// The worst status of any line.
    pub fn status(&self) -> CheckStatus {
        if self.lines.iter().any(|l| l.status == CheckStatus::Failure) {
            CheckStatus::Failure
        } else if self.lines.iter().any(|l| l.status == CheckStatus::Warning) {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        }
    }
}
