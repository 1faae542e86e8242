//! "Write to AGENTS.md": the accepted lessons travel with the repository. Handoff keeps a
//! marked section of the repository's lessons file (AGENTS.md unless the owner names
//! another, CLAUDE.md for one) in step with them through a pull request of its own:
//! opened the first time, updated with a new commit while it is open. The owner's own
//! text in the file is never touched. The section is read back first, as a managed
//! comment is: when it reads otherwise on GitHub than Handoff last wrote it, someone
//! edited it there, and it is kept (and recorded in the history) unless the owner says
//! to replace it.

use crate::pipeline::handles::LessonWork;
use serde::Serialize;

use super::cache_lock::CacheLock;
use super::{Pipeline, PipelineError};
use crate::domain::lesson::lesson_paths;
use crate::domain::lessons_file::{lessons_section, section_of, with_section};
use crate::domain::{PullRequestState, Repo, RepoName};
use crate::github::lessons_pull_request::open_lessons_pull_request;
use crate::github::wire::WirePull;
use crate::pipeline::host_git::pull_head_ref;
use crate::store::LessonsFileWrite;
use std::path::Path;

/// What became of the lessons file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LessonsFileAction {
    /// A new pull request carries the section.
    Opened,
    /// A new commit on the open pull request's branch.
    Updated,
    /// The file already holds the lessons as they are: nothing was pushed.
    InStep,
}

/// How "Write to AGENTS.md" ended.
#[derive(Debug, Clone, Serialize)]
pub struct LessonsFileReport {
    pub action: LessonsFileAction,
    pub path: String,
    pub pr_number: Option<u64>,
    pub pr_url: Option<String>,
    pub commit: Option<String>,
}

fn failed(path: &str, detail: impl std::fmt::Display) -> PipelineError {
    PipelineError::LessonsFile {
        path: path.to_owned(),
        detail: detail.to_string(),
    }
}

impl Pipeline {
    /// The lessons PR, opened unless `open_pull` is one already, and Handoff's write
    /// of the file recorded.
    async fn open_or_update_pull_request(
        &self,
        repo: &Repo,
        path: String,
        section: String,
        branch: String,
        commit: String,
        open_pull: Option<WirePull>,
    ) -> Result<LessonsFileReport, PipelineError> {
        let (pull, action) = match open_pull {
            Some(pull) => (pull, LessonsFileAction::Updated),
            None => (
                open_lessons_pull_request(&self.github, repo, &branch, &path).await?,
                LessonsFileAction::Opened,
            ),
        };
        self.store
            .lessons()
            .record_lessons_file_write(
                repo.id,
                &LessonsFileWrite {
                    path: path.clone(),
                    section,
                    by_handoff: true,
                    pr_number: Some(pull.number),
                    branch: Some(branch),
                    commit_sha: Some(commit.clone()),
                    written_at: self.store.now(),
                },
            )
            .await?;
        Ok(LessonsFileReport {
            action,
            path,
            pr_number: Some(pull.number),
            pr_url: Some(pull.html_url),
            commit: Some(commit),
        })
    }

    /// The open PR the file last went out in, if it is still open.
    async fn pull_request_still_open(
        &self,
        repo: &Repo,
        last: Option<&LessonsFileWrite>,
    ) -> Result<Option<WirePull>, PipelineError> {
        let Some(number) = last.and_then(|write| write.pr_number) else {
            return Ok(None);
        };
        Ok(self
            .github
            .pull_request_if_any(&self.store, &repo.name, number)
            .await?
            .filter(|pull| pull.state() == PullRequestState::Open))
    }

    /// Keeps the owner's own edit of the section (`found`) as a write of theirs, once.
    async fn keep_owners_section(
        &self,
        repo: &Repo,
        path: &str,
        found: String,
        open_pull: Option<&WirePull>,
    ) -> Result<(), PipelineError> {
        let known = self
            .store
            .lessons()
            .last_lessons_file_write(repo.id, false)
            .await?;
        if known.is_none_or(|known| known.by_handoff || known.section != found) {
            self.store
                .lessons()
                .record_lessons_file_write(
                    repo.id,
                    &LessonsFileWrite {
                        path: path.to_owned(),
                        section: found,
                        by_handoff: false,
                        pr_number: open_pull.map(|pull| pull.number),
                        branch: open_pull.map(|pull| pull.head.name.clone()),
                        commit_sha: None,
                        written_at: self.store.now(),
                    },
                )
                .await?;
        }
        Ok(())
    }

