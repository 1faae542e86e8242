//! A run's working copy: the repository's cache brought up to date (one run at a time
//! holds it), then a fresh copy of where the run starts, or the feedback item's kept
//! copy brought to that commit with a bundle of only what it lacks.

use std::path::Path;

use crate::data_dir::create_private_folder;
use crate::domain::RunFailureCode;
use crate::domain::{FeedbackId, Repo, SandboxBackend};
use crate::pipeline::cache_fetched_for_run::take_fetched_for_run;
use crate::pipeline::cache_lock::CacheLock;
use crate::pipeline::host_git::{cache_path, pull_head_ref, GitError, HostGit};
use crate::pipeline::kept_copy::{backend_keeps_copies, CopySteps, KeptCopy};
use crate::pipeline::run_log::RunLog;
use crate::pipeline::Pipeline;
use crate::sandbox::Sandbox;

use super::*;

impl Pipeline {
    /// The lock on `repo`'s cache, said in the run's log when another run holds it.
    pub(crate) async fn lock_cache(&self, log: &RunLog, repo: &Repo) -> Result<CacheLock, Stop> {
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
        job: &AgentJob<'_>,
        start: CopyStart<'_>,
        keep_for: Option<FeedbackId>,
    ) -> Result<WorkingCopy, Stop> {
        let AgentJob {
            setup,
            log,
            workspace,
            repo,
            ..
        } = *job;
        create_private_folder(&self.data_dir.join("workspaces"))
            .and_then(|()| create_private_folder(&self.data_dir.join("git-cache")))
            .and_then(|()| std::fs::create_dir_all(workspace.join("handoff/inputs")))
            .and_then(|()| std::fs::create_dir_all(workspace.join("out")))
            .map_err(|error| Stop::failed(RunFailureCode::Workspace, error.to_string()))?;
        let git = self.host_git();
        let _cache_lock = self.lock_cache(log, repo).await?;
        let pull_heads: Vec<u64> = match start {
            CopyStart::PullRequestHead { number, .. } => vec![number],
            CopyStart::Branch { .. } => Vec::new(),
        };
        let cache = cache_path(&self.cache_root(), &repo.name);
        if !(pull_heads.is_empty() && take_fetched_for_run(&cache, job.run_id)) {
            log.say(&format!("fetching {} into the cache", repo.name))
                .await?;
            git.update_cache(&self.cache_root(), &repo.name, &pull_heads)
                .await
                .map_err(|error| Stop::failed(RunFailureCode::GitFetch, error.to_string()))?;
        }
        let source = copy_source(&git, &cache, repo, start).await?;
        let CopySource { branch, .. } = &source;
        let (checkout_ref, how, note) =
            resumed_from_unfinished(log, &git, &cache, &source, start).await?;
        let kept = keep_for
            .filter(|_| {
                backend_keeps_copies(setup.sandbox.backend())
                    && self.kept_copy_retention().is_some()
            })
            .map(|feedback_id| KeptCopy::of(&self.data_dir, feedback_id));
        let (checkout_sha, steps) = self
            .check_out(job, &git, &cache, kept.as_ref(), &checkout_ref, branch)
            .await?;
        let start_sha = if checkout_ref == source.source_ref {
            checkout_sha.clone()
        } else {
            git.resolve(&cache, &source.source_ref)
                .await
                .map_err(|error| Stop::failed(RunFailureCode::GitCheckout, error.to_string()))?
        };
        log.say(&format!(
            "working copy of {branch} at {} ({how}; {})",
            &start_sha[..start_sha.len().min(12)],
            steps.words()
        ))
        .await?;
        if let Some(note) = &note {
            log.say(&format!("note: {note}")).await?;
        }
        Ok(WorkingCopy {
            cache,
            branch: source.branch,
            start_sha,
            checkout_sha,
            steps,
            kept,
            note,
        })
    }

