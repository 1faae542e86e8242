//! Git on the host: a cache per repository (a bare mirror, fetched incrementally), a
//! fresh working copy per run, and the push. The GitHub token exists only in the
//! environment of the host's own git processes, as an `http.extraHeader` given through
//! `GIT_CONFIG_*` — never in a URL, an argument, a config file or a working copy.
//! Pushes are never forced and never go to a protected branch (the base, the default).
//!
//! Host git runs with nothing of the user's setup: no global or system config (an
//! `insteadOf` there could send the token elsewhere), no inherited `GIT_*` variables
//! (a `GIT_TRACE_CURL` would write the token's header to a file), hooks off, and every
//! object fetched from a sandbox's bundle checked (`fsckObjects`).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use base64::Engine as _;

use crate::domain::RepoName;
use crate::secrets::{redact, Secret};

/// A git command that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    #[error("`{command}` failed: {detail}")]
    Failed { command: String, detail: String },
    #[error(
        "GitHub refused the push to {branch}: it moved on since the run started (someone pushed); nothing was overwritten"
    )]
    Rejected { branch: String, detail: String },
    #[error(
        "GitHub refused the push to {branch}: {reason}{}",
        said_by_github(remote)
    )]
    RefusedByGithub {
        branch: String,
        /// The reason on git's `[remote rejected]` line.
        reason: String,
        /// What GitHub's checks said (`remote:` lines), without the prefix.
        remote: Vec<String>,
    },
    #[error("refusing to push to {0}: runs never push to the base or default branch")]
    ProtectedBranch(String),
    #[error("the agent's commits do not build on the branch as it was (history was rewritten); nothing was pushed")]
    RewrittenHistory,
}

fn said_by_github(remote: &[String]) -> String {
    let said: Vec<&str> = remote
        .iter()
        .map(|line| line.trim())
        .filter(|line| !line.is_empty())
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!(" (GitHub said: {})", said.join(" "))
    }
}

/// Why a push failed, read from git's own words (git runs in the C locale, so they are
/// English whatever the user's language).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushFailure {
    /// The branch moved on: a non-fast-forward.
    MovedOn,
    /// GitHub's own checks refused it (`[remote rejected]`: a pre-receive check, a
    /// ruleset, branch protection, a workflow file without the `workflow` scope, a file
    /// over 100 MB).
    Refused { reason: String, remote: Vec<String> },
    /// Anything else (the network, authentication).
    Other,
}

