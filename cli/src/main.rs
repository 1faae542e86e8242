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
mod env_command;
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

use handoff_api::log::{start_log, stored_log_level};
use handoff_api::{data_folder, AppCore};

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
        None => data_folder()?,
    };
    let log = match start_log(&data_dir, "cli", false) {
        Ok(log) => Some(log),
        Err(error) => {
            eprintln!(
                "warning: {}; this command leaves no line in the log",
                error.message
            );
            None
        }
    };
    let command_name = cli.command.name();
    // The log is read without the database: it is most wanted when that will not open.
    let command = match cli.command {
        Command::Log(arguments) => return log_command::run(&data_dir, arguments).await,
        command => command,
    };
    let core = match AppCore::open(&data_dir).await {
        Ok(core) => core,
        Err(error) => {
            tracing::error!(command = command_name, code = %error.code, message = %error.message, "the database could not be opened");
            return Err(error.into());
        }
    };
    if let Some(log) = &log {
        // An unreadable setting is the default level.
        match stored_log_level(&core).await {
            Ok(level) => log.apply_setting(level),
            Err(error) => {
                tracing::warn!(message = %error.message, "the log level setting could not be read")
            }
        }
    }
    tracing::debug!(command = command_name, "command started");
    let result = match command {
        Command::Repo(command) => repo_command::run(&core, command).await,
        Command::Feedback(command) => feedback_command::run(&core, command).await,
        Command::Followup(command) => follow_up_command::run(&core, command).await,
        Command::Run(arguments) => run_command::run(&core, arguments).await,
        Command::Iterate(arguments) => run_command::iterate(&core, arguments).await,
        Command::Qa(arguments) => qa_command::run(&core, arguments).await,
        Command::Runs(command) => runs_command::run(&core, command).await,
        Command::Queue(command) => queue_command::run(&core, command).await,
        Command::Secrets(command) => secrets_command::run(&core, command).await,
        Command::Config(command) => config_command::run(&core, command).await,
        Command::Auth(command) => auth_command::run(&core, command).await,
        Command::Comment(command) => comment_command::run(&core, command).await,
        Command::Sync(arguments) => sync_command::run(&core, arguments).await,
        Command::Outbox(arguments) => outbox_command::run(&core, arguments).await,
        Command::Pr(command) => pr_command::run(&core, command).await,
        Command::Doctor(arguments) => doctor_command::run(&core, arguments).await,
        Command::AgentImage(command) => agent_image_command::run(&core, command).await,
        Command::Env(arguments) => env_command::run(&core, arguments).await,
        Command::Spend(arguments) => spend_command::run(&core, arguments).await,
        Command::Lessons(arguments) => lessons_command::run(&core, arguments).await,
        Command::Info(arguments) => output::print_info(&core, arguments.json),
        Command::Log(arguments) => log_command::run(&data_dir, arguments).await,
        Command::Serve(arguments) => serve_command::run(&core, arguments).await,
        Command::Status(arguments) => status_command::run(&core, arguments).await,
    };
    if let Err(error) = &result {
        tracing::warn!(command = command_name, %error, "the command failed");
    }
    core.close().await;
    result
}
