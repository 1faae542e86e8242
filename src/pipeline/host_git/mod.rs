//! Git on the host: a cache per repository (a bare mirror, fetched incrementally), a
//! fresh working copy per run, and the push. The GitHub token exists only in the
//! environment of the host's own git processes, as an `http.extraHeader` given through
//! `GIT_CONFIG_*` — never in a URL, an argument, a config file or a working copy.
//! Pushes are never forced and never go to a protected branch (the base, the default).
//!
//! Host git runs with nothing of the user's setup: no global or system config (an
//! `insteadOf` there could send the token elsewhere), no inherited `GIT_*` variables
//! (a `GIT_TRACE_CURL` would write the token's header to a file), hooks off, and every
//! object taken from a sandbox's bundle checked, with all it links to (`index-pack
//! --strict`).
//!
//! - this file: [`HostGit`] and how every git process is started;
//! - [`git_error`]: a git command that failed, and why GitHub refused a push;
//! - [`cache_and_copies`]: the cache, fetches, working copies, bundles and clones;
//! - [`comparing`]: diffs, ancestry, commits and paths between two commits;
//! - [`pushing`]: the push;
//! - [`one_file`]: one file read at a commit, and a commit of it alone.

mod cache_and_copies;
mod comparing;
mod git_error;
mod one_file;
mod pushing;

pub use git_error::{push_failure, GitError, PushFailure};

use std::path::{Path, PathBuf};
use std::process::Stdio;

use base64::Engine as _;

use crate::domain::RepoName;
use crate::secrets::{redact, Secret};

/// The longest a fetch or push may take, however steadily it moves.
const NETWORK_GIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// The longest a git command on the host's own files may take.
const LOCAL_GIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Git on the host for one GitHub and one token.
#[derive(Debug, Clone)]
pub struct HostGit {
    web_base: String,
    token: Secret,
}

impl HostGit {
    pub fn new(web_base: &str, token: Secret) -> Self {
        HostGit {
            web_base: web_base.trim_end_matches('/').to_owned(),
            token,
        }
    }

    /// The clone address of `repo`, without credentials.
    pub fn remote_url(&self, repo: &RepoName) -> String {
        format!("{}/{}/{}.git", self.web_base, repo.owner, repo.name)
    }

    fn authorization(&self) -> String {
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("x-access-token:{}", self.token.expose()));
        format!("Authorization: Basic {basic}")
    }

    /// Runs git in `directory`; with `authenticated`, the token rides along in the
    /// process's environment only.
    async fn git(
        &self,
        directory: &Path,
        arguments: &[&str],
        authenticated: bool,
    ) -> Result<String, GitError> {
        let mut command = self.command(directory, arguments, authenticated);
        let described = format!("git {}", arguments.join(" "));
        let limit = if authenticated {
            NETWORK_GIT_LIMIT
        } else {
            LOCAL_GIT_LIMIT
        };
        let output = match tokio::time::timeout(limit, command.output()).await {
            Ok(output) => output.map_err(|error| GitError::Failed {
                command: described.clone(),
                detail: error.to_string(),
            })?,
            Err(_) => {
                return Err(GitError::Failed {
                    command: described,
                    detail: format!(
                        "it took longer than {} minutes and was stopped",
                        limit.as_secs() / 60
                    ),
                })
            }
        };
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned());
        }
        let detail = redact(String::from_utf8_lossy(&output.stderr).trim(), &self.token);
        Err(GitError::Failed {
            command: described,
            detail,
        })
    }

    /// Runs a local git command with `input` on its standard input.
    async fn git_with_input(
        &self,
        directory: &Path,
        arguments: &[&str],
        input: Vec<u8>,
    ) -> Result<String, GitError> {
        use tokio::io::AsyncWriteExt as _;
        let described = format!("git {}", arguments.join(" "));
        let failed = |detail: String| GitError::Failed {
            command: described.clone(),
            detail,
        };
        let mut command = self.command(directory, arguments, false);
        command.stdin(Stdio::piped());
        let mut child = command.spawn().map_err(|error| failed(error.to_string()))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| failed("no input".to_owned()))?;
        // Written while its output is read, so that neither side waits on the other.
        let writing = tokio::spawn(async move {
            let written = stdin.write_all(&input).await;
            drop(stdin);
            written
        });
        let output = match tokio::time::timeout(LOCAL_GIT_LIMIT, child.wait_with_output()).await {
            Ok(output) => output.map_err(|error| failed(error.to_string()))?,
            Err(_) => return Err(failed("it took too long and was stopped".to_owned())),
        };
        let written = writing
            .await
            .map_err(|error| failed(format!("its input could not be written: {error}")))?;
        if !output.status.success() {
            return Err(failed(
                String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            ));
        }
        written.map_err(|error| failed(format!("its input could not be written: {error}")))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Runs a local git command and keeps at most `cap` bytes of what it prints; the
    /// flag says whether there was more (the command is stopped once the cap is full).
    async fn git_capped(
        &self,
        directory: &Path,
        arguments: &[&str],
        cap: usize,
    ) -> Result<(String, bool), GitError> {
        use tokio::io::AsyncReadExt as _;
        let described = format!("git {}", arguments.join(" "));
        let failed = |detail: String| GitError::Failed {
            command: described.clone(),
            detail,
        };
        let mut child = self
            .command(directory, arguments, false)
            .spawn()
            .map_err(|error| failed(error.to_string()))?;
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| failed("no output".to_owned()))?;
        let mut kept = Vec::new();
        let mut limited = (&mut stdout).take(cap as u64 + 1);
        let read = limited.read_to_end(&mut kept);
        match tokio::time::timeout(LOCAL_GIT_LIMIT, read).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(failed(error.to_string())),
            Err(_) => return Err(failed("it took too long and was stopped".to_owned())),
        }
        let cut = kept.len() > cap;
        if cut {
            kept.truncate(cap);
            if let Err(error) = child.start_kill() {
                tracing::debug!(%error, "the capped git command had ended already");
            }
        }
        let status = child
            .wait_with_output()
            .await
            .map_err(|error| failed(error.to_string()))?;
        if !cut && !status.status.success() {
            return Err(failed(
                String::from_utf8_lossy(&status.stderr).trim().to_owned(),
            ));
        }
        Ok((String::from_utf8_lossy(&kept).into_owned(), cut))
    }

    /// The git command: nothing of the user's setup, English messages, and with
    /// `authenticated`, the token in the process's environment only.
    fn command(
        &self,
        directory: &Path,
        arguments: &[&str],
        authenticated: bool,
    ) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("git");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                command.env_remove(name);
            }
        }
        command
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "credential.helper=",
                "-c",
                "protocol.ext.allow=never",
            ])
            .args(arguments)
            .current_dir(directory)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // Git's messages in English whatever the user's language: some are read.
            .env("LC_ALL", "C")
            .env("LANG", "C")
            .env_remove("LANGUAGE")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true")
            .env("GIT_AUTHOR_NAME", "Handoff")
            .env("GIT_AUTHOR_EMAIL", "handoff@localhost")
            .env("GIT_COMMITTER_NAME", "Handoff")
            .env("GIT_COMMITTER_EMAIL", "handoff@localhost")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A cancelled run drops its git command: the process goes with it.
            .kill_on_drop(true);
        if authenticated {
            // A connection that stalls is given up instead of hanging the run: under
            // 1 KB/s for a minute ends the transfer.
            command
                .env("GIT_HTTP_LOW_SPEED_LIMIT", "1000")
                .env("GIT_HTTP_LOW_SPEED_TIME", "60");
            command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env("GIT_CONFIG_VALUE_0", self.authorization());
        }
        command
    }
}

