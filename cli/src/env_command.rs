//! `handoff env show|build|logs|set|unset`: what a repository's base branch says its
//! agent's environment is made of (a dev container, `.handoff/setup.sh`, or the agent
//! image alone), the files its image is keyed on and where its image stands; building
//! it; its last build's log; and the test-only settings its tests get in the sandbox.

use clap::{Args, Subcommand};

use super::command_error::CliError;
use super::output::print_json;
use super::terminal_text::printable;
use crate::shared_arguments::parse_repo_name;
use handoff_api::core_types::RepoName;
use handoff_api::environments::{
    build_environment, environment_of, last_build_log, EnvironmentRecord,
};
use handoff_api::test_settings::{remove_test_setting, set_test_setting};
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
    /// Build the environment's image on this machine's Docker engine: the dev
    /// container's image or Dockerfile, Handoff's agent layer, then the setup commands
    /// in a copy of the base branch. Nothing is built when an image with the same key
    /// is ready; older images of the repository are removed once a new one is built.
    /// Runs build it themselves when it is missing; this builds it ahead.
    Build {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// Build it even when an image with its key is ready.
        #[arg(long)]
        force: bool,
    },
    /// Print the whole log of the repository's last environment build.
    Logs {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
    },
    /// Give the repository's tests a test-only setting: a variable set in the agent's
    /// sandbox (say DATABASE_URL=postgres://postgres:test@db/app for a test service).
    /// It is no secret: the agent can read it, and a run on someone else's work does
    /// not get it. A name that carries a credential (GITHUB_TOKEN, ANTHROPIC_API_KEY, …)
    /// or that Handoff sets itself, and a value that holds a secret Handoff keeps, are
    /// refused.
    Set {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// NAME=value
        #[arg(value_parser = parse_setting)]
        setting: (String, String),
    },
    /// Remove one of the repository's test-only settings.
    Unset {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        name: String,
    },
}

fn parse_setting(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("{text:?} is not NAME=value"))
}

pub async fn run(core: &AppCore, arguments: EnvArguments) -> Result<(), CliError> {
    match arguments.action {
        EnvAction::Show { repo, json } => {
            let environment = environment_of(core, &repo.full_name()).await?;
            if json {
                print_json(&environment)?;
            } else {
                print!("{}", described(&environment));
            }
            Ok(())
        }
        EnvAction::Build { repo, force } => {
            let mut progress = |line: &str| eprintln!("{}", printable(line));
            match build_environment(core, &repo.full_name(), force, &mut progress).await? {
                None => println!(
                    "{} names no environment: its runs use Handoff's agent image",
                    repo.full_name()
                ),
                Some(built) => println!(
                    "{} {} ({} MB)",
                    printable(&built.image),
                    if built.built_now {
                        "built"
                    } else {
                        "is ready: nothing to build"
                    },
                    built.image_bytes / 1_000_000
                ),
            }
            Ok(())
        }
        EnvAction::Set {
            repo,
            setting: (name, value),
        } => {
            set_test_setting(core, &repo.full_name(), &name, &value).await?;
            println!(
                "{}: {} is set for its tests (test-only)",
                repo.full_name(),
                printable(&name)
            );
            Ok(())
        }
        EnvAction::Unset { repo, name } => {
            remove_test_setting(core, &repo.full_name(), &name).await?;
            println!("{}: {} is removed", repo.full_name(), printable(&name));
            Ok(())
        }
        EnvAction::Logs { repo } => {
            print!(
                "{}",
                printable(&last_build_log(core, &repo.full_name()).await?)
            );
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
        ("service", &environment.services),
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
    if let (Some(image), Some(state)) = (&environment.image, &environment.state) {
        lines.push(format!(
            "image:     {} ({})",
            printable(image),
            state.replace('_', " ")
        ));
    }
    if let Some(build) = &environment.last_build {
        let size = build
            .image_bytes
            .map(|bytes| format!(", {} MB", bytes / 1_000_000))
            .unwrap_or_default();
        lines.push(format!(
            "last build: {} {} at {}{size}",
            build.id, build.state, build.started_at
        ));
        if let (Some(step), Some(failure)) = (&build.failed_step, &build.failure) {
            lines.push(format!(
                "failed at: {}: {}",
                printable(step),
                printable(failure)
            ));
        }
        lines.push(format!("build log: {}", printable(&build.log_file)));
    }
    for setting in &environment.test_settings {
        lines.push(format!(
            "test-only: {}={}",
            printable(&setting.name),
            printable(&setting.value)
        ));
    }
    lines.join("\n") + "\n"
}
