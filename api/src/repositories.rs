//! Repositories in the window: connect one picked from the signed-in account's list (or
//! typed as `owner/name`), change its settings — base branch, feedback label, quota,
//! backend, agent, image, E2B template, instructions, the four stage prompts — and
//! disconnect it (its history stays). Choosing the `local` backend needs an explicit
//! confirmation that it has no isolation.

use serde::Serialize;

use super::records::{QuotaRecord, RepoRecord};
pub use super::repo_settings_input::RepoSettingsInput;
use super::repo_settings_input::{
    backend_of, blank_is_none, read_repo_name as parse_name, read_settings, ReadSettings,
};
use super::{invalid_input, AppCore};
use handoff::domain::agent_presets::PRESETS;
use handoff::domain::stage_prompts::default_stage_template;
use handoff::domain::{NewRepo, Repo, RepoName, SandboxBackend, Stage};
use handoff::error_code::{CodedError, ErrorCode};
use handoff::github::user_repositories::GithubRepository;
use handoff::store::QuotaStatus;

/// A repository the signed-in account can see, for the "Connect" list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
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
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StagePromptView {
    #[cfg_attr(feature = "page-contract", ts(as = "crate::page_contract::StageWords"))]
    pub stage: Stage,
    pub template: String,
    pub default_template: String,
    pub is_own: bool,
}

/// An agent the settings offer.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentOption {
    pub name: &'static str,
    pub key_provider: Option<&'static str>,
    pub package: &'static str,
    pub limitation: Option<&'static str>,
}

/// A repository's settings as the window shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
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

