//! `handoff secrets set|delete|list`: API keys in the OS keyring, never elsewhere.

use clap::Subcommand;
use std::io::{IsTerminal as _, Read as _};

use super::command_error::CliError;
use handoff::pipeline::PipelineSettings;
use handoff::secrets::{Secret, SecretName, SecretStore};
use handoff::store::Store;

/// `e2b` is the E2B key (for the E2B API this installation uses); any other name is an
/// agent provider's key.
async fn secret_name(store: &Store, name: &str) -> Result<SecretName, CliError> {
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(CliError::Usage(format!(
            "bad secret name {name:?}: use e2b, anthropic, claude-plan, openai or another \
             provider's name"
        )));
    }
    if name == "github" {
        return Err(CliError::Usage(
            "the GitHub token is kept by `handoff auth login`".to_owned(),
        ));
    }
    Ok(match name.as_str() {
        "e2b" => SecretName::E2bApiKey {
            api_host: PipelineSettings::configured(store).await?.e2b.api_host(),
        },
        "claude-plan" => PipelineSettings::configured(store)
            .await?
            .claude_plan_token_name(),
        provider => PipelineSettings::configured(store)
            .await?
            .agent_key_name(provider),
    })
}

pub async fn run(store: &Store, command: SecretsCommand) -> Result<(), CliError> {
    let secrets = SecretStore::os();
    match command {
        SecretsCommand::Set { name } => {
            let which = secret_name(store, &name).await?;
            let text = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("{name} (it is not shown): "))
                    .map_err(|error| CliError::Usage(format!("cannot read the secret: {error}")))?
            } else {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .map_err(|error| CliError::Usage(format!("cannot read the secret: {error}")))?;
                text
            };
            let value = text.trim();
            if value.is_empty() {
                return Err(CliError::Usage("no secret given".to_owned()));
            }
            handoff_api::setup::check_key_shape(&which, value).map_err(CliError::Usage)?;
            secrets.set(&which, &Secret::new(value)).await?;
            match &which {
                SecretName::AgentApiKey { api_host, .. }
                | SecretName::E2bApiKey { api_host }
                | SecretName::ClaudePlanToken { api_host } => {
                    println!("{name} is kept in the OS keyring, for {api_host} only")
                }
                _ => println!("{name} is kept in the OS keyring"),
            }
            Ok(())
        }
        SecretsCommand::Delete { name } => {
            if secrets.delete(&secret_name(store, &name).await?).await? {
                println!("{name} was removed from the OS keyring");
            } else {
                println!("no {name} was stored");
            }
            Ok(())
        }
        SecretsCommand::List => {
            for name in ["e2b", "anthropic", "claude-plan", "openai"] {
                let stored = secrets
                    .get(&secret_name(store, name).await?)
                    .await?
                    .is_some();
                println!("{name:<10} {}", if stored { "stored" } else { "-" });
            }
            Ok(())
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Store a secret from standard input or a hidden prompt: e2b, anthropic, openai,
    /// another provider's name, or claude-plan (the token `claude setup-token` prints,
    /// which the claude agent then uses instead of the Anthropic key).
    Set {
        /// Which secret.
        name: String,
    },
    /// Remove a stored secret.
    Delete { name: String },
    /// Which of the usual secrets are stored (never their values).
    List,
}
