//! The steps every agent run shares, whatever its stage: the agent and its sandbox made
//! ready before anything is spent; a working copy of a branch from the cache; the job
//! (prompt, inputs, commit message, script) run in the sandbox with its log recorded.
//! Bringing the agent's commits back and pushing them is [`super::agent_push`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::agent_presets::AgentChoice;
use super::cache_lock::CacheLock;
use super::host_git::{pull_head_ref, GitError, HostGit};
use super::job_script::{JobScript, KEPT_COPY_UNUSABLE_EXIT, KEPT_COPY_UNUSABLE_MARK};
use super::kept_copy::{backend_keeps_copies, CopySteps, KeptCopy};
use super::run_log::{record_sandbox_events, RunLog};
use super::{Pipeline, PipelineError};
use crate::data_dir::create_private_folder;
use crate::domain::RunFailureCode;
use crate::domain::{FeedbackId, Repo, RepoName, RunId, SandboxBackend, Stage};
use crate::sandbox::key_forwarding::{ForwardedKey, ModelEndpoint};
use crate::sandbox::output_limits::check_output_folder;
use crate::sandbox::until_cancelled;
use crate::sandbox::{JobControl, Sandbox, SandboxEnd, SandboxJob};
use crate::secrets::Redactor;
use crate::service_address::check_secret_address;
use crate::setup_check::{self, CheckStatus};
use crate::store::{RunOutcome, StoreError};

/// `step`, unless the owner cancels first: the step is then dropped (a git process it
/// started is killed with it) and the run ends as cancelled. For what a run does outside
/// the sandbox: fetching, pushing, opening the PR.
pub(crate) async fn unless_cancelled<T>(
    cancel: &watch::Receiver<bool>,
    step: impl std::future::Future<Output = Result<T, Stop>>,
) -> Result<T, Stop> {
    let mut cancel = cancel.clone();
    tokio::select! {
        // An early cancel wins over a step that is ready at once.
        biased;
        () = until_cancelled(&mut cancel) => Err(Stop::Cancelled),
        result = step => result,
    }
}

/// Why a started run did not succeed.
pub(crate) enum Stop {
    Failed {
        code: RunFailureCode,
        message: String,
    },
    Cancelled,
}

impl Stop {
    /// Says in the run's log why the job stopped, and gives the outcome to record.
    pub(crate) async fn logged_outcome(&self, log: &RunLog) -> Result<RunOutcome, StoreError> {
        Ok(match self {
            Stop::Failed { code, message } => {
                log.say(&format!("failed: {message}")).await?;
                RunOutcome::Failed {
                    failure_code: *code,
                    message: log.redactor().redact(message),
                    exit_code: None,
                }
            }
            Stop::Cancelled => {
                log.say("cancelled by the owner; the sandbox was stopped")
                    .await?;
                RunOutcome::Cancelled {
                    reason: "cancelled by the owner".to_owned(),
                }
            }
        })
    }

    pub(crate) fn failed(code: RunFailureCode, message: impl Into<String>) -> Self {
        Stop::Failed {
            code,
            message: message.into(),
        }
    }
}

impl From<StoreError> for Stop {
    fn from(error: StoreError) -> Self {
        Stop::failed(RunFailureCode::Store, error.to_string())
    }
}

/// The agent and its sandbox, checked and ready.
#[derive(Debug, Clone)]
pub(crate) struct AgentSetup {
    pub sandbox: Sandbox,
    pub agent: AgentChoice,
    /// The agent's API key, kept out of the sandbox (each job gets its own placeholder).
    pub agent_key: Option<ForwardedKey>,
    pub timeout: Duration,
    /// Every secret of the run (the agent's key, the GitHub token, the E2B key), to scrub
    /// out of whatever the run stores or shows.
    pub redactor: Redactor,
}

impl AgentSetup {
    /// A file of the run's `out/` folder as text ([`read_optional`]), with every secret
    /// of the run scrubbed out: the agent's output is published and stored.
    pub fn read_output(&self, path: &Path) -> Option<String> {
        read_optional(path).map(|text| self.redactor.redact(&text))
    }
}

