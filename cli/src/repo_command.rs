//! `handoff repo add|list|show|set|fork|prompt|disconnect`.

use clap::{Args, Subcommand};
use serde::Serialize;

use super::command_error::CliError;
use super::output::{dash_if_none, print_json, Table};
use super::terminal_text::printable;
use crate::shared_arguments::{agent_presets, parse_repo_name, prompt_stages, words_of, JsonFlag};
use handoff_api::agent_forks::{fork_places, make_agent_fork};
use handoff_api::core_types::{CodedError, ErrorCode, NetworkMode, RepoName, Stage};
use handoff_api::core_types::{QuotaStatus, Repo, SandboxBackend};
use handoff_api::repo_settings_input::{read_settings, RepoSetting};
use handoff_api::repositories::{
    connect_repository_with, connected_repositories, disconnect_repository, repository_and_quota,
    save_repo_settings, set_stage_prompt, stage_prompt_text, RepoSettingsInput,
};
use handoff_api::AppCore;
use std::path::PathBuf;

#[derive(Debug, Serialize)]
struct RepoWithQuota {
    #[serde(flatten)]
    repo: Repo,
    quota_this_month: QuotaStatus,
}

pub async fn run(core: &AppCore, command: RepoCommand) -> Result<(), CliError> {
    match command {
        RepoCommand::Add { repo, settings } => add(core, repo, settings).await,
        RepoCommand::Fork { repo, into } => fork(core, repo, into).await,
        RepoCommand::List(output) => list(core, output).await,
        RepoCommand::Disconnect { repo } => disconnect(core, repo).await,
        RepoCommand::Show { repo, output } => show(core, repo, output).await,
        RepoCommand::Prompt {
            repo,
            stage,
            file,
            reset,
            confirm_no_isolation,
        } => prompt(core, repo, stage, file, reset, confirm_no_isolation).await,
        RepoCommand::Set { repo, settings } => set(core, repo, settings).await,
    }
}

/// `repo add`.
async fn add(
    core: &AppCore,
    repo: RepoName,
    settings: RepoSettingsArguments,
) -> Result<(), CliError> {
    let confirmed = settings.confirm_no_isolation;
    let input = settings.into_input()?;
    let connected = connect_repository_with(core, &repo.full_name(), &input, confirmed)
        .await
        .map_err(with_confirmation_hint)?;
    let repo = connected.repo;
    println!(
        "connected {} (base {}, label {}, {} runs a month, {} backend)",
        repo.name,
        repo.default_branch,
        repo.feedback_label,
        dash_if_none(repo.monthly_run_quota),
        repo.sandbox_backend
    );
    if let Some(fork) = connected.fork_made {
        println!(
            "agent branches go to the fork {fork}: its PRs run CI without the repository's secrets"
        );
        return Ok(());
    }
    if let Some(reason) = connected.fork_not_made {
        println!("warning: no fork for the agent's branches was made: {reason}");
    }
    if repo.push_fork.is_none() {
        println!("{SAME_REPOSITORY_WARNING}");
    }
    Ok(())
}

/// The application layer asks for a confirmation the command line gives with a flag.
fn with_confirmation_hint(error: CodedError) -> CliError {
    if error.code != ErrorCode::NeedsConfirmation {
        return error.into();
    }
    CliError::Failure(format!(
        "{}\nhint: add --confirm-no-isolation to go ahead anyway, or choose a sandbox with \
         --backend docker (or e2b)",
        error.message
    ))
}

/// What the owner is told while agent branches go to the repository itself.
const SAME_REPOSITORY_WARNING: &str = "warning: agent branches go to the repository itself, \
so CI runs the agent's code with the repository's secrets; `handoff repo fork OWNER/NAME \
--into ORG` sends them to a fork, whose PRs run CI without them";

