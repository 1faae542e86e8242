//! A change of a repository's settings as a front end sends it, and the one reading of
//! it both front ends share: the window's form and `handoff repo add|set` fill the same
//! [`RepoSettingsInput`], so a setting means the same, and is refused for the same
//! reason, wherever it is typed. Text comes as typed; empty text means "the default" (or
//! "none", where a setting can be absent).

use serde::Deserialize;

use super::invalid_input;
use handoff::domain::agent_presets::preset_named;
use handoff::domain::network_policy::parse_allowed_hosts;
use handoff::domain::review_requests::{parse_labels, parse_reviewers};
use handoff::domain::{NetworkMode, RepoName, SandboxBackend};
use handoff::error_code::CodedError;
use handoff::store::RepoSettingsChange;

/// A change of settings: `None` leaves a setting as it is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct RepoSettingsInput {
    pub default_branch: Option<String>,
    /// Never empty: an issue is feedback by its label.
    pub feedback_label: Option<String>,
    pub custom_instructions: Option<String>,
    /// `Some(None)`: no limit.
    pub monthly_run_quota: Option<Option<u32>>,
    pub sandbox_backend: Option<String>,
    pub agent_preset: Option<String>,
    pub agent_command: Option<String>,
    pub docker_image: Option<String>,
    pub e2b_template: Option<String>,
    /// The wall-clock limit of one run in minutes, as typed: a whole number of at
    /// least 1.
    pub run_timeout_minutes: Option<String>,
    pub network_mode: Option<String>,
    /// The allow-list as typed: entries separated by lines, spaces or commas.
    pub allowed_hosts: Option<String>,
    /// Whether the PRs Handoff opens are drafts.
    pub draft_pull_requests: Option<bool>,
    /// Whether the test stage files an issue for each failing scenario.
    pub file_test_issues: Option<bool>,
    /// Runs of its own that may go at once, as typed: a whole number of at least 1, or
    /// empty (or `none`) for no slots of its own.
    pub run_slots: Option<String>,
    /// Whether its Docker runs may go to E2B when Docker's slots are full.
    pub overflow_to_e2b: Option<bool>,
    /// Whether failing checks update its feedback PRs
    /// by themselves.
    pub automatic_updates: Option<bool>,
    /// The most automatic updates one PR gets in 24 hours, as typed.
    pub automatic_attempts_per_day: Option<String>,
    /// Labels for the PRs Handoff opens, as typed (lines or commas).
    pub pull_request_labels: Option<String>,
    /// Reviewers to request on them, as typed (logins and `org/team`).
    pub pull_request_reviewers: Option<String>,
    /// Files its environment image is keyed on besides the recipe's and the usual
    /// lockfiles, as typed (paths from the root, lines or commas).
    pub environment_key_files: Option<String>,
    /// The fork (`owner/name`) agent branches are pushed to; empty: the repository.
    pub push_fork: Option<String>,
    /// Dollars its runs may spend per month, as typed; empty (or `none`): no limit.
    pub monthly_budget: Option<String>,
}

impl RepoSettingsInput {
    /// Whether it changes nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == RepoSettingsInput::default()
    }
}

/// What an input asks of the store: the settings, and the monthly budget (kept apart
/// from them): `Some(None)` removes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadSettings {
    pub change: RepoSettingsChange,
    pub monthly_budget: Option<Option<f64>>,
}

/// A setting that can be refused, so that each front end names it its own way (the
/// window by its field's label, the command line by its flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoSetting {
    FeedbackLabel,
    Agent,
    Backend,
    RunTimeout,
    NetworkMode,
    AllowedHosts,
    RunSlots,
    AutomaticAttemptsPerDay,
    PullRequestLabels,
    PullRequestReviewers,
    EnvironmentKeyFiles,
    PushFork,
    MonthlyBudget,
}

impl RepoSetting {
    /// The label of its field in the window's repository settings.
    pub fn form_label(self) -> &'static str {
        match self {
            RepoSetting::FeedbackLabel => "Feedback label",
            RepoSetting::Agent => "Agent",
            RepoSetting::Backend => "Sandbox",
            RepoSetting::RunTimeout => "Time limit of a run",
            RepoSetting::NetworkMode => "Network in the sandbox",
            RepoSetting::AllowedHosts => "Allowed hosts",
            RepoSetting::RunSlots => "Runs at once",
            RepoSetting::AutomaticAttemptsPerDay => "Automatic updates a day",
            RepoSetting::PullRequestLabels => "Labels on its PRs",
            RepoSetting::PullRequestReviewers => "Reviewers to request",
            RepoSetting::EnvironmentKeyFiles => "Environment also keyed on",
            RepoSetting::PushFork => "Push branches to a fork",
            RepoSetting::MonthlyBudget => "Budget per month",
        }
    }
}