    /// Commits `new_text` as `path` on `branch` (from `start`) in a working copy of its
    /// own, and pushes it: to the repository, or the fork its agent branches go to (so
    /// that CI runs the branch without the repository's secrets there too). Returns the
    /// commit.
    async fn commit_and_push(
        &self,
        repo: &Repo,
        cache: &Path,
        start: &str,
        branch: &str,
        path: &str,
        new_text: &str,
    ) -> Result<String, PipelineError> {
        let git = self.host_git();
        let workspace = self.data_dir.join("workspaces").join(format!(
            "lessons-file-{}-{}",
            repo.id.0,
            std::process::id()
        ));
        if workspace.exists() {
            std::fs::remove_dir_all(&workspace).map_err(|error| failed(path, error))?;
        }
        std::fs::create_dir_all(self.data_dir.join("workspaces"))
            .map_err(|error| failed(path, error))?;
        // The repository, or the fork its agent branches go to (so that CI runs the
        // branch without the repository's secrets there too).
        let repository = repo.head_repository();
        let committed = async {
            git.make_working_copy(cache, &workspace, start, branch)
                .await
                .map_err(|error| failed(path, error))?;
            let message = format!(
                "Lessons for agents in {path}\n\nThe lessons the owner accepted in Handoff, in \
                 the marked section of {path}.\n"
            );
            let commit = git
                .commit_one_file(
                    &workspace,
                    path,
                    new_text,
                    &message,
                    (&self.settings.git_name, &self.settings.git_email),
                )
                .await
                .map_err(|error| failed(path, error))?;
            // GitHub's word on the branch first (its default branch, protection,
            // rulesets), as for every push: a guarded branch is not pushed to.
            if let Some(guard) = self
                .github
                .branch_guard(&self.store, repository, branch)
                .await
                .map_err(|error| {
                    failed(
                        path,
                        format!("GitHub could not say whether {branch} may be pushed to ({error})"),
                    )
                })?
            {
                return Err(failed(
                    path,
                    format!("Handoff does not push to {branch}: {guard}; nothing was pushed"),
                ));
            }
            self.store
                .runs()
                .record_handoff_push(repo.id, None, None, &commit)
                .await?;
            git.push(
                &workspace,
                repository,
                "HEAD",
                branch,
                &[repo.default_branch.as_str()],
            )
            .await
            .map_err(|error| failed(path, error))?;
            Ok(commit)
        }
        .await;
        if let Err(error) = std::fs::remove_dir_all(&workspace) {
            tracing::warn!(%error, "the lessons file's working copy could not be removed");
        }
        committed
    }
}

impl LessonWork<'_> {
    /// Brings the lessons file of `repo` in step with its accepted lessons (see the
    /// module's documentation); with `replace_edits`, over an edit of the section made on
    /// GitHub.
    pub async fn write_lessons_file(
        &self,
        repo: &RepoName,
        replace_edits: bool,
    ) -> Result<LessonsFileReport, PipelineError> {
        let pipeline = self.pipeline;
        let repo = pipeline.store.repositories().repo_by_name(repo).await?;
        let settings = pipeline.store.lessons().lesson_settings(repo.id).await?;
        let path = lesson_paths(std::slice::from_ref(&settings.file))
            .ok()
            .and_then(|paths| paths.into_iter().next())
            .ok_or_else(|| failed(&settings.file, "it is not a path inside the repository"))?;
        let section = lessons_section(&pipeline.store.lessons().lessons_of(repo.id).await?);
        let last = pipeline
            .store
            .lessons()
            .last_lessons_file_write(repo.id, true)
            .await?;

        let open_pull = pipeline
            .pull_request_still_open(&repo, last.as_ref())
            .await?;

        let git = pipeline.host_git();
        let cache_root = pipeline.cache_root();
        let (_lock, _) = CacheLock::acquire(&cache_root, &repo.name, async {})
            .await
            .map_err(|error| failed(&path, format!("the repository's cache is locked: {error}")))?;
        // The open PR's head as GitHub keeps it: its branch may live in the fork the
        // repository's agent branches go to.
        let pulls: Vec<u64> = open_pull.iter().map(|pull| pull.number).collect();
        let cache = git
            .update_cache(&cache_root, &repo.name, &pulls)
            .await
            .map_err(|error| failed(&path, error))?;
        let (branch, start) = branch_and_start(open_pull.as_ref(), &repo, pipeline.store.now());
        let current = git
            .file_at(&cache, &start, &path)
            .await
            .map_err(|error| failed(&path, error))?;

        // Read back: the section as it is on GitHub against Handoff's last write.
        let found = current.as_deref().and_then(section_of).map(str::to_owned);
        if edited_on_github(found.as_deref(), last.as_ref(), &section) {
            let found = found.clone().unwrap_or_default();
            pipeline
                .keep_owners_section(&repo, &path, found, open_pull.as_ref())
                .await?;
            if !replace_edits {
                return Err(PipelineError::LessonsFileEdited { path });
            }
        }

        let new_text = with_section(current.as_deref(), &section);
        if current.as_deref() == Some(new_text.as_str()) {
            return Ok(LessonsFileReport {
                action: LessonsFileAction::InStep,
                path,
                pr_number: open_pull.as_ref().map(|pull| pull.number),
                pr_url: open_pull.map(|pull| pull.html_url),
                commit: None,
            });
        }
        let commit = pipeline
            .commit_and_push(&repo, &cache, &start, &branch, &path, &new_text)
            .await?;
        pipeline
            .open_or_update_pull_request(&repo, path, section, branch, commit, open_pull)
            .await
    }
}

/// The branch the file goes out on and where it starts: the open lessons PR's own, or a
/// new branch named for `now` from the base branch.
fn branch_and_start(
    open_pull: Option<&WirePull>,
    repo: &Repo,
    now: chrono::DateTime<chrono::Utc>,
) -> (String, String) {
    match open_pull {
        Some(pull) => (pull.head.name.clone(), pull_head_ref(pull.number)),
        None => (
            format!("handoff/lessons-{}", now.format("%Y%m%d-%H%M%S")),
            format!("refs/heads/{}", repo.default_branch),
        ),
    }
}

/// Whether the section `found` on GitHub is not what Handoff last wrote (`last`), or,
/// before Handoff ever wrote it, not the `section` it would write.
fn edited_on_github(found: Option<&str>, last: Option<&LessonsFileWrite>, section: &str) -> bool {
    match (found, last) {
        (Some(found), Some(last)) => found.trim() != last.section.trim(),
        (Some(found), None) => found.trim() != section.trim(),
        (None, _) => false,
    }
}
