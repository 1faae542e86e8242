//! `handoff doctor`: Check setup on the command line — each line with what was found
//! and, when it is not ok, the command that fixes it.

use std::path::Path;

use super::arguments::JsonFlag;
use super::outcome::CliError;
use super::output::print_json;
use crate::pipeline::PipelineSettings;
use crate::secrets::SecretStore;
use crate::setup_check::{CheckLine, CheckStatus, Fix, SetupCheck};
use crate::store::Store;

/// The command that carries out `fix`, when there is one.
pub fn fix_command(fix: &Fix) -> Option<String> {
    Some(match fix {
        Fix::SignIn => "handoff auth login".to_owned(),
        Fix::AddKey { provider } => format!("handoff secrets set {provider}"),
        Fix::AddE2bKey | Fix::ReplaceE2bKey => "handoff secrets set e2b".to_owned(),
        Fix::BuildImage { preset, .. } => format!("handoff agent-image build --preset {preset}"),
        Fix::ChooseAnotherAgent { repo } => format!("handoff repo set {repo} --agent claude"),
        Fix::GetWriteAccess { .. }
        | Fix::TurnOnIssues { .. }
        | Fix::StartKeyring
        | Fix::UseHttpsForE2b
        | Fix::StartDocker
        | Fix::LoadImage { .. }
        | Fix::FreeDisk { .. } => return None,
    })
}

/// A line as the command line says it: the sentence, and the command that fixes it.
pub fn line_with_hint(line: &CheckLine) -> String {
    match line.fix.as_ref().and_then(fix_command) {
        Some(command) => format!("{} (`{command}`)", line.sentence()),
        None => line.sentence(),
    }
}

pub async fn run(store: &Store, data_dir: &Path, arguments: JsonFlag) -> Result<(), CliError> {
    let settings = PipelineSettings::configured(store).await?;
    let secrets = SecretStore::os();
    let report = SetupCheck {
        store,
        secrets: &secrets,
        data_dir,
        settings: &settings,
    }
    .run()
    .await?;
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
