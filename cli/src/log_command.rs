//! `handoff log [--follow] [--lines N] [--path]`: the end of the log file that the app
//! and the command line write in the data folder.

use clap::Args;
use std::path::Path;
use std::time::Duration;

use handoff::log_file::{last_lines, log_folder, LogFollower};

use super::command_error::CliError;

/// How often `--follow` looks for new lines.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(250);

pub async fn run(data_dir: &Path, arguments: LogArguments) -> Result<(), CliError> {
    if arguments.path {
        println!("{}", log_folder(data_dir).display());
        return Ok(());
    }
    // Where following starts is taken before the last lines are read, so a line
    // written in between is printed once by one or the other, not lost.
    let mut follower = arguments.follow.then(|| LogFollower::from_end(data_dir));
    let lines = last_lines(data_dir, arguments.lines).map_err(failure)?;
    if lines.is_empty() && !arguments.follow {
        eprintln!("the log in {} is empty", log_folder(data_dir).display());
    }
    for line in lines {
        println!("{line}");
    }
    let Some(follower) = follower.as_mut() else {
        return Ok(());
    };
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(()),
            _ = tokio::time::sleep(FOLLOW_INTERVAL) => {
                for line in follower.new_lines().map_err(failure)? {
                    println!("{line}");
                }
            }
        }
    }
}

fn failure(error: handoff::log_file::LogFileError) -> CliError {
    CliError::Failure(error.to_string())
}

#[derive(Debug, Args)]
pub struct LogArguments {
    /// How many of the last lines to print.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 100)]
    pub lines: usize,
    /// Keep printing lines as they are written, until Ctrl-C.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Print the log folder's path and nothing else.
    #[arg(long, conflicts_with_all = ["follow", "lines"])]
    pub path: bool,
}