/// Where a run's working copy starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CopyStart<'a> {
    /// The current tip of `branch` on GitHub. When the branch is gone: a new `branch`
    /// from the last head of `pull_request` if it had one (so earlier runs' commits are
    /// kept), else from `base_for_new` when given.
    Branch {
        branch: &'a str,
        base_for_new: Option<&'a str>,
        pull_request: Option<u64>,
        /// The fork the branch lives in, when not the repository itself.
        in_fork: Option<&'a RepoName>,
    },
    /// A pull request's own head as GitHub keeps it (`refs/pull/N/head`), whatever
    /// repository its branch lives in; the working copy's branch is named `branch`.
    PullRequestHead { number: u64, branch: &'a str },
}

/// A working copy made for a run.
#[derive(Debug, Clone)]
pub(crate) struct WorkingCopy {
    pub cache: PathBuf,
    /// The branch checked out in the copy.
    pub branch: String,
    pub start_sha: String,
    /// How the sandbox makes the copy, or brings the kept one to `start_sha`.
    pub steps: CopySteps,
    /// The feedback item's copy kept between its runs, when this run uses one.
    pub kept: Option<KeptCopy>,
    /// What the owner should know about how the copy was made.
    pub note: Option<String>,
}

/// What the sandbox is given besides the working copy.
pub(crate) struct JobFiles<'a> {
    pub prompt: &'a str,
    pub commit_message: &'a str,
    /// Files for `handoff/inputs/` (name, text).
    pub inputs: &'a [(String, String)],
}

/// A file's text, if it has some (NULs dropped, invalid UTF-8 replaced).
pub(crate) fn read_optional(path: &Path) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', ""))
        .filter(|text| !text.trim().is_empty())
}

/// `90 s`, `30 min`, `2 h`.
pub(crate) fn humanize(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 120 {
        format!("{seconds} s")
    } else if seconds < 2 * 3600 {
        format!("{} min", seconds / 60)
    } else {
        format!("{} h", seconds / 3600)
    }
}

impl Pipeline {
    pub(crate) fn host_git(&self) -> HostGit {
        HostGit::new(
            &self.github.endpoints().web_base,
            self.github.token().clone(),
        )
    }

    pub(crate) fn workspace_of(&self, run_id: RunId) -> PathBuf {
        self.data_dir
            .join("workspaces")
            .join(format!("run-{run_id}"))
    }

    pub(crate) fn cache_root(&self) -> PathBuf {
        let host = self.github.endpoints().api_host().replace([':', '/'], "_");
        self.data_dir.join("git-cache").join(host)
    }

