//! The `handoff` command line: the same core as the desktop app, for scripting and
//! for machines without a display.
//!
//! Exit codes: 0 success; 1 the command was understood but failed or was refused
//! (unknown id, MERGED item, quota used up, database trouble); 2 usage error (unknown
//! command or option, or a value that can never be right: a bad repository name, an
//! empty body).

mod agent_image_command;
mod arguments;
mod auth_command;
mod command_error;
mod comment_command;
mod config_command;
mod doctor_command;
mod feedback_command;
mod follow_up_command;
mod foreground_run;
mod lessons_command;
mod log_command;
mod outbox_command;
mod output;
mod pr_command;
mod qa_command;
mod queue_command;
mod repo_command;
mod run_command;
mod runs_command;
mod secrets_command;
mod serve_command;
mod shared_arguments;
mod spend_command;
mod status_command;
mod sync_command;
mod systemd_unit;
mod terminal_text;
mod text_input;

use std::process::ExitCode;

use clap::Parser as _;

pub use arguments::{Cli, Command};
pub use command_error::{CliError, EXIT_FAILURE, EXIT_USAGE};

use handoff::data_dir::data_dir;
use handoff::log_file::{self, LogLevel};
use handoff::store::SettingKey;
use handoff::store::Store;

/// Runs the command line with the process's arguments and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout with exit 0, usage errors with 2.
            // Printing fails only when the terminal is gone; the exit code still tells.
            if error.print().is_err() {
                tracing::debug!("the usage message could not be printed");
            }
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
    let log = match log_file::install(&data_dir, "cli", None, false) {
        Ok(log) => Some(log),
        Err(error) => {
            eprintln!("warning: {error}; this command leaves no line in the log");
            None
        }
    };
    let command_name = cli.command.name();
    // The log is read without the database: it is most wanted when that will not open.
    let command = match cli.command {
        Command::Log(arguments) => return log_command::run(&data_dir, arguments).await,
        command => command,
    };
    let store = match Store::open_in(&data_dir).await {
        Ok(store) => store,
        Err(error) => {
            tracing::error!(command = command_name, %error, "the database could not be opened");
            return Err(error.into());
        }
    };
    if let Some(log) = &log {
        log.apply_setting(stored_log_level(&store).await);
    }
    tracing::debug!(command = command_name, "command started");
    let result = match command {
        Command::Repo(command) => repo_command::run(&store, &data_dir, command).await,
        Command::Feedback(command) => feedback_command::run(&store, command).await,
        Command::Followup(command) => follow_up_command::run(&store, command).await,
        Command::Run(arguments) => run_command::run(&store, &data_dir, arguments).await,
        Command::Iterate(arguments) => run_command::iterate(&store, &data_dir, arguments).await,
        Command::Qa(arguments) => qa_command::run(&store, &data_dir, arguments).await,
        Command::Runs(command) => runs_command::run(&store, &data_dir, command).await,
        Command::Queue(command) => queue_command::run(&store, &data_dir, command).await,
        Command::Secrets(command) => secrets_command::run(&store, &data_dir, command).await,
        Command::Config(command) => config_command::run(&store, command).await,
        Command::Auth(command) => auth_command::run(&store, command).await,
        Command::Comment(command) => comment_command::run(&store, command).await,
        Command::Sync(arguments) => sync_command::run(&store, &data_dir, arguments).await,
        Command::Outbox(arguments) => outbox_command::run(&store, arguments).await,
        Command::Pr(command) => pr_command::run(&store, command).await,
        Command::Doctor(arguments) => doctor_command::run(&store, &data_dir, arguments).await,
        Command::AgentImage(command) => agent_image_command::run(&store, command).await,
        Command::Spend(arguments) => spend_command::run(&store, arguments).await,
        Command::Lessons(arguments) => lessons_command::run(&store, &data_dir, arguments).await,
        Command::Info(arguments) => output::print_info(&store, &data_dir, arguments.json),
        Command::Log(arguments) => log_command::run(&data_dir, arguments).await,
        Command::Serve(arguments) => serve_command::run(&store, &data_dir, arguments).await,
        Command::Status(arguments) => status_command::run(&store, &data_dir, arguments).await,
    };
    if let Err(error) = &result {
        tracing::warn!(command = command_name, %error, "the command failed");
    }
    store.close().await;
    result
}

/// The log level setting, when it names one; an unreadable setting is the default.
async fn stored_log_level(store: &Store) -> Option<LogLevel> {
    match store.setting(SettingKey::LogLevel).await {
        Ok(value) => value.as_deref().and_then(LogLevel::parse),
        Err(error) => {
            tracing::warn!(%error, "the log level setting could not be read");
            None
        }
    }
}
