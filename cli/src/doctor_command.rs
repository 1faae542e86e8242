//! `handoff doctor`: Check setup on the command line — each line with what was found
//! and, when it is not ok, the command that fixes it.

use super::command_error::{fix_command, CliError};
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff_api::core_types::{CheckLine, SetupCheckStatus as CheckStatus};
use handoff_api::setup::setup_report;
use handoff_api::AppCore;

/// A line as the command line says it: the sentence, and the command that fixes it.
pub fn line_with_hint(line: &CheckLine) -> String {
    match line.fix.as_ref().and_then(fix_command) {
        Some(command) => format!("{} (`{command}`)", line.sentence()),
        None => line.sentence(),
    }
}

pub async fn run(core: &AppCore, arguments: JsonFlag) -> Result<(), CliError> {
    let report = setup_report(core).await?;
    if arguments.json {
        print_json(&report)?;
    } else {
        for line in &report.lines {
            let status = match line.status {
                CheckStatus::Ok => "ok  ",
                CheckStatus::Warning => "warn",
                CheckStatus::Failure => "FAIL",
            };
            println!("{status}  {}", line_with_hint(line));
        }
    }
    match report.status() {
        CheckStatus::Failure => Err(CliError::Failure(
            "a check failed: runs that need it are refused until it is fixed".to_owned(),
        )),
        CheckStatus::Ok | CheckStatus::Warning => Ok(()),
    }
}
