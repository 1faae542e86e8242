//! Repositories in the window: connect one picked from the signed-in account's list (or
//! typed as `owner/name`), change its settings — base branch, feedback label, quota,
//! backend, agent, image, E2B template, instructions, the four stage prompts — and
//! disconnect it (its history stays). Choosing the `local` backend needs an explicit
//! confirmation that it has no isolation.

use chrono::Utc;
use handoff::domain::review_requests::{parse_labels, parse_reviewers};
use serde::{Deserialize, Serialize};

use super::records::{QuotaRecord, RepoRecord};
use super::{invalid_input, AppCore};
use handoff::domain::agent_presets::{preset_named, PRESETS};
use handoff::domain::network_policy::parse_allowed_hosts;
use handoff::domain::stage_prompts::default_stage_template;
use handoff::domain::{NetworkMode, NewRepo, Repo, RepoName, SandboxBackend, Stage};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::user_repositories::GithubRepository;
use handoff::store::RepoSettingsChange;

/// A repository the signed-in account can see, for the "Connect" list.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RepositoryChoice {
    pub full_name: String,
    pub default_branch: String,
    pub private: bool,
    pub can_push: bool,
    pub description: Option<String>,
    /// Already connected here.
    pub connected: bool,
}

/// One stage's prompt: the repository's own, or the default.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct StagePromptView {
    #[ts(as = "crate::page_contract::StageWords")]
    pub stage: Stage,
    pub template: String,
    pub default_template: String,
    pub is_own: bool,
}

/// An agent the settings offer.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentOption {
    pub name: &'static str,
    pub key_provider: Option<&'static str>,
    pub package: &'static str,
    pub limitation: Option<&'static str>,
}

/// A repository's settings as the window shows them.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RepoSettingsView {
    pub repo: RepoRecord,
    pub full_name: String,
    pub quota: QuotaRecord,
    pub stage_prompts: Vec<StagePromptView>,
    pub agents: Vec<AgentOption>,
    /// The image Docker runs use when the image setting is empty.
    pub default_docker_image: String,
}

/// A change of settings as the window sends it: empty text means "the default".
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
#[serde(default, rename_all = "camelCase")]
pub struct RepoSettingsInput {
    pub default_branch: Option<String>,
    pub feedback_label: Option<String>,
    pub custom_instructions: Option<String>,
    /// `Some(None)`: no limit.
    pub monthly_run_quota: Option<Option<u32>>,
    pub sandbox_backend: Option<String>,
    pub agent_preset: Option<String>,
    pub agent_command: Option<String>,
    pub docker_image: Option<String>,
    pub e2b_template: Option<String>,
    pub network_mode: Option<String>,
    /// The allow-list as typed: entries separated by lines, spaces or commas.
    pub allowed_hosts: Option<String>,
    /// Whether the PRs Handoff opens are drafts.
    pub draft_pull_requests: Option<bool>,
    /// Whether the test stage files an issue for each failing scenario.
    pub file_test_issues: Option<bool>,
    /// Runs of its own that may go at once, as typed; empty: no slots of its own.
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
    /// The fork (`owner/name`) agent branches are pushed to; empty: the repository.
    pub push_fork: Option<String>,
    /// Dollars its runs may spend per month, as typed; empty: no limit.
    pub monthly_budget: Option<String>,
}

fn parse_run_slots(text: &str) -> Result<u32, CodedError> {
    text.parse::<u32>()
        .ok()
        .filter(|slots| *slots >= 1)
        .ok_or_else(|| {
            invalid_input(format!(
                "run slots {text:?} is not a whole number of at least 1 (empty: no slots of its own)"
            ))
        })
}

fn parse_automatic_attempts(text: &str) -> Result<u32, CodedError> {
    handoff::domain::automatic_update::parse_attempts_per_day(text)
        .map_err(|reason| invalid_input(format!("Automatic updates a day: {reason}")))
}

fn parse_name(text: &str) -> Result<RepoName, CodedError> {
    text.trim()
        .parse()
        .map_err(|error: handoff::domain::RepoNameError| invalid_input(error.to_string()))
}

fn blank_is_none(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|text| !text.is_empty())
}

