//! `handoff log [--follow] [--lines N] [--path]`: the end of the log file that the app
//! and the command line write in the data folder.

use clap::Args;
use std::path::Path;
use std::time::Duration;

use handoff_api::log::{last_log_lines, log_folder, NewLogLines};

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
    let mut follower = arguments.follow.then(|| NewLogLines::from_now(data_dir));
    let lines = last_log_lines(data_dir, arguments.lines)?;
    if lines.is_empty() && !arguments.follow {
        eprintln!("the log in {} is empty", log_folder(data_dir).display());
    }
    for line in lines {
        println!("{line}");
    }
    let Some(follower) = follower.as_mut() else {
        return Ok(());
    };
    eprintln!(
        "following the log in {} (Ctrl-C stops)",
        log_folder(data_dir).display()
    );
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(()),
            _ = tokio::time::sleep(FOLLOW_INTERVAL) => {
                for line in follower.take()? {
                    println!("{line}");
                }
            }
        }
    }
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