/// `repo fork`.
async fn fork(core: &AppCore, repo: RepoName, into: Option<String>) -> Result<(), CliError> {
    let places = fork_places(core).await?;
    let place = match into.or(places.default_place.clone()) {
        Some(place) => place,
        None => {
            let organizations: Vec<String> = places
                .organizations
                .iter()
                .filter(|place| place.can_create_repository)
                .map(|place| place.login.clone())
                .collect();
            return Err(CliError::Usage(format!(
                "say where the fork goes: --into ORG, an organization you may make repositories \
                 in ({}), or --into ACCOUNT, a second account of yours (a machine account) that \
                 made the fork itself and gave @{} write access to it; GitHub does not let an \
                 account fork its own repository into itself",
                if organizations.is_empty() {
                    "you belong to none".to_owned()
                } else {
                    organizations.join(", ")
                },
                places.owner
            )));
        }
    };
    println!("making (or finding) the fork of {repo} in {place}; GitHub may take a moment");
    let fork = make_agent_fork(core, &repo.full_name(), &place).await?;
    println!(
        "agent branches of {repo} go to the fork {fork}: its PRs run CI without the \
         repository's secrets; repositories connected from now on get their fork in {place} too"
    );
    Ok(())
}

/// `repo list`.
async fn list(core: &AppCore, output: JsonFlag) -> Result<(), CliError> {
    let repos = connected_repositories(core).await?;
    if output.json {
        return print_json(&repos);
    }
    if repos.is_empty() {
        println!("no repositories yet: connect one with `handoff repo add owner/name`");
        return Ok(());
    }
    let mut table = Table::new(&["REPOSITORY", "BASE", "LABEL", "QUOTA", "BACKEND", "AGENT"]);
    for repo in repos {
        table.row(vec![
            repo.name.full_name(),
            repo.default_branch,
            repo.feedback_label,
            dash_if_none(repo.monthly_run_quota),
            repo.sandbox_backend.to_string(),
            repo.agent_preset,
        ]);
    }
    print!("{}", table.render());
    Ok(())
}

/// `repo disconnect`.
async fn disconnect(core: &AppCore, repo: RepoName) -> Result<(), CliError> {
    disconnect_repository(core, &repo.full_name()).await?;
    println!("disconnected {repo}: its history stays; `handoff repo add {repo}` connects it again");
    Ok(())
}

/// `repo show`.
async fn show(core: &AppCore, repo: RepoName, output: JsonFlag) -> Result<(), CliError> {
    let (repo, quota) = repository_and_quota(core, &repo).await?;
    if output.json {
        return print_json(&RepoWithQuota {
            repo,
            quota_this_month: quota,
        });
    }
    println!("{}", repo.name);
    println!("  base branch:   {}", repo.default_branch);
    println!("  feedback label: {}", repo.feedback_label);
    println!("  backend:       {}", repo.sandbox_backend);
    println!("  agent:         {}", repo.agent_preset);
    println!("  network:       {}", repo.network_mode);
    println!(
        "  PRs open as:   {}",
        if repo.draft_pull_requests {
            "drafts"
        } else {
            "ready for review"
        }
    );
    println!(
        "  test failures: {}",
        if repo.file_test_issues {
            "an issue each"
        } else {
            "in the results comment only"
        }
    );
    if let Some(slots) = repo.run_slots {
        println!("  run slots:     {slots} of its own");
    }
    if repo.overflow_to_e2b {
        println!("  Docker full:   runs go to E2B");
    }
    if !repo.pull_request_labels.is_empty() {
        println!("  PR labels:     {}", repo.pull_request_labels.join(", "));
    }
    if !repo.environment_key_files.is_empty() {
        println!(
            "  env keyed on:  {}",
            printable(&repo.environment_key_files.join(", "))
        );
    }
    if !repo.pull_request_reviewers.is_empty() {
        let reviewers: Vec<String> = repo
            .pull_request_reviewers
            .iter()
            .map(ToString::to_string)
            .collect();
        println!("  PR reviewers:  {}", reviewers.join(", "));
    }
    if repo.automatic_updates {
        println!(
            "  automatic updates: failing checks update PRs by themselves, at most {} a PR a day",
            repo.automatic_attempts_per_day
        );
    }
    match &repo.push_fork {
        Some(fork) => println!(
            "  branches go to the fork {fork} (its PRs run CI without the repository's secrets)"
        ),
        None => println!(
            "  branches go to the repository itself: CI runs the agent's code with the repository's secrets (`handoff repo fork {}`)",
            repo.name
        ),
    }
    if !repo.allowed_hosts.is_empty() {
        let hosts: Vec<String> = repo.allowed_hosts.iter().map(ToString::to_string).collect();
        println!("  allowed hosts: {}", hosts.join(", "));
    }
    print_limits(&repo, &quota);
    Ok(())
}