/// A setting refused as typed, and why; nothing of the change is saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", .setting.form_label())]
pub struct RefusedSetting {
    pub setting: RepoSetting,
    pub reason: String,
}

impl From<RefusedSetting> for CodedError {
    fn from(refused: RefusedSetting) -> Self {
        invalid_input(refused.to_string())
    }
}

fn refused(setting: RepoSetting) -> impl FnOnce(String) -> RefusedSetting {
    move |reason| RefusedSetting { setting, reason }
}

/// A field as typed, read by `read` when it is given; a refusal names `setting`.
fn read_field<T>(
    typed: &Option<String>,
    setting: RepoSetting,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> Result<Option<T>, RefusedSetting> {
    typed
        .as_deref()
        .map(read)
        .transpose()
        .map_err(refused(setting))
}

/// Reads `input` whole before anything is saved, so that one bad field leaves every
/// setting as it was.
pub fn read_settings(input: &RepoSettingsInput) -> Result<ReadSettings, RefusedSetting> {
    if let Some(preset) = input.agent_preset.as_deref() {
        if preset != "custom" && preset_named(preset).is_none() {
            return Err(RefusedSetting {
                setting: RepoSetting::Agent,
                reason: format!(
                    "unknown agent {preset:?}: opencode, claude, aider, codex or custom"
                ),
            });
        }
    }
    let change = RepoSettingsChange {
        default_branch: input.default_branch.as_deref().map(|b| b.trim().to_owned()),
        feedback_label: read_field(
            &input.feedback_label,
            RepoSetting::FeedbackLabel,
            read_feedback_label,
        )?,
        custom_instructions: input.custom_instructions.clone(),
        monthly_run_quota: input.monthly_run_quota,
        sandbox_backend: backend_of(input)?,
        agent_preset: input.agent_preset.clone(),
        agent_command: input.agent_command.as_deref().map(blank_is_none),
        docker_image: input.docker_image.as_deref().map(blank_is_none),
        run_timeout_seconds: read_field(
            &input.run_timeout_minutes,
            RepoSetting::RunTimeout,
            read_run_timeout,
        )?,
        e2b_template: input.e2b_template.as_deref().map(blank_is_none),
        network_mode: read_field(&input.network_mode, RepoSetting::NetworkMode, |text| {
            text.trim()
                .parse::<NetworkMode>()
                .map_err(|error| error.to_string())
        })?,
        allowed_hosts: read_field(&input.allowed_hosts, RepoSetting::AllowedHosts, |text| {
            parse_allowed_hosts(text).map_err(|error| error.to_string())
        })?,
        draft_pull_requests: input.draft_pull_requests,
        file_test_issues: input.file_test_issues,
        run_slots: read_field(&input.run_slots, RepoSetting::RunSlots, read_run_slots)?,
        overflow_to_e2b: input.overflow_to_e2b,
        automatic_updates: input.automatic_updates,
        automatic_attempts_per_day: read_field(
            &input.automatic_attempts_per_day,
            RepoSetting::AutomaticAttemptsPerDay,
            handoff::domain::automatic_update::parse_attempts_per_day,
        )?,
        pull_request_labels: read_field(
            &input.pull_request_labels,
            RepoSetting::PullRequestLabels,
            parse_labels,
        )?,
        pull_request_reviewers: read_field(
            &input.pull_request_reviewers,
            RepoSetting::PullRequestReviewers,
            parse_reviewers,
        )?,
        environment_key_files: read_field(
            &input.environment_key_files,
            RepoSetting::EnvironmentKeyFiles,
            handoff::domain::environment_key::parse_key_files,
        )?,
        push_fork: read_field(&input.push_fork, RepoSetting::PushFork, read_push_fork)?,
    };
    let monthly_budget =
        read_field(
            &input.monthly_budget,
            RepoSetting::MonthlyBudget,
            |text| match text.trim() {
                "" => Ok(None),
                text => handoff::store::spend::parse_dollars(text),
            },
        )?;
    Ok(ReadSettings {
        change,
        monthly_budget,
    })
}

/// The backend `input` chooses, if it chooses one.
pub fn backend_of(input: &RepoSettingsInput) -> Result<Option<SandboxBackend>, RefusedSetting> {
    match input.sandbox_backend.as_deref() {
        Some(text) => Ok(Some(SandboxBackend::parse(text.trim()).ok_or_else(
            || RefusedSetting {
                setting: RepoSetting::Backend,
                reason: format!("unknown backend {text:?}: docker, e2b or local"),
            },
        )?)),
        None => Ok(None),
    }
}

/// Text that is empty once trimmed means "none".
pub fn blank_is_none(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|text| !text.is_empty())
}