    /// The agent's command and key, and a sandbox that answers: everything that can
    /// refuse a run before it is recorded. A missing key, a Docker engine that does not
    /// answer or an image that is not there refuse the run with the line Check setup
    /// shows for it.
    pub(crate) async fn agent_setup(
        &self,
        repo: &Repo,
        backend: Option<SandboxBackend>,
        timeout: Option<Duration>,
    ) -> Result<AgentSetup, PipelineError> {
        if repo.disconnected_at.is_some() {
            return Err(PipelineError::RepoDisconnected(repo.name.full_name()));
        }
        let agent = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref())?;
        let key_line = setup_check::agent_key(&self.secrets, &self.settings, repo, &agent).await;
        if key_line.status == CheckStatus::Failure {
            return Err(PipelineError::SetupIncomplete(key_line));
        }
        let mut agent_key = None;
        if let Some(key) = agent.api_key() {
            let secret = self
                .settings
                .agent_key(&self.secrets, key.provider)
                .await?
                .ok_or_else(|| PipelineError::SetupIncomplete(key_line.clone()))?;
            let upstream = self.settings.provider_api_base(key);
            if let Err(refusal) = check_secret_address(&upstream) {
                return Err(PipelineError::SetupIncomplete(
                    setup_check::provider_address_refused(repo, key.provider, &refusal.to_string()),
                ));
            }
            agent_key = Some(ForwardedKey::new(
                key.variable,
                key.base_address_variables,
                key.base_path,
                key.header.name,
                key.header.prefix,
                key.api_host,
                &upstream,
                ModelEndpoint::list(key.model_endpoints),
                secret,
            ));
        }
        let backend = backend.unwrap_or(repo.sandbox_backend);
        // The local backend is a development choice the owner confirms per repository
        // (when setting it); a single run cannot choose it for a repository set otherwise.
        if backend == SandboxBackend::Local && repo.sandbox_backend != SandboxBackend::Local {
            return Err(PipelineError::LocalNotConfirmed {
                repo: repo.name.full_name(),
            });
        }
        let sandbox = self.sandbox_for(backend, Some(repo)).await?;
        match &sandbox {
            Sandbox::Docker(docker) => {
                let (engine_line, engine) = setup_check::docker_engine().await;
                let Some(engine) = engine else {
                    return Err(PipelineError::SetupIncomplete(engine_line));
                };
                let (_, preset) = self.docker_image_of(repo);
                let image_line =
                    setup_check::docker_image(&engine, docker.image(), preset.as_deref()).await;
                if image_line.status == CheckStatus::Failure {
                    return Err(PipelineError::SetupIncomplete(image_line));
                }
                if repo.network_mode != crate::domain::NetworkMode::None {
                    let gate_line = setup_check::egress_gate(&engine).await;
                    if gate_line.status == CheckStatus::Failure {
                        return Err(PipelineError::SetupIncomplete(gate_line));
                    }
                }
            }
            Sandbox::E2b(e2b) => {
                if let Err(refusal) = self.settings.e2b.check_addresses() {
                    return Err(PipelineError::SetupIncomplete(
                        setup_check::e2b_address_refused(&refusal),
                    ));
                }
                if e2b.api_key().is_none() {
                    return Err(PipelineError::SetupIncomplete(
                        setup_check::e2b_key_missing(&self.settings.e2b.api_host()),
                    ));
                }
            }
            Sandbox::Local(_) => {}
        }
        sandbox.preflight().await?;
        let redactor = Redactor::new(
            agent_key
                .iter()
                .map(|key| &key.secret)
                .chain([self.github.token()])
                .chain(sandbox.own_secret()),
        );
        Ok(AgentSetup {
            sandbox,
            agent,
            agent_key,
            timeout: timeout.unwrap_or(Duration::from_secs(u64::from(repo.run_timeout_seconds))),
            redactor,
        })
    }

    /// The lock on `repo`'s cache, said in the run's log when another run holds it.
    pub(super) async fn lock_cache(&self, log: &RunLog, repo: &Repo) -> Result<CacheLock, Stop> {
        let waiting = async {
            let said = log
                .say(&format!(
                    "waiting for another run of {} to finish with the cache",
                    repo.name
                ))
                .await;
            if let Err(error) = said {
                tracing::warn!(%error, "the wait for the cache could not be logged");
            }
        };
        let (lock, _) = CacheLock::acquire(&self.cache_root(), &repo.name, waiting)
            .await
            .map_err(|error| {
                Stop::failed(
                    RunFailureCode::Workspace,
                    format!("the cache of {} cannot be locked: {error}", repo.name),
                )
            })?;
        Ok(lock)
    }

    /// A working copy for a run, from where `start` says (see [`CopyStart`]); with
    /// `keep_for`, the feedback item's kept copy where the backend keeps one (see
    /// [`super::kept_copy`]).
    pub(crate) async fn prepare_working_copy(
        &self,
        setup: &AgentSetup,
        log: &RunLog,
        workspace: &Path,
        repo: &Repo,
        start: CopyStart<'_>,
        keep_for: Option<FeedbackId>,
    ) -> Result<WorkingCopy, Stop> {
        create_private_folder(&self.data_dir.join("workspaces"))
            .and_then(|()| create_private_folder(&self.data_dir.join("git-cache")))
            .and_then(|()| std::fs::create_dir_all(workspace.join("handoff/inputs")))
            .and_then(|()| std::fs::create_dir_all(workspace.join("out")))
            .map_err(|error| Stop::failed(RunFailureCode::Workspace, error.to_string()))?;
        let git = self.host_git();
        let _cache_lock = self.lock_cache(log, repo).await?;
        log.say(&format!("fetching {} into the cache", repo.name))
            .await?;
        let pull_heads: Vec<u64> = match start {
            CopyStart::PullRequestHead { number, .. } => vec![number],
            CopyStart::Branch { .. } => Vec::new(),
        };
        let cache = git
            .update_cache(&self.cache_root(), &repo.name, &pull_heads)
            .await
            .map_err(|error| Stop::failed(RunFailureCode::GitFetch, error.to_string()))?;
        let (source_ref, branch, how, note) = match start {
            CopyStart::PullRequestHead { number, branch } => (
                pull_head_ref(number),
                branch.to_owned(),
                format!("the head of PR #{number}"),
                None,
            ),
            CopyStart::Branch {
                branch,
                base_for_new,
                pull_request,
                in_fork,
            } => {
                let in_the_fork = match in_fork {
                    Some(fork) => git
                        .fetch_branch_of(&cache, fork, branch)
                        .await
                        .map_err(|error| Stop::failed(RunFailureCode::GitFetch, error.to_string()))?
                        .map(|reference| (fork, reference)),
                    None => None,
                };
                if let Some((fork, reference)) = in_the_fork {
                    (
                        reference,
                        branch.to_owned(),
                        format!("its current tip in the fork {fork}"),
                        None,
                    )
                } else if in_fork.is_none() && git.branch_exists(&cache, branch).await {
                    (
                        format!("refs/heads/{branch}"),
                        branch.to_owned(),
                        "its current tip".to_owned(),
                        None,
                    )
                } else {
                    let last_head = match pull_request {
                        Some(number) => git
                            .fetch_pull_head(&cache, &repo.name, number)
                            .await
                            .map_err(|error| {
                                Stop::failed(RunFailureCode::GitFetch, error.to_string())
                            })?
                            .map(|sha| (number, sha)),
                        None => None,
                    };
                    match (last_head, base_for_new) {
                        (Some((number, sha)), _) => (
                            pull_head_ref(number),
                            branch.to_owned(),
                            format!("made again from PR #{number}'s last head"),
                            Some(format!(
                                "the branch {branch} was gone from GitHub; it was made again from \
                                 PR #{number}'s last head {}, so the earlier runs' commits are kept",
                                &sha[..sha.len().min(12)]
                            )),
                        ),
                        (None, Some(base)) if git.branch_exists(&cache, base).await => (
                            format!("refs/heads/{base}"),
                            branch.to_owned(),
                            format!("new, from {base}"),
                            None,
                        ),
                        (None, Some(base)) => {
                            return Err(Stop::failed(
                                RunFailureCode::NoBaseBranch,
                                format!("the base branch {base} does not exist on GitHub"),
                            ))
                        }
                        (None, None) => {
                            return Err(Stop::failed(
                                RunFailureCode::NoBranch,
                                format!("the branch {branch} is not in {}", repo.name),
                            ))
                        }
                    }
                }
            }
        };
        let kept = keep_for
            .filter(|_| {
                backend_keeps_copies(setup.sandbox.backend())
                    && self.kept_copy_retention().is_some()
            })
            .map(|feedback_id| KeptCopy::of(&self.data_dir, feedback_id));
        let checkout_failed =
            |error: GitError| Stop::failed(RunFailureCode::GitCheckout, error.to_string());
        let (start_sha, steps) = match &kept {
            Some(kept) => {
                self.ready_kept_copy(setup, &git, &cache, kept, workspace, &source_ref, &branch)
                    .await?
            }
            None if setup.sandbox.works_in_place() => (
                git.make_working_copy(&cache, &workspace.join("repo"), &source_ref, &branch)
                    .await
                    .map_err(checkout_failed)?,
                CopySteps::MadeOnHost,
            ),
            None => (
                git.bundle_ref(&cache, &source_ref, &workspace.join("handoff/repo.bundle"))
                    .await
                    .map_err(checkout_failed)?,
                CopySteps::FromBundle {
                    bundle_ref: source_ref.clone(),
                },
            ),
        };
        log.say(&format!(
            "working copy of {branch} at {} ({how}; {})",
            &start_sha[..start_sha.len().min(12)],
            match &steps {
                CopySteps::MadeOnHost => "made here",
                CopySteps::FromBundle { .. } => "made in the sandbox from a bundle",
                CopySteps::RefreshKept { bundle_ref: None } =>
                    "the item's kept copy, which holds it already",
                CopySteps::RefreshKept {
                    bundle_ref: Some(_),
                } => "the item's kept copy, sent only the commits it lacks",
            }
        ))
        .await?;
        if let Some(note) = &note {
            log.say(&format!("note: {note}")).await?;
        }
        Ok(WorkingCopy {
            cache,
            branch,
            start_sha,
            steps,
            kept,
            note,
        })
    }

    /// Gets the item's kept copy ready for a run starting at `source_ref`: when there is
    /// one on this backend, a bundle of only the commits it lacks (none when it holds
    /// them all); otherwise a fresh copy in its place (any old one dropped first).
    #[allow(clippy::too_many_arguments)]
    async fn ready_kept_copy(
        &self,
        setup: &AgentSetup,
        git: &HostGit,
        cache: &Path,
        kept: &KeptCopy,
        workspace: &Path,
        source_ref: &str,
        branch: &str,
    ) -> Result<(String, CopySteps), Stop> {
        let backend = setup.sandbox.backend();
        let checkout_failed =
            |error: GitError| Stop::failed(RunFailureCode::GitCheckout, error.to_string());
        let workspace_failed = |error: std::io::Error| {
            Stop::failed(
                RunFailureCode::Workspace,
                format!("the item's kept working copy cannot be linked into the run: {error}"),
            )
        };
        let start_sha = git
            .resolve(cache, source_ref)
            .await
            .map_err(checkout_failed)?;
        let bundle = workspace.join("handoff/repo.bundle");
        // The commits the copy holds, and how many of the start's it lacks.
        let known = match kept.record().filter(|record| record.backend == backend) {
            Some(record) => match git
                .commits_lacking(cache, source_ref, &record.commits)
                .await
            {
                Ok(lacking) => Some((record.commits, lacking)),
                Err(error) => {
                    tracing::info!(item = %kept.feedback_id, %error, "the kept copy's commits are not in the cache; the copy is made anew");
                    None
                }
            },
            None => None,
        };
        if backend == SandboxBackend::Local {
            link_kept_copy(&kept.local_repo(), &workspace.join("repo"))
                .map_err(workspace_failed)?;
        } else {
            // Docker mounts the copy's volume as repo/; the folder gives it its owner.
            std::fs::create_dir_all(workspace.join("repo")).map_err(workspace_failed)?;
        }
        if let Some((commits, lacking)) = known {
            let bundle_ref = if lacking > 0 {
                git.bundle_lacking(cache, source_ref, &commits, &bundle)
                    .await
                    .map_err(checkout_failed)?;
                Some(source_ref.to_owned())
            } else {
                None
            };
            return Ok((start_sha, CopySteps::RefreshKept { bundle_ref }));
        }
        // No copy to build on: a fresh one where the kept one lives (an old one there
        // would be built on unseen, so it must go).
        let on_docker = matches!(setup.sandbox, Sandbox::Docker(_));
        if let Err(error) = self.drop_kept_copy(kept, Some(&setup.sandbox)).await {
            if on_docker {
                return Err(Stop::failed(
                    RunFailureCode::Workspace,
                    format!("the item's old working copy cannot be removed: {error}"),
                ));
            }
            tracing::debug!(item = %kept.feedback_id, %error, "a kept copy's volume could not be removed (the engine may be away)");
        }
        if backend == SandboxBackend::Local {
            let repo = kept.local_repo();
            if let Some(parent) = repo.parent() {
                create_private_folder(parent).map_err(workspace_failed)?;
            }
            link_kept_copy(&repo, &workspace.join("repo")).map_err(workspace_failed)?;
            let start = git
                .make_working_copy(cache, &repo, source_ref, branch)
                .await
                .map_err(checkout_failed)?;
            return Ok((start, CopySteps::MadeOnHost));
        }
        git.bundle_ref(cache, source_ref, &bundle)
            .await
            .map_err(checkout_failed)?;
        Ok((
            start_sha,
            CopySteps::FromBundle {
                bundle_ref: source_ref.to_owned(),
            },
        ))
    }

    /// Writes the job's files and runs it in the sandbox, recording its log; returns the
    /// `out/` folder. A cancel, a timeout or a non-zero exit stops the run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_agent(
        &self,
        setup: &AgentSetup,
        log: &RunLog,
        workspace: &Path,
        run_id: RunId,
        stage: Stage,
        copy: &WorkingCopy,
        files: JobFiles<'_>,
        cancel: watch::Receiver<bool>,
    ) -> Result<PathBuf, Stop> {
        let store = &self.store;
        let job_script = JobScript {
            run_id,
            copy_steps: &copy.steps,
            branch: &copy.branch,
            stage,
            agent_command: setup.agent.command(stage),
            start_sha: &copy.start_sha,
            git_name: &self.settings.git_name,
            git_email: &self.settings.git_email,
        }
        .render();
        let handoff = workspace.join("handoff");
        let write = |path: PathBuf, text: &str| {
            std::fs::write(path, text)
                .map_err(|error| Stop::failed(RunFailureCode::Workspace, error.to_string()))
        };
        write(handoff.join("prompt.md"), files.prompt)?;
        write(handoff.join("commit-message.txt"), files.commit_message)?;
        write(handoff.join("job.sh"), &job_script)?;
        for (name, text) in files.inputs {
            write(handoff.join("inputs").join(name), text)?;
        }
        store
            .record_run_start(run_id, &copy.branch, &copy.start_sha, files.prompt)
            .await?;

        log.say(&format!(
            "starting the {} sandbox ({} limit)",
            setup.sandbox.backend(),
            humanize(setup.timeout)
        ))
        .await?;
        if setup.sandbox.backend() == SandboxBackend::Local {
            log.say(
                "warning: the local backend is no sandbox: the agent runs as you, with your \
                 files, keyring and network in reach (a development choice this repository \
                 confirmed)",
            )
            .await?;
        }
        let (events, receiver) = mpsc::unbounded_channel();
        let recorder = tokio::spawn(record_sandbox_events(
            store.clone(),
            run_id,
            setup.redactor.clone(),
            receiver,
        ));
        let job = SandboxJob {
            run_id,
            workspace: workspace.to_owned(),
            kept_copy: copy.kept.as_ref().map(|kept| kept.feedback_id),
            agent_key: setup.agent_key.as_ref().map(ForwardedKey::renewed),
            timeout: setup.timeout,
            limits: self.settings.limits,
        };
        let end = setup.sandbox.run(&job, JobControl { events, cancel }).await;
        let recorded = recorder
            .await
            .map_err(|error| Stop::failed(RunFailureCode::Log, error.to_string()))?;
        recorded?;
        let end = end.map_err(|error| Stop::failed(RunFailureCode::Sandbox, error.to_string()))?;
        if let Some(kept) = &copy.kept {
            let refused = matches!(copy.steps, CopySteps::RefreshKept { .. })
                && end == SandboxEnd::Exited(KEPT_COPY_UNUSABLE_EXIT)
                && workspace.join("out").join(KEPT_COPY_UNUSABLE_MARK).exists();
            if refused {
                return Err(Stop::failed(
                    RunFailureCode::KeptCopyUnusable,
                    "the item's kept working copy could not be brought to the branch's tip",
                ));
            }
            // Whatever the agent did, the copy holds the start now.
            if let Err(error) = kept.remember(setup.sandbox.backend(), &[&copy.start_sha]) {
                tracing::warn!(item = %kept.feedback_id, %error, "the kept copy's record cannot be written; the next run makes a fresh copy");
            }
        }
        let see_log = format!("see the log of run {run_id}");
        match end {
            SandboxEnd::Cancelled => Err(Stop::Cancelled),
            SandboxEnd::TimedOut => Err(Stop::failed(
                RunFailureCode::TimedOut,
                format!(
                    "the run took longer than {} and was stopped; {see_log}",
                    humanize(setup.timeout)
                ),
            )),
            SandboxEnd::Exited(0) => {
                let out = workspace.join("out");
                // Nothing of out/ is read before it is known to be within its caps.
                check_output_folder(&out, &self.settings.limits.output).map_err(|refused| {
                    Stop::failed(
                        RunFailureCode::OutputTooLarge,
                        format!("the agent's output was refused: {refused}; {see_log}"),
                    )
                })?;
                Ok(out)
            }
            SandboxEnd::Exited(code) => Err(Stop::failed(
                RunFailureCode::AgentFailed,
                format!("the agent exited with code {code}; {see_log}"),
            )),
        }
    }
}

/// Makes `link` (a run's `repo/`) point at the kept copy `target`.
fn link_kept_copy(target: &Path, link: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(link) {
        Ok(_) => std::fs::remove_file(link)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    std::os::unix::fs::symlink(target, link)
}
