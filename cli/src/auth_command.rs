//! `handoff auth login|status|logout`: the GitHub token, in the OS keyring only.

use clap::Subcommand;
use std::io::{IsTerminal as _, Read as _};

use super::command_error::CliError;
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff_api::setup::{
    finish_device_sign_in, forget_github_token, github_sign_in_state, sign_in_with_pasted_token,
    start_device_sign_in,
};
use handoff_api::AppCore;

pub async fn run(core: &AppCore, command: AuthCommand) -> Result<(), CliError> {
    match command {
        AuthCommand::Login {
            with_token,
            device,
            client_id,
            api_base,
        } => {
            let signed_in = if device {
                let sign_in =
                    start_device_sign_in(core, api_base.as_deref(), client_id.as_deref()).await?;
                eprintln!(
                    "Open {} and enter the code {} (it expires in {} minutes).",
                    sign_in.verification_uri,
                    sign_in.user_code,
                    sign_in.expires_in_seconds.div_ceil(60)
                );
                finish_device_sign_in(core, sign_in.flow_id).await?
            } else {
                let token = read_token(with_token)?;
                sign_in_with_pasted_token(core, &token, api_base.as_deref()).await?
            };
            println!(
                "signed in to {} as {}; the token is kept in the OS keyring",
                signed_in.api_base,
                signed_in.login.as_deref().unwrap_or("?")
            );
            if let Some(warning) = &signed_in.token_warning {
                eprintln!("note: {warning}");
                if signed_in.token_may_change_workflows {
                    eprintln!("hint: make a token without the `workflow` scope and sign in with it: `handoff auth login --with-token`");
                }
            }
            Ok(())
        }
        AuthCommand::Status { offline, output } => {
            let status = github_sign_in_state(core, !offline).await?;
            if output.json {
                print_json(&status)?;
            } else {
                println!("GitHub API: {}", status.api_base);
                match (&status.login, status.token_stored, status.token_accepted) {
                    (_, false, _) => println!("not signed in: run `handoff auth login`"),
                    (login, true, Some(false)) => println!(
                        "signed in as {}, but GitHub refuses the token now: run `handoff auth login`",
                        login.as_deref().unwrap_or("?")
                    ),
                    (login, true, Some(true)) => println!(
                        "signed in as {} (token in the OS keyring, accepted by GitHub)",
                        login.as_deref().unwrap_or("?")
                    ),
                    (login, true, None) => println!(
                        "signed in as {} (token in the OS keyring; not checked)",
                        login.as_deref().unwrap_or("?")
                    ),
                }
            }
            if !status.token_stored || status.token_accepted == Some(false) {
                return Err(CliError::Failure("not signed in to GitHub".to_owned()));
            }
            Ok(())
        }
        AuthCommand::Logout => {
            if forget_github_token(core).await? {
                println!("signed out: the token was removed from the OS keyring");
            } else {
                println!("no token was stored");
            }
            Ok(())
        }
    }
}

/// The token from stdin (scripts, `--with-token`) or typed at a hidden prompt.
fn read_token(from_stdin: bool) -> Result<String, CliError> {
    let text = if from_stdin || !std::io::stdin().is_terminal() {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| {
                CliError::Usage(format!(
                    "cannot read the token from standard input: {error}"
                ))
            })?;
        text
    } else {
        eprintln!("Create a token at https://github.com/settings/tokens (scope: repo).");
        rpassword::prompt_password("Paste it here (it is not shown): ")
            .map_err(|error| CliError::Usage(format!("cannot read the token: {error}")))?
    };
    let token = text.trim();
    if token.is_empty() {
        return Err(CliError::Usage("no token given".to_owned()));
    }
    Ok(token.to_owned())
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in with a token (pasted, or from stdin with --with-token) or the device flow.
    ///
    /// The token is checked with GitHub first and then kept in the OS keyring only.
    Login {
        /// Read the token from standard input (for scripts).
        #[arg(long, conflicts_with = "device")]
        with_token: bool,
        /// Sign in in the browser with GitHub's device flow (needs an OAuth app's client id).
        #[arg(long)]
        device: bool,
        /// The OAuth app's client id for --device [default: the saved one].
        #[arg(long, value_name = "ID", env = "HANDOFF_GITHUB_CLIENT_ID")]
        client_id: Option<String>,
        /// The REST API base, for GitHub Enterprise (https://HOST/api/v3) [default: https://api.github.com].
        /// The web and git address follows from it (https://HOST); the token never goes
        /// anywhere else, and only over https.
        #[arg(long, value_name = "URL")]
        api_base: Option<String>,
    },
    /// Who is signed in where; asks GitHub whether the token still works.
    Status {
        /// Do not ask GitHub; only say what is stored.
        #[arg(long)]
        offline: bool,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Remove the token from the OS keyring.
    Logout,
}