/// A repository's quota, budget and instructions, for `repo show`.
fn print_limits(repo: &Repo, quota: &QuotaStatus) {
    match (quota.quota, quota.left) {
        (Some(limit), Some(left)) => {
            println!("  quota:         {left} of {limit} runs left this month")
        }
        _ => println!("  quota:         no limit ({} runs this month)", quota.used),
    }
    match repo.monthly_budget_usd {
        Some(budget) => println!(
            "  budget:        ${budget:.2} a month (`handoff spend --repo {}`)",
            repo.name
        ),
        None => println!("  budget:        no monthly limit"),
    }
    if repo.custom_instructions.is_empty() {
        println!("  instructions:  (none)");
    } else {
        println!("  instructions:");
        for line in repo.custom_instructions.lines() {
            println!("    {line}");
        }
    }
}

/// `repo prompt`.
async fn prompt(
    core: &AppCore,
    repo: RepoName,
    stage: Stage,
    file: Option<PathBuf>,
    reset: bool,
    confirmed: bool,
) -> Result<(), CliError> {
    if stage == Stage::FullAuto || stage == Stage::Code {
        return Err(CliError::Usage(
            "prompts are per stage: review, plan, test, fix or lessons".to_owned(),
        ));
    }
    let stage_word = stage.to_string();
    if reset {
        set_stage_prompt(core, &repo.full_name(), &stage_word, None, confirmed)
            .await
            .map_err(with_confirmation_hint)?;
        println!("the {stage} prompt of {repo} is the built-in one again");
        return Ok(());
    }
    if let Some(path) = file {
        let template = super::text_input::read_text(None, Some(path))?;
        if template.trim().is_empty() {
            return Err(CliError::Usage("the template is empty".to_owned()));
        }
        set_stage_prompt(
            core,
            &repo.full_name(),
            &stage_word,
            Some(&template),
            confirmed,
        )
        .await
        .map_err(with_confirmation_hint)?;
        println!("the {stage} prompt of {repo} is replaced");
        return Ok(());
    }
    let text = stage_prompt_text(core, &repo, &stage_word).await?;
    if text.own.is_none() {
        eprintln!("(the built-in {stage} prompt)");
    }
    print!("{}", text.read_by_runs);
    Ok(())
}

/// `repo set`.
async fn set(
    core: &AppCore,
    repo: RepoName,
    settings: RepoSettingsArguments,
) -> Result<(), CliError> {
    let confirmed = settings.confirm_no_isolation;
    let input = settings.into_input()?;
    if input.is_empty() {
        return Err(CliError::Usage(
            "nothing to change: name a setting, for example --quota 30".to_owned(),
        ));
    }
    let saved = save_repo_settings(core, &repo.full_name(), &input, confirmed)
        .await
        .map_err(with_confirmation_hint)?;
    println!("updated {}", saved.repo.name);
    Ok(())
}

impl RepoSettingsArguments {
    /// The change the flags ask for, as the window would type it: the application layer
    /// reads both the same way.
    fn into_input(self) -> Result<RepoSettingsInput, CliError> {
        let custom_instructions = match (self.instructions, self.instructions_file) {
            (Some(text), _) => Some(text),
            (None, Some(path)) => Some(std::fs::read_to_string(&path).map_err(|error| {
                CliError::Usage(format!("cannot read {}: {error}", path.display()))
            })?),
            (None, None) => None,
        };
        let input = RepoSettingsInput {
            default_branch: self.base,
            feedback_label: self.label,
            custom_instructions,
            monthly_run_quota: if self.no_quota {
                Some(None)
            } else {
                self.quota.map(Some)
            },
            sandbox_backend: self.backend.map(|backend| backend.to_string()),
            agent_preset: self.agent,
            agent_command: self.agent_command,
            docker_image: self.docker_image,
            e2b_template: self.e2b_template,
            run_timeout_minutes: self.timeout_minutes,
            network_mode: self.network.map(|mode| mode.to_string()),
            allowed_hosts: self.allowed_hosts,
            draft_pull_requests: self.draft_prs,
            file_test_issues: self.test_issues,
            run_slots: self.run_slots,
            overflow_to_e2b: self.overflow_to_e2b,
            automatic_updates: self.automatic_updates,
            automatic_attempts_per_day: self.automatic_attempts_per_day,
            pull_request_labels: self.pr_labels,
            pull_request_reviewers: self.pr_reviewers,
            environment_key_files: self.environment_key_files,
            push_fork: self.push_fork,
            monthly_budget: self.monthly_budget,
        };
        // Read here as the application layer reads it, so that a refusal names the flag.
        read_settings(&input).map_err(|refused| {
            CliError::Usage(format!(
                "--{}: {}",
                flag_of(refused.setting),
                refused.reason
            ))
        })?;
        Ok(input)
    }
}

