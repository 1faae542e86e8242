//! `handoff repo add|list|show|set`.

use chrono::Utc;
use serde::Serialize;

use super::arguments::{RepoCommand, RepoSettingsArguments};
use super::command_error::CliError;
use super::output::{dash_if_none, print_json, Table};
use handoff::domain::network_policy::parse_allowed_hosts;
use handoff::domain::{NewRepo, Repo, SandboxBackend};
use handoff::store::{QuotaStatus, RepoSettingsChange, Store};

#[derive(Debug, Serialize)]
struct RepoWithQuota {
    #[serde(flatten)]
    repo: Repo,
    quota_this_month: QuotaStatus,
}

pub async fn run(store: &Store, command: RepoCommand) -> Result<(), CliError> {
    match command {
        RepoCommand::Add { repo, settings } => {
            let change = settings_change(settings, None)?;
            let added = store.add_repo(&NewRepo::with_defaults(repo)).await?;
            let repo = store.change_repo_settings(added.id, &change).await?;
            println!(
                "connected {} (base {}, label {}, {} runs a month, {} backend)",
                repo.name,
                repo.default_branch,
                repo.feedback_label,
                dash_if_none(repo.monthly_run_quota),
                repo.sandbox_backend
            );
            Ok(())
        }
        RepoCommand::List(output) => {
            let repos = store.repos().await?;
            if output.json {
                return print_json(&repos);
            }
            if repos.is_empty() {
                println!("no repositories yet: connect one with `handoff repo add owner/name`");
                return Ok(());
            }
            let mut table =
                Table::new(&["REPOSITORY", "BASE", "LABEL", "QUOTA", "BACKEND", "AGENT"]);
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
        RepoCommand::Disconnect { repo } => {
            let repo = store.repo_by_name(&repo).await?;
            store.disconnect_repo(repo.id).await?;
            println!(
                "disconnected {}: its history stays; `handoff repo add {}` connects it again",
                repo.name, repo.name
            );
            Ok(())
        }
        RepoCommand::Show { repo, output } => {
            let repo = store.repo_by_name(&repo).await?;
            let quota = store.quota_status(repo.id, Utc::now()).await?;
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
            if let Some(fork) = &repo.push_fork {
                println!("  branches go to the fork {fork}");
            }
            if !repo.allowed_hosts.is_empty() {
                let hosts: Vec<String> =
                    repo.allowed_hosts.iter().map(ToString::to_string).collect();
                println!("  allowed hosts: {}", hosts.join(", "));
            }
            match (quota.quota, quota.left) {
                (Some(limit), Some(left)) => {
                    println!("  quota:         {left} of {limit} runs left this month")
                }
                _ => println!("  quota:         no limit ({} runs this month)", quota.used),
            }
            if repo.custom_instructions.is_empty() {
                println!("  instructions:  (none)");
            } else {
                println!("  instructions:");
                for line in repo.custom_instructions.lines() {
                    println!("    {line}");
                }
            }
            Ok(())
        }
        RepoCommand::Prompt {
            repo,
            stage,
            file,
            reset,
        } => {
            let repo = store.repo_by_name(&repo).await?;
            if stage == handoff::domain::Stage::FullAuto || stage == handoff::domain::Stage::Code {
                return Err(CliError::Usage(
                    "prompts are per stage: review, plan, test or fix".to_owned(),
                ));
            }
            if reset {
                store.set_stage_prompt(repo.id, stage, None).await?;
                println!(
                    "the {stage} prompt of {} is the built-in one again",
                    repo.name
                );
                return Ok(());
            }
            if let Some(path) = file {
                let template = super::text_input::read_text(None, Some(path))?;
                if template.trim().is_empty() {
                    return Err(CliError::Usage("the template is empty".to_owned()));
                }
                store
                    .set_stage_prompt(repo.id, stage, Some(&template))
                    .await?;
                println!("the {stage} prompt of {} is replaced", repo.name);
                return Ok(());
            }
            let own = store.stage_prompt(repo.id, stage).await?;
            let shown = own
                .clone()
                .or_else(|| {
                    handoff::domain::stage_prompts::default_stage_template(stage).map(str::to_owned)
                })
                .unwrap_or_default();
            if own.is_none() {
                eprintln!("(the built-in {stage} prompt)");
            }
            print!("{shown}");
            Ok(())
        }
        RepoCommand::Set { repo, settings } => {
            let repo = store.repo_by_name(&repo).await?;
            let change = settings_change(settings, Some(repo.sandbox_backend))?;
            if change == RepoSettingsChange::default() {
                return Err(CliError::Usage(
                    "nothing to change: name a setting, for example --quota 30".to_owned(),
                ));
            }
            let repo = store.change_repo_settings(repo.id, &change).await?;
            println!("updated {}", repo.name);
            Ok(())
        }
    }
}

/// The change the arguments ask for. Choosing the local backend (from `current`, the
/// repository's backend now, or none for a new one) needs `--confirm-no-isolation`.
fn settings_change(
    arguments: RepoSettingsArguments,
    current: Option<SandboxBackend>,
) -> Result<RepoSettingsChange, CliError> {
    if arguments.backend == Some(SandboxBackend::Local)
        && current != Some(SandboxBackend::Local)
        && !arguments.confirm_no_isolation
    {
        return Err(CliError::Failure(
            "the local backend runs the agent as you, with no isolation: your files, keyring \
             and network are in its reach\nhint: add --confirm-no-isolation to choose it for \
             this repository anyway, or use --backend docker"
                .to_owned(),
        ));
    }
    let allowed_hosts = match &arguments.allowed_hosts {
        Some(text) => {
            Some(parse_allowed_hosts(text).map_err(|error| CliError::Usage(error.to_string()))?)
        }
        None => None,
    };
    let instructions = match (arguments.instructions, arguments.instructions_file) {
        (Some(text), _) => Some(text),
        (None, Some(path)) => Some(std::fs::read_to_string(&path).map_err(|error| {
            CliError::Usage(format!("cannot read {}: {error}", path.display()))
        })?),
        (None, None) => None,
    };
    if let Some(label) = &arguments.label {
        if label.trim().is_empty() {
            return Err(CliError::Usage("the feedback label is empty".to_owned()));
        }
    }
    Ok(RepoSettingsChange {
        default_branch: arguments.base,
        feedback_label: arguments.label.map(|label| label.trim().to_owned()),
        custom_instructions: instructions,
        monthly_run_quota: if arguments.no_quota {
            Some(None)
        } else {
            arguments.quota.map(Some)
        },
        sandbox_backend: arguments.backend,
        agent_preset: arguments.agent,
        agent_command: arguments
            .agent_command
            .map(|command| Some(command).filter(|c| !c.trim().is_empty())),
        docker_image: arguments
            .docker_image
            .map(|image| Some(image).filter(|i| !i.trim().is_empty())),
        run_timeout_seconds: arguments
            .timeout_minutes
            .map(|minutes| minutes.max(1).saturating_mul(60)),
        e2b_template: arguments
            .e2b_template
            .map(|template| Some(template).filter(|t| !t.trim().is_empty())),
        network_mode: arguments.network,
        allowed_hosts,
        draft_pull_requests: arguments.draft_prs,
        push_fork: match arguments.push_fork.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(text) => Some(Some(text.parse().map_err(
                |error: handoff::domain::RepoNameError| CliError::Usage(error.to_string()),
            )?)),
        },
    })
}