/// The repositories the signed-in account can see, filtered by `search` (words of the
/// name or description), those it may push to first.
pub async fn repository_choices(
    core: &AppCore,
    search: &str,
) -> Result<Vec<RepositoryChoice>, CodedError> {
    let github = core.github().await?;
    let connected: Vec<String> = core
        .store
        .repos()
        .await?
        .iter()
        .map(|repo| repo.name.full_name().to_ascii_lowercase())
        .collect();
    let words: Vec<String> = search
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let mut choices: Vec<RepositoryChoice> = github
        .user_repositories(&core.store)
        .await?
        .into_iter()
        .filter(|repository: &GithubRepository| {
            let haystack = format!(
                "{} {}",
                repository.full_name,
                repository.description.as_deref().unwrap_or_default()
            )
            .to_ascii_lowercase();
            words.iter().all(|word| haystack.contains(word))
        })
        .map(|repository| RepositoryChoice {
            connected: connected.contains(&repository.full_name.to_ascii_lowercase()),
            can_push: repository.can_push(),
            full_name: repository.full_name,
            default_branch: repository.default_branch,
            private: repository.private,
            description: repository.description,
        })
        .collect();
    choices.sort_by_key(|choice| !choice.can_push);
    Ok(choices)
}

/// Connects `full_name`, with the base branch GitHub reports when it can be asked.
pub async fn connect_repository(core: &AppCore, full_name: &str) -> Result<RepoRecord, CodedError> {
    let name = parse_name(full_name)?;
    let mut new = NewRepo::with_defaults(name.clone());
    // The default branch is asked of GitHub; without an answer the usual default stays
    // and the owner can change it in the settings.
    let github = match core.github().await {
        Ok(github) => {
            match github.repository(&name).await {
                Ok(repository) => new.default_branch = repository.default_branch,
                Err(error) => {
                    tracing::warn!(repo = %name, %error, "the default branch could not be read from GitHub")
                }
            }
            Some(github)
        }
        Err(error) => {
            tracing::info!(repo = %name, message = %error.message, "connected without asking GitHub for the default branch");
            None
        }
    };
    let repo = core.store.add_repo(&new).await?;
    // Once the owner has a place for forks, a new repository's agent branches go to a
    // fork there, so that CI never runs the agent's code with its secrets.
    if github.is_some() && repo.push_fork.is_none() {
        match super::agent_forks::fork_where_new_repositories_go(core, &name.full_name()).await {
            Ok(Some(_)) => return Ok(core.store.repo(repo.id).await?.into()),
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(repo = %name, message = %error.message, "no fork for the agent's branches was made for a new repository; they go to the repository itself")
            }
        }
    }
    Ok(repo.into())
}

/// A repository's settings.
pub async fn repo_settings(
    core: &AppCore,
    full_name: &str,
) -> Result<RepoSettingsView, CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    let quota = core.store.quota_status(repo.id, Utc::now()).await?;
    let mut stage_prompts = Vec::new();
    for stage in [
        Stage::Review,
        Stage::Plan,
        Stage::Test,
        Stage::Fix,
        Stage::Lessons,
    ] {
        let default_template = default_stage_template(stage).unwrap_or_default().to_owned();
        let own = core.store.stage_prompt(repo.id, stage).await?;
        stage_prompts.push(StagePromptView {
            stage,
            is_own: own.is_some(),
            template: own.unwrap_or_else(|| default_template.clone()),
            default_template,
        });
    }
    let settings = handoff::pipeline::PipelineSettings::configured(&core.store).await?;
    let (default_docker_image, _) = handoff::setup_check::docker_image_of(
        &settings,
        &Repo {
            docker_image: None,
            ..repo.clone()
        },
    );
    Ok(RepoSettingsView {
        full_name: repo.name.full_name(),
        repo: repo.into(),
        quota: quota.into(),
        stage_prompts,
        agents: PRESETS
            .iter()
            .map(|preset| AgentOption {
                name: preset.name,
                key_provider: preset.api_key.as_ref().map(|key| key.provider),
                package: preset.package,
                limitation: preset.limitation,
            })
            .collect(),
        default_docker_image,
    })
}