/// The flag that sets `setting`.
fn flag_of(setting: RepoSetting) -> &'static str {
    match setting {
        RepoSetting::FeedbackLabel => "label",
        RepoSetting::Agent => "agent",
        RepoSetting::Backend => "backend",
        RepoSetting::RunTimeout => "timeout-minutes",
        RepoSetting::NetworkMode => "network",
        RepoSetting::AllowedHosts => "allowed-hosts",
        RepoSetting::RunSlots => "run-slots",
        RepoSetting::AutomaticAttemptsPerDay => "automatic-attempts-per-day",
        RepoSetting::PullRequestLabels => "pr-labels",
        RepoSetting::PullRequestReviewers => "pr-reviewers",
        RepoSetting::EnvironmentKeyFiles => "environment-key-files",
        RepoSetting::PushFork => "push-fork",
        RepoSetting::MonthlyBudget => "monthly-budget",
    }
}

#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Connect a repository (owner/name or its GitHub URL).
    Add {
        /// The repository: owner/name, https://github.com/owner/name or git@github.com:owner/name.git.
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        settings: RepoSettingsArguments,
    },
    /// List connected repositories.
    List(JsonFlag),
    /// Show one repository's settings and the quota left this month.
    Show {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Show, replace or reset the prompt template of a QA stage for a repository.
    Prompt {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// The stage whose prompt it is.
        #[arg(value_parser = prompt_stages())]
        stage: Stage,
        /// Replace the template with this file's text (placeholders: {{pr_number}},
        /// {{pr_title}}, {{branch}}, {{base}}, {{review}}, {{plan}}, {{failures}},
        /// {{instructions}}).
        #[arg(long, value_name = "PATH", conflicts_with = "reset")]
        file: Option<PathBuf>,
        /// Go back to the built-in template.
        #[arg(long)]
        reset: bool,
        /// Go ahead on a repository whose runs have no isolation (the `local` backend),
        /// where a prompt is read by an agent that runs on this machine.
        #[arg(long)]
        confirm_no_isolation: bool,
    },
    /// Change a repository's settings.
    Set {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        settings: RepoSettingsArguments,
    },
    /// Make (or find) a fork for the agent's branches and send them there: PRs from a
    /// fork run CI without the repository's secrets. GitHub does not let an account fork
    /// its own repository into itself, so the fork goes to an organization you may make
    /// repositories in, or to a second account of yours (a machine account: an ordinary
    /// GitHub account kept for automation) that made the fork itself and gave you write
    /// access. Waits until GitHub has the fork ready. Repositories connected afterwards
    /// get their fork in the same place.
    Fork {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// The organization or second account the fork goes to [default: where the last
        /// fork went].
        #[arg(long, value_name = "ORG_OR_ACCOUNT")]
        into: Option<String>,
    },
    /// Disconnect a repository: syncs and runs leave it alone; its feedback, runs and
    /// comments stay here. `repo add` connects it again as it was.
    Disconnect {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
    },
}