    /// Checks `checkout_ref` out as `branch`: into the item's `kept` copy, here (for a
    /// sandbox that works in place), or as a bundle the sandbox makes its copy from.
    async fn check_out(
        &self,
        job: &AgentJob<'_>,
        git: &HostGit,
        cache: &Path,
        kept: Option<&KeptCopy>,
        checkout_ref: &str,
        branch: &str,
    ) -> Result<(String, CopySteps), Stop> {
        let checkout_failed =
            |error: GitError| Stop::failed(RunFailureCode::GitCheckout, error.to_string());
        let workspace = job.workspace;
        Ok(match kept {
            Some(kept) => {
                self.ready_kept_copy(job, git, cache, kept, checkout_ref, branch)
                    .await?
            }
            None if job.setup.sandbox.works_in_place() => (
                git.make_working_copy(cache, &workspace.join("repo"), checkout_ref, branch)
                    .await
                    .map_err(checkout_failed)?,
                CopySteps::MadeOnHost,
            ),
            None => (
                git.bundle_ref(cache, checkout_ref, &workspace.join("handoff/repo.bundle"))
                    .await
                    .map_err(checkout_failed)?,
                CopySteps::FromBundle {
                    bundle_ref: checkout_ref.to_owned(),
                },
            ),
        })
    }