/// A repository's name as typed.
pub fn read_repo_name(text: &str) -> Result<RepoName, CodedError> {
    text.trim()
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))
}

fn read_feedback_label(text: &str) -> Result<String, String> {
    let label = text.trim();
    if label.is_empty() {
        return Err(
            "the feedback label is empty: issues become feedback by their label, so \
                    name one (feedback, unless you say otherwise)"
                .to_owned(),
        );
    }
    Ok(label.to_owned())
}

/// Run slots: none of its own when empty or `none`; 0 is refused, since it reads as
/// "no runs at all".
fn read_run_slots(text: &str) -> Result<Option<u32>, String> {
    match text.trim() {
        "" | "none" => Ok(None),
        text => text
            .parse::<u32>()
            .ok()
            .filter(|slots| *slots >= 1)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "{text:?} is not a whole number of at least 1 (none, or empty: no slots of \
                     its own)"
                )
            }),
    }
}

fn read_run_timeout(text: &str) -> Result<u32, String> {
    let text = text.trim();
    text.parse::<u32>()
        .ok()
        .filter(|minutes| (1..=24 * 60).contains(minutes))
        .map(|minutes| minutes * 60)
        .ok_or_else(|| format!("{text:?} is not a whole number of minutes from 1 to 1440"))
}

fn read_push_fork(text: &str) -> Result<Option<RepoName>, String> {
    match text.trim() {
        "" => Ok(None),
        text => text
            .parse()
            .map(Some)
            .map_err(|error: handoff::domain::RepoNameError| error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::error_code::ErrorCode;

    fn refusal(input: RepoSettingsInput) -> String {
        let refused = read_settings(&input).expect_err("refused");
        let error = CodedError::from(refused.clone());
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.starts_with(refused.setting.form_label()));
        error.message
    }

    #[test]
    fn an_empty_feedback_label_is_refused_not_dropped() {
        let message = refusal(RepoSettingsInput {
            feedback_label: Some("  ".to_owned()),
            ..Default::default()
        });
        assert!(message.contains("the feedback label is empty"), "{message}");
    }

    #[test]
    fn run_slots_are_at_least_one_or_none_of_its_own() {
        for (typed, read) in [("", None), ("none", None), ("3", Some(3))] {
            let settings = read_settings(&RepoSettingsInput {
                run_slots: Some(typed.to_owned()),
                ..Default::default()
            })
            .expect("read");
            assert_eq!(settings.change.run_slots, Some(read), "{typed:?}");
        }
        for typed in ["0", "-1", "two"] {
            let message = refusal(RepoSettingsInput {
                run_slots: Some(typed.to_owned()),
                ..Default::default()
            });
            assert!(message.contains("at least 1"), "{typed:?}: {message}");
        }
    }

    #[test]
    fn the_run_timeout_is_typed_in_minutes() {
        let settings = read_settings(&RepoSettingsInput {
            run_timeout_minutes: Some(" 45 ".to_owned()),
            ..Default::default()
        })
        .expect("read");
        assert_eq!(settings.change.run_timeout_seconds, Some(45 * 60));
        for typed in ["0", "", "1441", "half an hour"] {
            let message = refusal(RepoSettingsInput {
                run_timeout_minutes: Some(typed.to_owned()),
                ..Default::default()
            });
            assert!(
                message.contains("minutes from 1 to 1440"),
                "{typed:?}: {message}"
            );
        }
    }

    #[test]
    fn a_monthly_budget_of_none_or_empty_removes_it() {
        for typed in ["", "none"] {
            let settings = read_settings(&RepoSettingsInput {
                monthly_budget: Some(typed.to_owned()),
                ..Default::default()
            })
            .expect("read");
            assert_eq!(settings.monthly_budget, Some(None), "{typed:?}");
        }
        let settings = read_settings(&RepoSettingsInput {
            monthly_budget: Some("12.50".to_owned()),
            ..Default::default()
        })
        .expect("read");
        assert_eq!(settings.monthly_budget, Some(Some(12.5)));
    }

    #[test]
    fn one_bad_field_refuses_the_whole_change() {
        let message = refusal(RepoSettingsInput {
            feedback_label: Some("bugs".to_owned()),
            agent_preset: Some("nonesuch".to_owned()),
            ..Default::default()
        });
        assert!(message.contains("unknown agent"), "{message}");
    }
}
