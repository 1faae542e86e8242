//! `handoff config get|set|unset`: this installation's settings (not secrets).

use super::command_error::CliError;
use crate::shared_arguments::setting_names;
use clap::Subcommand;
use handoff_api::installation_settings::{
    editable_setting, editable_settings, set_setting, setting, unset_setting,
};
use handoff_api::AppCore;

pub async fn run(core: &AppCore, command: ConfigCommand) -> Result<(), CliError> {
    match command {
        ConfigCommand::Get { key: None } => {
            for (key, value) in editable_settings(core).await? {
                println!(
                    "{:<24} {}",
                    key.as_str(),
                    value.as_deref().unwrap_or("(default)")
                );
            }
            Ok(())
        }
        ConfigCommand::Get { key: Some(name) } => {
            let value = setting(core, editable_setting(&name)?).await?;
            println!("{}", value.as_deref().unwrap_or("(default)"));
            Ok(())
        }
        ConfigCommand::Set { key: name, value } => {
            set_setting(core, editable_setting(&name)?, &value).await?;
            println!("{name} = {}", value.trim());
            Ok(())
        }
        ConfigCommand::Unset { key: name } => {
            unset_setting(core, editable_setting(&name)?).await?;
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