/// Reads why `git push` failed from what it printed.
pub fn push_failure(stderr: &str) -> PushFailure {
    let remote: Vec<String> = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("remote:"))
        .map(|line| line.trim().trim_start_matches("error:").trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect();
    for line in stderr.lines().map(str::trim_start) {
        let Some(rest) = line.strip_prefix('!') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("[remote rejected]") {
            let reason = after
                .rsplit_once('(')
                .map(|(_, reason)| reason.trim_end().trim_end_matches(')').to_owned())
                .unwrap_or_else(|| after.trim().to_owned());
            return PushFailure::Refused { reason, remote };
        }
        if rest.starts_with("[rejected]") {
            return PushFailure::MovedOn;
        }
    }
    if stderr.contains("non-fast-forward") || stderr.contains("fetch first") {
        return PushFailure::MovedOn;
    }
    PushFailure::Other
}

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

    /// The cache of `repo` in `cache_root`, made if missing and brought up to date with
    /// one incremental fetch of every branch (and of the heads of `pull_requests`, as
    /// [`pull_head_ref`] names them).
    pub async fn update_cache(
        &self,
        cache_root: &Path,
        repo: &RepoName,
        pull_requests: &[u64],
    ) -> Result<PathBuf, GitError> {
        let cache = cache_path(cache_root, repo);
        if !cache.join("HEAD").exists() {
            std::fs::create_dir_all(&cache).map_err(|error| GitError::Failed {
                command: format!("mkdir {}", cache.display()),
                detail: error.to_string(),
            })?;
            self.git(&cache, &["init", "--quiet", "--bare"], false)
                .await?;
        }
        let url = self.remote_url(repo);
        let pull_refspecs: Vec<String> = pull_requests
            .iter()
            .map(|number| format!("+refs/pull/{number}/head:{}", pull_head_ref(*number)))
            .collect();
        let mut arguments = vec![
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            &url,
            "+refs/heads/*:refs/heads/*",
        ];
        arguments.extend(pull_refspecs.iter().map(String::as_str));
        self.git(&cache, &arguments, true).await?;
        Ok(cache)
    }

    /// Fetches `branch` of `repo` (a fork the owner chose) into the cache as
    /// `refs/handoff/fork/{branch}`; the reference, or `None` when the fork has no such
    /// branch.
    pub async fn fetch_branch_of(
        &self,
        cache: &Path,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<String>, GitError> {
        let url = self.remote_url(repo);
        let reference = format!("refs/handoff/fork/{branch}");
        let refspec = format!("+refs/heads/{branch}:{reference}");
        match self
            .git(
                cache,
                &["fetch", "--quiet", "--no-tags", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => Ok(Some(reference)),
            Err(GitError::Failed { detail, .. }) if detail.contains("couldn't find remote ref") => {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// Fetches the head GitHub keeps for pull request `number` (`refs/pull/N/head`: its
    /// last head, even after its branch was deleted, and a fork's head too) into the
    /// cache; `None` when GitHub has none.
    pub async fn fetch_pull_head(
        &self,
        cache: &Path,
        repo: &RepoName,
        number: u64,
    ) -> Result<Option<String>, GitError> {
        let url = self.remote_url(repo);
        let refspec = format!("+refs/pull/{number}/head:{}", pull_head_ref(number));
        match self
            .git(
                cache,
                &["fetch", "--quiet", "--no-tags", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => self.resolve(cache, &pull_head_ref(number)).await.map(Some),
            Err(GitError::Failed { detail, .. }) if detail.contains("couldn't find remote ref") => {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// The commit `reference` points at in `cache`.
    pub async fn resolve(&self, cache: &Path, reference: &str) -> Result<String, GitError> {
        self.git(
            cache,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{reference}^{{commit}}"),
            ],
            false,
        )
        .await
    }

    /// Whether `branch` exists in `cache`.
    pub async fn branch_exists(&self, cache: &Path, branch: &str) -> bool {
        self.git(
            cache,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
            false,
        )
        .await
        .is_ok()
    }

    /// A working copy at `destination` whose branch `branch` starts where `start` (a ref
    /// of the cache) points. It has no remote: it knows nothing of GitHub. Returns the
    /// commit it starts from.
    pub async fn make_working_copy(
        &self,
        cache: &Path,
        destination: &Path,
        start: &str,
        branch: &str,
    ) -> Result<String, GitError> {
        let start_sha = self.resolve(cache, start).await?;
        let cache_text = cache.to_string_lossy().into_owned();
        let destination_text = destination.to_string_lossy().into_owned();
        let parent = destination.parent().unwrap_or(destination);
        // A local clone links every object of the cache, so any commit of it (a pull
        // request's head included) can be checked out.
        self.git(
            parent,
            &[
                "clone",
                "--quiet",
                "--no-tags",
                "--no-checkout",
                &cache_text,
                &destination_text,
            ],
            false,
        )
        .await?;
        self.git(
            destination,
            &["checkout", "--quiet", "-B", branch, &start_sha],
            false,
        )
        .await?;
        self.git(destination, &["remote", "remove", "origin"], false)
            .await?;
        self.git(destination, &["rev-parse", "HEAD"], false).await
    }

    /// A bundle of `reference` (its whole history) at `destination`, from which a
    /// sandbox makes its own working copy; returns the commit `reference` points at.
    /// Sending one packed file is much cheaper than a checked-out tree of many files.
    pub async fn bundle_ref(
        &self,
        cache: &Path,
        reference: &str,
        destination: &Path,
    ) -> Result<String, GitError> {
        self.bundle_range(cache, &[reference], destination).await?;
        self.resolve(cache, reference).await
    }

    /// A shallow clone straight from GitHub, the way the original workflow started each
    /// run (kept to compare against the cache in the benchmark).
    pub async fn shallow_clone(
        &self,
        repo: &RepoName,
        branch: &str,
        destination: &Path,
    ) -> Result<String, GitError> {
        let url = self.remote_url(repo);
        let destination_text = destination.to_string_lossy().into_owned();
        let parent = destination.parent().unwrap_or(destination);
        self.git(
            parent,
            &[
                "clone",
                "--quiet",
                "--depth",
                "1",
                "--no-tags",
                "--branch",
                branch,
                &url,
                &destination_text,
            ],
            true,
        )
        .await?;
        self.git(destination, &["rev-parse", "HEAD"], false).await
    }

    /// The diff of commit `head` against where it left branch `base` (what a PR
    /// shows), from `cache`, cut at `cap` bytes with a line that says so (a fork's PR may
    /// be of any size).
    pub async fn pull_request_diff(
        &self,
        cache: &Path,
        base: &str,
        head: &str,
        cap: usize,
    ) -> Result<String, GitError> {
        let (mut diff, cut) = self
            .git_capped(
                cache,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    &format!("refs/heads/{base}...{head}"),
                ],
                cap,
            )
            .await?;
        if cut {
            diff.push_str(&format!(
                "\n[Handoff cut this diff at {cap} bytes: the rest is not shown]\n"
            ));
        }
        Ok(diff)
    }

    /// The diff of the commits from `from` to `to`, cut at `cap` bytes (with a line that
    /// says so).
    pub async fn diff_between(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
        cap: usize,
    ) -> Result<String, GitError> {
        let (mut diff, cut) = self
            .git_capped(
                cache,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    from,
                    to,
                    "--",
                ],
                cap,
            )
            .await?;
        if cut {
            diff.push_str(&format!(
                "\n[Handoff cut this diff at {cap} bytes: the rest is not shown]\n"
            ));
        }
        Ok(diff)
    }

    /// Fetches the commits of a bundle made in the sandbox into `cache` as `run_ref`;
    /// returns the commit it points at.
    pub async fn import_bundle(
        &self,
        cache: &Path,
        bundle: &Path,
        run_ref: &str,
    ) -> Result<String, GitError> {
        let bundle_text = bundle.to_string_lossy().into_owned();
        self.git(cache, &["bundle", "verify", "--quiet", &bundle_text], false)
            .await?;
        // What a sandbox hands back is untrusted: every object is checked as it comes in.
        self.git(
            cache,
            &[
                "-c",
                "fetch.fsckObjects=true",
                "fetch",
                "--quiet",
                "--no-tags",
                &bundle_text,
                &format!("+HEAD:{run_ref}"),
            ],
            false,
        )
        .await?;
        self.git(cache, &["rev-parse", run_ref], false).await
    }

    /// Whether `ancestor` is an ancestor of (or equal to) `descendant`.
    pub async fn is_ancestor(&self, cache: &Path, ancestor: &str, descendant: &str) -> bool {
        self.git(
            cache,
            &["merge-base", "--is-ancestor", ancestor, descendant],
            false,
        )
        .await
        .is_ok()
    }

    /// How many commits `to` has that `from` has not.
    pub async fn commits_between(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
    ) -> Result<u32, GitError> {
        self.count_commits(cache, &[&format!("{from}..{to}")]).await
    }

    /// The paths the commits from `from` to `to` change (added, changed, removed).
    pub async fn changed_paths(
        &self,
        cache: &Path,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>, GitError> {
        let listed = self
            .git(
                cache,
                &["diff", "--name-only", "-z", "--no-renames", from, to, "--"],
                false,
            )
            .await?;
        Ok(listed
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// How many commits the revision range `ranges` (as `git rev-list` takes it) holds.
    pub(crate) async fn count_commits(
        &self,
        cache: &Path,
        ranges: &[&str],
    ) -> Result<u32, GitError> {
        let mut arguments = vec!["rev-list", "--count"];
        arguments.extend_from_slice(ranges);
        arguments.push("--");
        let count = self.git(cache, &arguments, false).await?;
        count.parse().map_err(|_| GitError::Failed {
            command: format!("git {}", arguments.join(" ")),
            detail: format!("it answered {count:?}, not a count"),
        })
    }

    /// A bundle at `destination` of the revision range `ranges` (as `git bundle create`
    /// takes it).
    pub(crate) async fn bundle_range(
        &self,
        cache: &Path,
        ranges: &[&str],
        destination: &Path,
    ) -> Result<(), GitError> {
        let destination_text = destination.to_string_lossy().into_owned();
        let mut arguments = vec!["bundle", "create", "--quiet", destination_text.as_str()];
        arguments.extend_from_slice(ranges);
        self.git(cache, &arguments, false).await.map(|_| ())
    }

    /// Pushes `from_ref` of `cache` to `branch` on GitHub: never forced, never to one of
    /// the `protected` branches (the base, the default).
    pub async fn push(
        &self,
        cache: &Path,
        repo: &RepoName,
        from_ref: &str,
        branch: &str,
        protected: &[&str],
    ) -> Result<(), GitError> {
        if protected.contains(&branch) || branch.is_empty() {
            return Err(GitError::ProtectedBranch(branch.to_owned()));
        }
        let url = self.remote_url(repo);
        let refspec = format!("{from_ref}:refs/heads/{branch}");
        match self
            .git(
                cache,
                &["push", "--quiet", "--no-verify", &url, &refspec],
                true,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(GitError::Failed { command, detail }) => match push_failure(&detail) {
                PushFailure::MovedOn => Err(GitError::Rejected {
                    branch: branch.to_owned(),
                    detail,
                }),
                PushFailure::Refused { reason, remote } => Err(GitError::RefusedByGithub {
                    branch: branch.to_owned(),
                    reason,
                    remote,
                }),
                PushFailure::Other => Err(GitError::Failed { command, detail }),
            },
            Err(error) => Err(error),
        }
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
