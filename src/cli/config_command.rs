//! `handoff config get|set|unset`: this installation's settings (not secrets).

use super::arguments::ConfigCommand;
use super::outcome::CliError;
use crate::store::{SettingKey, Store};

/// The settings a person may change here (the others are kept by other commands).
const EDITABLE: &[SettingKey] = &[
    SettingKey::GithubApiBase,
    SettingKey::GithubWebBase,
    SettingKey::GithubDeviceClientId,
    SettingKey::AgentGitName,
    SettingKey::AgentGitEmail,
    SettingKey::DockerDefaultImage,
    SettingKey::E2bApiBase,
    SettingKey::E2bEnvdUrl,
];

fn key(text: &str) -> Result<SettingKey, CliError> {
    SettingKey::parse(text.trim())
        .filter(|key| EDITABLE.contains(key))
        .ok_or_else(|| {
            let names: Vec<&str> = EDITABLE.iter().map(|key| key.as_str()).collect();
            CliError::Usage(format!(
                "unknown setting {text:?}: one of {}",
                names.join(", ")
            ))
        })
}

pub async fn run(store: &Store, command: ConfigCommand) -> Result<(), CliError> {
    match command {
        ConfigCommand::Get { key: None } => {
            for key in EDITABLE {
                let value = store.setting(*key).await?;
                println!(
                    "{:<24} {}",
                    key.as_str(),
                    value.as_deref().unwrap_or("(default)")
                );
            }
            Ok(())
        }
        ConfigCommand::Get { key: Some(name) } => {
            let value = store.setting(key(&name)?).await?;
            println!("{}", value.as_deref().unwrap_or("(default)"));
            Ok(())
        }
        ConfigCommand::Set { key: name, value } => {
            if value.trim().is_empty() {
                return Err(CliError::Usage(format!(
                    "{name} cannot be empty: use `handoff config unset {name}`"
                )));
            }
            store.set_setting(key(&name)?, value.trim()).await?;
            println!("{name} = {}", value.trim());
            Ok(())
        }
        ConfigCommand::Unset { key: name } => {
            store.remove_setting(key(&name)?).await?;
            println!("{name} is back to its default");
            Ok(())
        }
    }
}