#[derive(Debug, Args, Default)]
pub struct RepoSettingsArguments {
    /// The branch PRs target and first runs start from [default: main].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// The label that makes an issue a feedback item [default: feedback].
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Runs allowed per calendar month [default: 50].
    #[arg(long, value_name = "N", conflicts_with = "no_quota")]
    pub quota: Option<u32>,
    /// No monthly limit on runs.
    #[arg(long)]
    pub no_quota: bool,
    /// Dollars its runs may spend per calendar month (`none`: no limit, the default).
    /// A run is refused before its sandbox starts once the month is spent.
    #[arg(long, value_name = "DOLLARS")]
    pub monthly_budget: Option<String>,
    /// Instructions the agent gets on every run of this repository.
    #[arg(long, value_name = "TEXT", conflicts_with = "instructions_file")]
    pub instructions: Option<String>,
    /// Read the custom instructions from a file.
    #[arg(long, value_name = "PATH")]
    pub instructions_file: Option<PathBuf>,
    /// Where the agent runs [default: docker].
    #[arg(long, value_name = "BACKEND", value_parser = words_of!(SandboxBackend))]
    pub backend: Option<SandboxBackend>,
    /// The agent preset [default: opencode].
    #[arg(long, value_name = "PRESET", value_parser = agent_presets())]
    pub agent: Option<String>,
    /// The command of the `custom` agent preset, run in the working copy with sh -c
    /// ("" to clear). $HANDOFF_PROMPT_FILE holds the prompt.
    #[arg(long, value_name = "COMMAND")]
    pub agent_command: Option<String>,
    /// The Docker image runs use ("" for the default, handoff-agent:latest).
    #[arg(long, value_name = "IMAGE")]
    pub docker_image: Option<String>,
    /// The E2B template runs use ("" for E2B's base template).
    #[arg(long, value_name = "TEMPLATE")]
    pub e2b_template: Option<String>,
    /// Wall-clock limit of one run, in minutes, from 1 to 1440 [default: 30].
    #[arg(long, value_name = "MINUTES")]
    pub timeout_minutes: Option<String>,
    /// What the sandbox may reach: nothing, the agent provider's API and the allowed
    /// hosts only, or any public address (both through the repository's egress gate,
    /// never this machine or its networks) [default: allowlist].
    #[arg(long, value_name = "MODE", value_parser = words_of!(NetworkMode))]
    pub network: Option<NetworkMode>,
    /// The hosts the sandbox may reach besides the agent provider's API, for example
    /// package registries: `host`, `host:port`, `*.domain` or an address of your own
    /// network (`192.168.1.20:8080`: reached only when named itself), separated by
    /// commas or spaces ("" for none). Replaces the list.
    #[arg(long, value_name = "HOSTS")]
    pub allowed_hosts: Option<String>,
    /// Whether the PRs Handoff opens are drafts, so that neither people nor CI take the
    /// agent's work as ready [default: true].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub draft_prs: Option<bool>,
    /// Whether the test stage files an issue for each failing scenario (false: the
    /// failures stay in the results comment) [default: true].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub test_issues: Option<bool>,
    /// How many of its runs may go at once (at least 1), besides the installation's
    /// slots (`handoff config set queue.slots N`) and the backend's (`none` for no slots
    /// of its own) [default: none of its own].
    #[arg(long, value_name = "N|none")]
    pub run_slots: Option<String>,
    /// Whether its Docker runs may go to E2B when Docker's slots are full (E2B's key
    /// must be set) [default: false].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub overflow_to_e2b: Option<bool>,
    /// Labels to put on the PRs Handoff opens, comma-separated ("" for none).
    #[arg(long, value_name = "LABELS")]
    pub pr_labels: Option<String>,
    /// People (logins) and teams (ORG/TEAM) to request reviews from on the PRs Handoff
    /// opens, comma-separated ("" for none).
    #[arg(long, value_name = "REVIEWERS")]
    pub pr_reviewers: Option<String>,
    /// Files (paths from the repository's root) its environment image is keyed on
    /// besides its recipe's and the usual lockfiles, comma-separated ("" for none): a
    /// change to one on the base branch builds the image again.
    #[arg(long, value_name = "PATHS")]
    pub environment_key_files: Option<String>,
    /// Whether a failing check of one of its feedback PRs, or a review of yours
    /// requesting changes, queues an Update PR by itself at the next sync; never for a
    /// fork's PR, a bot's, or a draft you marked [default: false].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub automatic_updates: Option<bool>,
    /// The most automatic updates one PR gets in 24 hours (a whole number of at least
    /// 1) [default: 2].
    #[arg(long, value_name = "N")]
    pub automatic_attempts_per_day: Option<String>,
    /// Push agent branches to this fork you control (OWNER/NAME) and open their PRs from
    /// it, so that CI treats them as a fork's: no secrets, and workflows wait for
    /// approval where the repository asks for it ("" for the repository itself).
    #[arg(long, value_name = "FORK")]
    pub push_fork: Option<String>,
    /// Confirms choosing the local backend, which runs the agent as you with no
    /// isolation (your files, keyring and network in its reach), and, on a repository
    /// that runs there, changing its agent, the agent's command or its instructions.
    #[arg(long)]
    pub confirm_no_isolation: bool,
}
