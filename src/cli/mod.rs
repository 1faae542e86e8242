//! The `handoff` command line (D9): the same core as the desktop app, for scripting and
//! for machines without a display.
//!
//! Exit codes: 0 success; 1 the command was understood but failed or was refused
//! (unknown id, MERGED item, quota used up, database trouble); 2 usage error (unknown
//! command or option, or a value that can never be right: a bad repository name, an
//! empty body).

mod agent_image_command;
mod arguments;
mod auth_command;
mod comment_command;
mod config_command;
mod doctor_command;
mod feedback_command;
mod follow_up_command;
mod foreground_run;
mod outbox_command;
mod outcome;
mod output;
mod pr_command;
mod qa_command;
mod repo_command;
mod run_command;
mod runs_command;
mod secrets_command;
mod sync_command;
mod terminal_text;
mod text_input;

use std::process::ExitCode;

use clap::Parser as _;

pub use arguments::{Cli, Command};
pub use outcome::{CliError, EXIT_FAILURE, EXIT_USAGE};

use crate::data_dir::data_dir;
use crate::store::Store;

/// Runs the command line with the process's arguments and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout with exit 0, usage errors with 2.
            let _ = error.print();
            return ExitCode::from(error.exit_code().clamp(0, 255) as u8);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs one parsed command.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let data_dir = match cli.data_dir {
        Some(dir) => dir,
        None => data_dir().map_err(|error| CliError::Failure(error.to_string()))?,
    };
    let store = Store::open_in(&data_dir).await?;
    let result = match cli.command {
        Command::Repo(command) => repo_command::run(&store, command).await,
        Command::Feedback(command) => feedback_command::run(&store, command).await,
        Command::Followup(command) => follow_up_command::run(&store, command).await,
        Command::Run(arguments) => run_command::run(&store, &data_dir, arguments).await,
        Command::Iterate(arguments) => run_command::iterate(&store, &data_dir, arguments).await,
        Command::Qa(arguments) => qa_command::run(&store, &data_dir, arguments).await,
        Command::Runs(command) => runs_command::run(&store, &data_dir, command).await,
        Command::Secrets(command) => secrets_command::run(&store, command).await,
        Command::Config(command) => config_command::run(&store, command).await,
        Command::Auth(command) => auth_command::run(&store, command).await,
        Command::Comment(command) => comment_command::run(&store, command).await,
        Command::Sync(arguments) => sync_command::run(&store, arguments).await,
        Command::Outbox(arguments) => outbox_command::run(&store, arguments).await,
        Command::Pr(command) => pr_command::run(&store, command).await,
        Command::Doctor(arguments) => doctor_command::run(&store, &data_dir, arguments).await,
        Command::AgentImage(command) => agent_image_command::run(&store, command).await,
        Command::Info(arguments) => output::print_info(&store, &data_dir, arguments.json),
    };
    store.close().await;
    result
}