/// What the owner must confirm before `input` is saved, in a dialog the page cannot
/// draw: a change that makes Handoff run a command as the owner, with no isolation
/// (choosing the local backend, or changing the agent, its command or its instructions
/// while it is chosen).
pub async fn confirmation_needed(
    core: &AppCore,
    full_name: &str,
    input: &RepoSettingsInput,
) -> Result<Option<String>, CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    let backend = backend_of(input)?.unwrap_or(repo.sandbox_backend);
    if backend != SandboxBackend::Local {
        return Ok(None);
    }
    let command = input.agent_command.as_deref().map(blank_is_none);
    let preset_changes = input
        .agent_preset
        .as_deref()
        .is_some_and(|preset| preset != repo.agent_preset);
    let command_changes = command
        .as_ref()
        .is_some_and(|command| *command != repo.agent_command);
    let instructions_change = input
        .custom_instructions
        .as_deref()
        .is_some_and(|instructions| instructions != repo.custom_instructions);
    let question = if repo.sandbox_backend != SandboxBackend::Local {
        format!(
            "The local backend runs the agent for {full_name} as you, with no isolation: \
             your files, your keyring and your network are in its reach. Use it anyway?"
        )
    } else if preset_changes || command_changes {
        let runs = match (&command, input.agent_preset.as_deref()) {
            (Some(Some(command)), _) => format!("the command `{command}`"),
            (_, Some(preset)) => format!("the {preset} agent"),
            _ => "another command".to_owned(),
        };
        format!(
            "{full_name} runs on the local backend, with no isolation: from now on it would \
             run {runs} as you, with your files, keyring and network in reach. Go ahead?"
        )
    } else if instructions_change {
        local_steering_question(full_name, "the instructions its agent gets on every run")
    } else {
        return Ok(None);
    };
    Ok(Some(question))
}

/// The question for a change of what steers a local repository's agent (its
/// instructions, a stage's prompt): the agent runs as the owner, so words that reach it
/// decide what runs as the owner, and a script in the page must not be able to set them.
fn local_steering_question(full_name: &str, what: &str) -> String {
    format!(
        "{full_name} runs on the local backend, with no isolation: its agent runs as you, \
         with your files, keyring and network in reach, and does what it is told. Change \
         {what}?"
    )
}

/// What the owner must confirm, in a dialog the page cannot draw, before `stage`'s
/// prompt of `full_name` becomes `template`: a change of what a local repository's
/// agent is told.
pub async fn stage_prompt_confirmation_needed(
    core: &AppCore,
    full_name: &str,
    stage: &str,
    template: Option<&str>,
) -> Result<Option<String>, CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    if repo.sandbox_backend != SandboxBackend::Local {
        return Ok(None);
    }
    let stage = prompt_stage(stage)?;
    let own = core.store.stage_prompt(repo.id, stage).await?;
    let template = template.filter(|text| !text.trim().is_empty());
    if own.as_deref() == template {
        return Ok(None);
    }
    Ok(Some(local_steering_question(
        full_name,
        &format!("the {stage} stage's prompt"),
    )))
}

fn prompt_stage(stage: &str) -> Result<Stage, CodedError> {
    Stage::parse(stage)
        .filter(|stage| default_stage_template(*stage).is_some())
        .ok_or_else(|| {
            invalid_input(format!(
                "no prompt for stage {stage:?}: review, plan, test, fix or lessons"
            ))
        })
}

fn backend_of(input: &RepoSettingsInput) -> Result<Option<SandboxBackend>, CodedError> {
    match input.sandbox_backend.as_deref() {
        Some(text) => Ok(Some(SandboxBackend::parse(text.trim()).ok_or_else(
            || invalid_input(format!("unknown backend {text:?}: docker, e2b or local")),
        )?)),
        None => Ok(None),
    }
}

