//! `handoff secrets set|delete|list`: API keys in the OS keyring, never elsewhere, kept
//! through the same use cases as the window's Settings → Keys.

use clap::Subcommand;
use std::io::{IsTerminal as _, Read as _};

use super::command_error::CliError;
use handoff_api::setup::{key_states, remove_key, set_key, KeyState};
use handoff_api::AppCore;

/// The secret's name as the application layer knows it; the GitHub token is kept by
/// signing in.
fn secret_name(name: &str) -> Result<String, CliError> {
    let name = name.trim().to_ascii_lowercase();
    if name == "github" {
        return Err(CliError::Usage(
            "the GitHub token is not kept as a secret\nhint: sign in with `handoff auth login`"
                .to_owned(),
        ));
    }
    Ok(name)
}

fn state_of<'a>(states: &'a [KeyState], name: &str) -> Option<&'a KeyState> {
    states.iter().find(|state| state.name == name)
}

fn read_secret(name: &str) -> Result<String, CliError> {
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password(format!("{name} (it is not shown): "))
            .map_err(|error| CliError::Usage(format!("cannot read the secret: {error}")));
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|error| CliError::Usage(format!("cannot read the secret: {error}")))?;
    Ok(text)
}

pub async fn run(core: &AppCore, command: SecretsCommand) -> Result<(), CliError> {
    match command {
        SecretsCommand::Set { name } => {
            let name = secret_name(&name)?;
            // An unknown name is refused before the secret is asked for.
            state_of(&key_states(core).await?, &name).ok_or_else(|| unknown_secret(&name))?;
            let states = set_key(core, &name, &read_secret(&name)?).await?;
            match state_of(&states, &name).and_then(|state| state.for_host.as_deref()) {
                Some(host) => println!("{name} is kept in the OS keyring, for {host} only"),
                None => println!("{name} is kept in the OS keyring"),
            }
            Ok(())
        }
        SecretsCommand::Delete { name } => {
            let name = secret_name(&name)?;
            let was_set = state_of(&key_states(core).await?, &name)
                .ok_or_else(|| unknown_secret(&name))?
                .set;
            remove_key(core, &name).await?;
            if was_set {
                println!("{name} was removed from the OS keyring");
            } else {
                println!("no {name} was stored");
            }
            Ok(())
        }
        SecretsCommand::List => {
            for state in key_states(core).await? {
                println!(
                    "{:<10} {}",
                    state.name,
                    if state.set { "stored" } else { "-" }
                );
            }
            Ok(())
        }
    }
}

fn unknown_secret(name: &str) -> CliError {
    CliError::Usage(format!(
        "no secret is called {name:?}: e2b, anthropic, claude-plan or openai (the agents' \
         providers are Anthropic and OpenAI)"
    ))
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Store a secret from standard input or a hidden prompt: e2b, anthropic, openai, or
    /// claude-plan (the token `claude setup-token` prints, which the claude agent then
    /// uses instead of the Anthropic key).
    Set {
        /// Which secret.
        name: String,
    },
    /// Remove a stored secret.
    Delete { name: String },
    /// Which secrets are stored (never their values).
    List,
}
