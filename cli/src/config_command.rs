//! `handoff config get|set|unset`: this installation's settings (not secrets).

use super::command_error::CliError;
use crate::shared_arguments::setting_names;
use crate::shared_arguments::EDITABLE_SETTINGS;
use clap::Subcommand;
use handoff::service_address::check_secret_address;
use handoff::store::{SettingKey, Store};

fn key(text: &str) -> Result<SettingKey, CliError> {
    SettingKey::parse(text.trim())
        .filter(|key| EDITABLE_SETTINGS.contains(key))
        .ok_or_else(|| {
            let names: Vec<&str> = EDITABLE_SETTINGS.iter().map(|key| key.as_str()).collect();
            CliError::Usage(format!(
                "unknown setting {text:?}: one of {}",
                names.join(", ")
            ))
        })
}

pub async fn run(store: &Store, command: ConfigCommand) -> Result<(), CliError> {
    match command {
        ConfigCommand::Get { key: None } => {
            for key in EDITABLE_SETTINGS {
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
            let key = key(&name)?;
            let value = value.trim();
            if matches!(key, SettingKey::GithubApiBase) {
                handoff::github::GithubEndpoints::new(value)?;
            }
            // The agent's key is sent to a provider's address: checked like every
            // address a secret goes to.
            if matches!(
                key,
                SettingKey::UpdateFeed | SettingKey::AnthropicApiBase | SettingKey::OpenaiApiBase
            ) {
                check_secret_address(value)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::E2bApiBase | SettingKey::E2bEnvdUrl) {
                let example = value
                    .replace("{sandbox_id}", "sandbox")
                    .replace("{port}", "49983")
                    .replace("{domain}", "e2b.app");
                check_secret_address(&example)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::LogLevel) {
                value
                    .parse::<handoff::log_file::LogLevel>()
                    .map_err(|error| CliError::Usage(error.to_string()))?;
            }
            if matches!(key, SettingKey::SyncIntervalSeconds) {
                handoff_api::timed_sync::parse_sync_interval(value)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::KeptCopyDays) {
                handoff::pipeline_settings::kept_copy_retention_from_days(value)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::BudgetRunUsd | SettingKey::BudgetDayUsd) {
                handoff::store::spend::parse_dollars(value)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::BudgetRunTokens)
                && !value.eq_ignore_ascii_case("none")
                && value.parse::<u64>().is_err()
            {
                return Err(CliError::Usage(format!(
                    "{name}: {value:?} is not a number of tokens (or `none`)"
                )));
            }
            if matches!(key, SettingKey::QueueSlots) {
                handoff::store::parse_slot_count(value, false)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(
                key,
                SettingKey::QueueSlotsDocker
                    | SettingKey::QueueSlotsE2b
                    | SettingKey::QueueSlotsLocal
            ) {
                handoff::store::parse_slot_count(value, true)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            if matches!(key, SettingKey::ClaudePlan)
                && handoff::domain::claude_plan::ClaudePlan::parse(value).is_none()
            {
                return Err(CliError::Usage(format!(
                    "{name}: {value:?} is not a plan: pro, max-5x or max-20x"
                )));
            }
            if matches!(key, SettingKey::ClaudePlanPastCredit)
                && handoff::domain::claude_plan::PastTheCredit::parse(value).is_none()
            {
                return Err(CliError::Usage(format!(
                    "{name}: {value:?} is neither stop nor go-on"
                )));
            }
            if matches!(key, SettingKey::SpendPrices) {
                handoff::domain::model_prices::PriceTable::parse_lines(value)
                    .map_err(|refusal| CliError::Usage(format!("{name}: {refusal}")))?;
            }
            store.set_setting(key, value).await?;
            println!("{name} = {value}");
            Ok(())
        }
        ConfigCommand::Unset { key: name } => {
            store.remove_setting(key(&name)?).await?;
            println!("{name} is back to its default");
            Ok(())
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Show every setting (or one).
    Get {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: Option<String>,
    },
    /// Change a setting (log.level: error, warn, info, debug or trace).
    Set {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: String,
        /// Its new value.
        value: String,
    },
    /// Go back to a setting's default.
    Unset {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: String,
    },
}