/// The repositories the signed-in account can see, filtered by `search` (words of the
/// name or description), those it may push to first.
pub async fn repository_choices(
    core: &AppCore,
    search: &str,
) -> Result<Vec<RepositoryChoice>, CodedError> {
    let github = core.github().await?;
    let connected: Vec<String> = core
        .store
        .repositories()
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

/// A repository just connected, and what became of a fork for its agent branches.
#[derive(Debug, Clone)]
pub struct ConnectedRepository {
    pub repo: RepoRecord,
    /// The fork (`owner/name`) made for its agent branches, where the owner keeps forks.
    pub fork_made: Option<String>,
    /// Why no fork was made there, when one was to be made.
    pub fork_not_made: Option<String>,
}

/// Connects `full_name`, with the base branch GitHub reports when it can be asked.
pub async fn connect_repository(core: &AppCore, full_name: &str) -> Result<RepoRecord, CodedError> {
    let connected =
        connect_repository_with(core, full_name, &RepoSettingsInput::default(), false).await?;
    Ok(connected.repo)
}

/// Connects `full_name` with the settings of `input` (read whole first: a bad field
/// connects nothing). Choosing the local backend is refused (`needs_confirmation`)
/// unless the owner confirmed it outside the page.
pub async fn connect_repository_with(
    core: &AppCore,
    full_name: &str,
    input: &RepoSettingsInput,
    confirmed_outside_the_page: bool,
) -> Result<ConnectedRepository, CodedError> {
    let name = parse_name(full_name)?;
    let settings = read_settings(input)?;
    if settings.change.sandbox_backend == Some(SandboxBackend::Local) {
        refuse_unconfirmed(
            &no_isolation_question(&name.full_name()),
            confirmed_outside_the_page,
        )?;
    }
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
    let added = core.store.repositories().add_repo(&new).await?;
    apply_settings(core, added.id, &settings).await?;
    let repo = core.store.repositories().repo(added.id).await?;
    let mut connected = ConnectedRepository {
        repo: repo.clone().into(),
        fork_made: None,
        fork_not_made: None,
    };
    // Once the owner has a place for forks, a new repository's agent branches go to a
    // fork there, so that CI never runs the agent's code with its secrets.
    if github.is_some() && repo.push_fork.is_none() {
        match super::agent_forks::fork_where_new_repositories_go(core, &name.full_name()).await {
            Ok(Some(fork)) => {
                connected.fork_made = Some(fork);
                connected.repo = core.store.repositories().repo(repo.id).await?.into();
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(repo = %name, message = %error.message, "no fork for the agent's branches was made for a new repository; they go to the repository itself");
                connected.fork_not_made = Some(error.message);
            }
        }
    }
    Ok(connected)
}

/// The question before a repository's agent runs on the local backend.
fn no_isolation_question(full_name: &str) -> String {
    format!(
        "The local backend runs the agent for {full_name} as you, with no isolation: \
         your files, your keyring and your network are in its reach. Use it anyway?"
    )
}

/// Makes (or finds) the repository's fork in `place` for its agent branches (see
/// [`super::agent_forks::make_agent_fork`]); the repository's settings as they are then.
pub async fn make_agent_fork(
    core: &AppCore,
    full_name: &str,
    place: &str,
) -> Result<RepoSettingsView, CodedError> {
    super::agent_forks::make_agent_fork(core, full_name, place).await?;
    repo_settings(core, full_name).await
}

/// A repository's settings.
pub async fn repo_settings(
    core: &AppCore,
    full_name: &str,
) -> Result<RepoSettingsView, CodedError> {
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
    let quota = core
        .store
        .spend()
        .quota_status(repo.id, core.store.now())
        .await?;
    let mut stage_prompts = Vec::new();
    for stage in [
        Stage::Review,
        Stage::Plan,
        Stage::Test,
        Stage::Fix,
        Stage::Lessons,
    ] {
        let default_template = default_stage_template(stage).unwrap_or_default().to_owned();
        let own = core.store.stage_runs().stage_prompt(repo.id, stage).await?;
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
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
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
        no_isolation_question(full_name)
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
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
    if repo.sandbox_backend != SandboxBackend::Local {
        return Ok(None);
    }
    let stage = prompt_stage(stage)?;
    let own = core.store.stage_runs().stage_prompt(repo.id, stage).await?;
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

/// Saves a change of settings. A change that [`confirmation_needed`] names is refused
/// (with the code `needs_confirmation`) unless the owner confirmed it outside the page
/// (`confirmed_outside_the_page`: a dialog of the shell's own, or the command line's
/// `--confirm-no-isolation`). The input is read whole first: a bad field saves nothing.
pub async fn save_repo_settings(
    core: &AppCore,
    full_name: &str,
    input: &RepoSettingsInput,
    confirmed_outside_the_page: bool,
) -> Result<RepoSettingsView, CodedError> {
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
    let settings = read_settings(input)?;
    if let Some(question) = confirmation_needed(core, full_name, input).await? {
        refuse_unconfirmed(&question, confirmed_outside_the_page)?;
    }
    apply_settings(core, repo.id, &settings).await?;
    repo_settings(core, full_name).await
}

/// Refuses what needs the owner's confirmation, unless it was given.
fn refuse_unconfirmed(question: &str, confirmed: bool) -> Result<(), CodedError> {
    if confirmed {
        return Ok(());
    }
    Err(CodedError {
        code: ErrorCode::NeedsConfirmation,
        message: format!("not saved: {question}"),
        fix: None,
    })
}

async fn apply_settings(
    core: &AppCore,
    repo: handoff::domain::RepoId,
    settings: &ReadSettings,
) -> Result<(), CodedError> {
    core.store
        .repositories()
        .change_repo_settings(repo, &settings.change)
        .await?;
    if let Some(budget) = settings.monthly_budget {
        core.store.spend().set_monthly_budget(repo, budget).await?;
    }
    Ok(())
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
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
    if let Some(question) =
        stage_prompt_confirmation_needed(core, full_name, stage, template).await?
    {
        refuse_unconfirmed(&question, confirmed_outside_the_page)?;
    }
    let stage = prompt_stage(stage)?;
    let template = template.filter(|text| !text.trim().is_empty());
    core.store
        .stage_runs()
        .set_stage_prompt(repo.id, stage, template)
        .await?;
    repo_settings(core, full_name).await
}

/// The connected repositories, with every setting.
pub async fn connected_repositories(core: &AppCore) -> Result<Vec<Repo>, CodedError> {
    Ok(core.store.repositories().repos().await?)
}

/// One connected repository with every setting.
pub async fn repository(core: &AppCore, name: &RepoName) -> Result<Repo, CodedError> {
    Ok(core.store.repositories().repo_by_name(name).await?)
}

/// One connected repository with every setting, and its run quota this month.
pub async fn repository_and_quota(
    core: &AppCore,
    name: &RepoName,
) -> Result<(Repo, QuotaStatus), CodedError> {
    let repo = core.store.repositories().repo_by_name(name).await?;
    let quota = core
        .store
        .spend()
        .quota_status(repo.id, core.store.now())
        .await?;
    Ok((repo, quota))
}

/// A stage's prompt template for a repository: its own, if it has one, and the one a run
/// of that stage reads (its own, else the built-in one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagePromptText {
    pub own: Option<String>,
    pub read_by_runs: String,
}

pub async fn stage_prompt_text(
    core: &AppCore,
    name: &RepoName,
    stage: &str,
) -> Result<StagePromptText, CodedError> {
    let stage = prompt_stage(stage)?;
    let repo = core.store.repositories().repo_by_name(name).await?;
    let own = core.store.stage_runs().stage_prompt(repo.id, stage).await?;
    let read_by_runs = own
        .clone()
        .or_else(|| default_stage_template(stage).map(str::to_owned))
        .unwrap_or_default();
    Ok(StagePromptText { own, read_by_runs })
}

/// Disconnects a repository; its feedback, runs and comments stay in the mirror.
pub async fn disconnect_repository(core: &AppCore, full_name: &str) -> Result<(), CodedError> {
    let repo = core
        .store
        .repositories()
        .repo_by_name(&parse_name(full_name)?)
        .await?;
    core.store.repositories().disconnect_repo(repo.id).await?;
    Ok(())
}