    /// Gets the item's kept copy ready for a run starting at `source_ref`: when there is
    /// one on this backend, a bundle of only the commits it lacks (none when it holds
    /// them all); otherwise a fresh copy in its place (any old one dropped first).
    async fn ready_kept_copy(
        &self,
        job: &AgentJob<'_>,
        git: &HostGit,
        cache: &Path,
        kept: &KeptCopy,
        source_ref: &str,
        branch: &str,
    ) -> Result<(String, CopySteps), Stop> {
        let AgentJob {
            setup, workspace, ..
        } = *job;
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
        let known = commits_of_kept_copy(git, cache, kept, backend, source_ref).await;
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
}

/// Makes `link` (a run's `repo/`) point at the kept copy `target`.
fn link_kept_copy(target: &Path, link: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(link) {
        Ok(_) => std::fs::remove_file(link)?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    directory_link(target, link)
}

#[cfg(unix)]
fn directory_link(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// A directory's symbolic link, which Windows lets a user make with Developer Mode on (or
/// the right to make links); without it the run fails saying so.
#[cfg(windows)]
fn directory_link(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_dir(target, link)
}

/// The commits the item's `kept` copy holds, and how many of `source_ref`'s it lacks;
/// none when there is no copy of `backend`, or its commits are not in the cache.
async fn commits_of_kept_copy(
    git: &HostGit,
    cache: &Path,
    kept: &KeptCopy,
    backend: SandboxBackend,
    source_ref: &str,
) -> Option<(Vec<String>, u32)> {
    let record = kept.record().filter(|record| record.backend == backend)?;
    match git
        .commits_lacking(cache, source_ref, &record.commits)
        .await
    {
        Ok(lacking) => Some((record.commits, lacking)),
        Err(error) => {
            tracing::info!(item = %kept.feedback_id, %error, "the kept copy's commits are not in the cache; the copy is made anew");
            None
        }
    }
}

/// Where a working copy starts: the reference checked out, the branch it is on, and how
/// it came to be (with a note for the owner when it was made again).
#[derive(Debug)]
struct CopySource {
    source_ref: String,
    branch: String,
    how: String,
    note: Option<String>,
}

/// Where the copy of `start` starts, in the repository's `cache`.
async fn copy_source(
    git: &HostGit,
    cache: &Path,
    repo: &Repo,
    start: CopyStart<'_>,
) -> Result<CopySource, Stop> {
    let fetch_failed = |error: GitError| Stop::failed(RunFailureCode::GitFetch, error.to_string());
    let (branch, base_for_new, pull_request, in_fork) = match start {
        CopyStart::PullRequestHead { number, branch } => {
            return Ok(CopySource {
                source_ref: pull_head_ref(number),
                branch: branch.to_owned(),
                how: format!("the head of PR #{number}"),
                note: None,
            })
        }
        CopyStart::Branch {
            branch,
            base_for_new,
            pull_request,
            in_fork,
            ..
        } => (branch, base_for_new, pull_request, in_fork),
    };
    let in_the_fork = match in_fork {
        Some(fork) => git
            .fetch_branch_of(cache, fork, branch)
            .await
            .map_err(fetch_failed)?
            .map(|reference| (fork, reference)),
        None => None,
    };
    let found = |source_ref: String, how: String| CopySource {
        source_ref,
        branch: branch.to_owned(),
        how,
        note: None,
    };
    if let Some((fork, reference)) = in_the_fork {
        return Ok(found(
            reference,
            format!("its current tip in the fork {fork}"),
        ));
    }
    if in_fork.is_none() && git.branch_exists(cache, branch).await {
        return Ok(found(
            format!("refs/heads/{branch}"),
            "its current tip".to_owned(),
        ));
    }
    branch_made_again(git, cache, repo, branch, pull_request, base_for_new).await
}

/// Where a branch gone from GitHub starts again: from its PR's last head (so the earlier
/// runs' commits are kept), else from `base_for_new` when given and there.
async fn branch_made_again(
    git: &HostGit,
    cache: &Path,
    repo: &Repo,
    branch: &str,
    pull_request: Option<u64>,
    base_for_new: Option<&str>,
) -> Result<CopySource, Stop> {
    let fetch_failed = |error: GitError| Stop::failed(RunFailureCode::GitFetch, error.to_string());
    let last_head = match pull_request {
        Some(number) => git
            .fetch_pull_head(cache, &repo.name, number)
            .await
            .map_err(fetch_failed)?
            .map(|sha| (number, sha)),
        None => None,
    };
    match (last_head, base_for_new) {
        (Some((number, sha)), _) => Ok(CopySource {
            source_ref: pull_head_ref(number),
            branch: branch.to_owned(),
            how: format!("made again from PR #{number}'s last head"),
            note: Some(format!(
                "the branch {branch} was gone from GitHub; it was made again from \
                 PR #{number}'s last head {}, so the earlier runs' commits are kept",
                &sha[..sha.len().min(12)]
            )),
        }),
        (None, Some(base)) if git.branch_exists(cache, base).await => Ok(CopySource {
            source_ref: format!("refs/heads/{base}"),
            branch: branch.to_owned(),
            how: format!("new, from {base}"),
            note: None,
        }),
        (None, Some(base)) => Err(Stop::failed(
            RunFailureCode::NoBaseBranch,
            format!("the base branch {base} does not exist on GitHub"),
        )),
        (None, None) => Err(Stop::failed(
            RunFailureCode::NoBranch,
            format!("the branch {branch} is not in {}", repo.name),
        )),
    }
}

/// Going on from an unfinished run: its last commit is checked out, on top of the
/// branch's tip it started from (when the branch has not moved since). Returns what is
/// checked out, how, and the note for the owner.
async fn resumed_from_unfinished(
    log: &RunLog,
    git: &HostGit,
    cache: &Path,
    source: &CopySource,
    start: CopyStart<'_>,
) -> Result<(String, String, Option<String>), Stop> {
    let as_found = (
        source.source_ref.clone(),
        source.how.clone(),
        source.note.clone(),
    );
    let CopyStart::Branch {
        resume: Some(unfinished),
        ..
    } = start
    else {
        return Ok(as_found);
    };
    let tip = git.resolve(cache, &source.source_ref).await.ok();
    let kept_ref = unfinished_work_ref(unfinished.run_id);
    let held = git.resolve(cache, &kept_ref).await.ok();
    if tip.as_deref() != Some(unfinished.start_sha.as_str())
        || held.as_deref() != Some(unfinished.end_sha.as_str())
    {
        log.say(&format!(
            "note: run {} left unfinished work, but the branch has moved since; this \
             run starts from the branch's tip",
            unfinished.run_id
        ))
        .await?;
        return Ok(as_found);
    }
    let how = format!(
        "{}, with the commits run {} left when its budget was spent",
        source.how, unfinished.run_id
    );
    let note = format!(
        "this run goes on from where run {} stopped when its budget was spent \
         (its commits up to {})",
        unfinished.run_id,
        &unfinished.end_sha[..unfinished.end_sha.len().min(12)]
    );
    Ok((kept_ref, how, Some(note)))
}
