//! `handoff auth login|status|logout`: the GitHub token, in the OS keyring only.

use clap::Subcommand;
use std::io::{IsTerminal as _, Read as _};

use super::command_error::CliError;
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff::github::endpoints::GithubEndpoints;
use handoff::github::sign_in::{
    auth_status, finish_device_flow, sign_in_with_token, sign_out, start_device_flow,
};
use handoff::secrets::{Secret, SecretStore};
use handoff::store::{SettingKey, Store};

pub async fn run(store: &Store, command: AuthCommand) -> Result<(), CliError> {
    let secrets = SecretStore::os();
    match command {
        AuthCommand::Login {
            with_token,
            device,
            client_id,
            api_base,
        } => {
            let endpoints = match api_base {
                Some(api) => GithubEndpoints::new(&api)?,
                None => GithubEndpoints::configured(store).await?,
            };
            let token = if device {
                let client_id = match client_id {
                    Some(id) => id,
                    None => store.setting(SettingKey::GithubDeviceClientId).await?.ok_or_else(|| {
                        CliError::Usage(
                            "--device needs the client id of a GitHub OAuth app: --client-id ID (or HANDOFF_GITHUB_CLIENT_ID)"
                                .to_owned(),
                        )
                    })?,
                };
                let code = start_device_flow(&endpoints, &client_id).await?;
                eprintln!(
                    "Open {} and enter the code {} (it expires in {} minutes).",
                    code.verification_uri,
                    code.user_code,
                    code.expires_in.div_ceil(60)
                );
                let token = finish_device_flow(&endpoints, &client_id, &code).await?;
                store
                    .set_setting(SettingKey::GithubDeviceClientId, &client_id)
                    .await?;
                token
            } else {
                read_token(with_token)?
            };
            let api_base = endpoints.api_base.clone();
            let signed_in = sign_in_with_token(store, &secrets, endpoints, token).await?;
            println!(
                "signed in to {api_base} as {}; the token is kept in the OS keyring",
                signed_in.login
            );
            if let Some(warning) = signed_in.token_warning() {
                eprintln!("note: {warning}");
                if signed_in.scopes.can_change_workflows() == Some(true) {
                    eprintln!("hint: make a token without the `workflow` scope and sign in with it: `handoff auth login --with-token`");
                }
            }
            Ok(())
        }
        AuthCommand::Status { offline, output } => {
            let status = auth_status(store, &secrets, !offline).await?;
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
            if sign_out(store, &secrets).await? {
                println!("signed out: the token was removed from the OS keyring");
            } else {
                println!("no token was stored");
            }
            Ok(())
        }
    }
}

/// The token from stdin (scripts, `--with-token`) or typed at a hidden prompt.
fn read_token(from_stdin: bool) -> Result<Secret, CliError> {
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
    Ok(Secret::new(token))
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