/// Saves a change of settings. A change that [`confirmation_needed`] names is refused
/// (with the code `needs_confirmation`) unless the owner confirmed it in a dialog of the
/// shell's own (`confirmed_outside_the_page`).
pub async fn save_repo_settings(
    core: &AppCore,
    full_name: &str,
    input: &RepoSettingsInput,
    confirmed_outside_the_page: bool,
) -> Result<RepoSettingsView, CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    let backend = backend_of(input)?;
    if let Some(question) = confirmation_needed(core, full_name, input).await? {
        if !confirmed_outside_the_page {
            return Err(CodedError {
                code: ErrorCode::NeedsConfirmation,
                message: format!("not saved: {question}"),
            });
        }
    }
    let network_mode = match input.network_mode.as_deref() {
        Some(text) => Some(
            text.parse::<NetworkMode>()
                .map_err(|error| invalid_input(error.to_string()))?,
        ),
        None => None,
    };
    let allowed_hosts = match input.allowed_hosts.as_deref() {
        Some(text) => {
            Some(parse_allowed_hosts(text).map_err(|error| invalid_input(error.to_string()))?)
        }
        None => None,
    };
    if let Some(preset) = input.agent_preset.as_deref() {
        if preset != "custom" && preset_named(preset).is_none() {
            return Err(invalid_input(format!(
                "unknown agent {preset:?}: opencode, claude, aider, codex or custom"
            )));
        }
    }
    let change = RepoSettingsChange {
        default_branch: input.default_branch.as_deref().map(|b| b.trim().to_owned()),
        feedback_label: input
            .feedback_label
            .as_deref()
            .map(|label| label.trim().to_owned())
            .filter(|label| !label.is_empty()),
        custom_instructions: input.custom_instructions.clone(),
        monthly_run_quota: input.monthly_run_quota,
        sandbox_backend: backend,
        agent_preset: input.agent_preset.clone(),
        agent_command: input.agent_command.as_deref().map(blank_is_none),
        docker_image: input.docker_image.as_deref().map(blank_is_none),
        run_timeout_seconds: None,
        e2b_template: input.e2b_template.as_deref().map(blank_is_none),
        network_mode,
        allowed_hosts,
        draft_pull_requests: input.draft_pull_requests,
        file_test_issues: input.file_test_issues,
        run_slots: match input.run_slots.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(text) => Some(Some(parse_run_slots(text)?)),
        },
        overflow_to_e2b: input.overflow_to_e2b,
        automatic_updates: input.automatic_updates,
        automatic_attempts_per_day: input
            .automatic_attempts_per_day
            .as_deref()
            .map(parse_automatic_attempts)
            .transpose()?,
        pull_request_labels: input
            .pull_request_labels
            .as_deref()
            .map(|text| {
                parse_labels(text).map_err(|reason| invalid_input(format!("Labels: {reason}")))
            })
            .transpose()?,
        pull_request_reviewers: input
            .pull_request_reviewers
            .as_deref()
            .map(|text| {
                parse_reviewers(text)
                    .map_err(|reason| invalid_input(format!("Reviewers: {reason}")))
            })
            .transpose()?,
        push_fork: match input.push_fork.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(text) => Some(Some(parse_name(text)?)),
        },
    };
    let monthly_budget = match input.monthly_budget.as_deref().map(str::trim) {
        None => None,
        Some("") => Some(None),
        Some(text) => Some(
            handoff::store::spend::parse_dollars(text)
                .map_err(|reason| invalid_input(format!("Budget per month: {reason}")))?,
        ),
    };
    core.store.change_repo_settings(repo.id, &change).await?;
    if let Some(budget) = monthly_budget {
        core.store.set_monthly_budget(repo.id, budget).await?;
    }
    repo_settings(core, full_name).await
}

/// Sets a stage's prompt (`None`: back to the default). On a local repository a change
/// is refused (`needs_confirmation`) unless the owner confirmed it in a dialog of the
/// shell's own (`confirmed_outside_the_page`).
pub async fn set_stage_prompt(
    core: &AppCore,
    full_name: &str,
    stage: &str,
    template: Option<&str>,
    confirmed_outside_the_page: bool,
) -> Result<RepoSettingsView, CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    if let Some(question) =
        stage_prompt_confirmation_needed(core, full_name, stage, template).await?
    {
        if !confirmed_outside_the_page {
            return Err(CodedError {
                code: ErrorCode::NeedsConfirmation,
                message: format!("not saved: {question}"),
            });
        }
    }
    let stage = prompt_stage(stage)?;
    let template = template.filter(|text| !text.trim().is_empty());
    core.store
        .set_stage_prompt(repo.id, stage, template)
        .await?;
    repo_settings(core, full_name).await
}

/// Disconnects a repository; its feedback, runs and comments stay in the mirror.
pub async fn disconnect_repository(core: &AppCore, full_name: &str) -> Result<(), CodedError> {
    let repo = core.store.repo_by_name(&parse_name(full_name)?).await?;
    core.store.disconnect_repo(repo.id).await?;
    Ok(())
}
