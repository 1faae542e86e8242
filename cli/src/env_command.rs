//! `handoff env show`: what a repository's base branch says its agent's environment is
//! made of (a dev container, `.handoff/setup.sh`, or the agent image alone), and the
//! files its image is keyed on.

use clap::{Args, Subcommand};

use super::command_error::CliError;
use super::output::print_json;
use super::terminal_text::printable;
use crate::shared_arguments::parse_repo_name;
use handoff_api::core_types::RepoName;
use handoff_api::environments::{environment_of, EnvironmentRecord};
use handoff_api::AppCore;

/// The agent's environment: what a repository's base branch says it is made of
/// (`.devcontainer/devcontainer.json`, `.devcontainer.json`, `.handoff/setup.sh`, or
/// none: Handoff's agent image alone).
#[derive(Debug, Args)]
pub struct EnvArguments {
    #[command(subcommand)]
    pub action: EnvAction,
}

#[derive(Debug, Subcommand)]
pub enum EnvAction {
    /// Show the environment the base branch names: where it was found, what its image
    /// starts from, its setup commands, what Handoff leaves out of it, and the files its
    /// image is keyed on. A recipe that cannot be built is refused, saying what and where.
    Show {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(core: &AppCore, arguments: EnvArguments) -> Result<(), CliError> {
    match arguments.action {
        EnvAction::Show { repo, json } => {
            let environment = environment_of(core, &repo).await?;
            if json {
                print_json(&environment)?;
            } else {
                print!("{}", described(&environment));
            }
            Ok(())
        }
    }
}

/// The environment as lines of text (the repository's own words made printable).
fn described(environment: &EnvironmentRecord) -> String {
    let mut lines = vec![format!(
        "{} at {} ({})",
        environment.repo,
        environment.base_branch,
        &environment.commit[..environment.commit.len().min(12)]
    )];
    lines.push(match &environment.file {
        Some(file) => format!("found:     {}", printable(file)),
        None => "found:     nothing (no dev container, no .handoff/setup.sh)".to_owned(),
    });
    lines.push(format!("starts as: {}", printable(&environment.base)));
    let lists = [
        ("setup", &environment.setup_commands),
        ("variables", &environment.environment_variables),
        ("features", &environment.features),
        ("note", &environment.notes),
        ("keyed on", &environment.keyed_on),
    ];
    for (label, items) in lists {
        for item in items {
            lines.push(format!("{:<10} {}", format!("{label}:"), printable(item)));
        }
    }
    if let Some(key) = &environment.key {
        lines.push(format!("key:       {}", &key[..key.len().min(16)]));
    }
    lines.join("\n") + "\n"
}