/// Where `repo`'s cache is in `cache_root`.
pub fn cache_path(cache_root: &Path, repo: &RepoName) -> PathBuf {
    cache_root
        .join(&repo.owner)
        .join(format!("{}.git", repo.name))
}

/// Where the cache keeps the head of pull request `number`.
pub fn pull_head_ref(number: u64) -> String {
    format!("refs/handoff/pull/{number}")
}

#[cfg(test)]
mod tests {
    use super::{push_failure, PushFailure};

    #[test]
    fn githubs_own_refusals_are_told_apart_from_a_branch_that_moved_on() {
        let workflow = " ! [remote rejected] feedback/x -> feedback/x (refusing to allow a Personal Access Token to create or update workflow `.github/workflows/ci.yml` without `workflow` scope)\nerror: failed to push some refs to 'https://github.com/o/r.git'";
        assert_eq!(
            push_failure(workflow),
            PushFailure::Refused {
                reason: "refusing to allow a Personal Access Token to create or update workflow `.github/workflows/ci.yml` without `workflow` scope".to_owned(),
                remote: Vec::new()
            }
        );
        let ruleset = "remote: error: GH013: Repository rule violations found for refs/heads/feedback/x.\nremote: Review all repository rules at https://github.com/o/r/rules?ref=refs%2Fheads%2Ffeedback%2Fx\nremote: - Changes must be made through a pull request.\nTo https://github.com/o/r.git\n ! [remote rejected] HEAD -> feedback/x (push declined due to repository rule violations)\nerror: failed to push some refs";
        let PushFailure::Refused { reason, remote } = push_failure(ruleset) else {
            panic!("a refusal");
        };
        assert_eq!(reason, "push declined due to repository rule violations");
        assert_eq!(
            remote[0],
            "GH013: Repository rule violations found for refs/heads/feedback/x."
        );
        let large = "remote: error: File big.bin is 117.80 MB; this exceeds GitHub's file size limit of 100.00 MB\nremote: error: GH001: Large files detected.\n ! [remote rejected] HEAD -> feedback/x (pre-receive hook declined)";
        assert!(
            matches!(push_failure(large), PushFailure::Refused { reason, .. } if reason == "pre-receive hook declined")
        );
        let moved = "To https://github.com/o/r.git\n ! [rejected]        HEAD -> feedback/x (fetch first)\nerror: failed to push some refs\nhint: Updates were rejected because the remote contains work";
        assert_eq!(push_failure(moved), PushFailure::MovedOn);
        assert_eq!(
            push_failure(
                "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host"
            ),
            PushFailure::Other
        );
    }

    use super::*;

    #[test]
    fn the_remote_address_carries_no_credentials() {
        let git = HostGit::new("https://github.com/", Secret::new("ghp_secret_value"));
        let url = git.remote_url(&"octocat/hello-world".parse().unwrap());
        assert_eq!(url, "https://github.com/octocat/hello-world.git");
        assert!(
            !git.authorization().contains("ghp_secret_value"),
            "the header is encoded"
        );
    }
}
