//! A lessons run: the repository's agent, in the same sandbox and pipeline as every
//! other run, reads the owner's corrections since lessons were last drawn (their edits
//! of the agent's PR comments, as diffs, and their follow-up instructions on feedback
//! PRs) and the lessons already accepted, and proposes short rules, each naming the
//! corrections it comes from. Its output is read strictly: missing or malformed output
//! fails the run, as every stage's does. What it proposes reaches no prompt until the
//! owner accepts it. It takes quota and budget like any stage, and is refused before
//! anything is spent when there is no new correction.

use crate::pipeline::handles::LessonWork;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tracing::Instrument as _;

use super::agent_job::{AgentJob, AgentSetup, CopyStart, JobFiles, Stop};
use super::queue_wait::QueueWaitEnd;
use super::reconcile::end_a_run_whose_driving_failed;
use super::run_log::RunLog;
use super::run_supervision::supervise;
use super::{Pipeline, PipelineError};
use crate::domain::lesson::{read_lesson_proposals, Correction, LessonId, LessonState};
use crate::domain::run_event::RunEventKind;
use crate::domain::stage_prompts::{
    default_stage_template, fill_stage_template, StagePromptValues,
};
use crate::domain::{Repo, RepoName, Run, RunFailureCode, RunId, SandboxBackend, Stage};
use crate::store::{RunOutcome, StageRunRequest};

/// What the owner asks for.
#[derive(Debug, Clone, Default)]
pub struct LessonsOptions {
    pub backend: Option<SandboxBackend>,
    pub timeout: Option<Duration>,
}

/// How a lessons run ended.
#[derive(Debug, Clone, Serialize)]
pub struct LessonsReport {
    pub run: Run,
    /// The proposals it recorded (none when it failed).
    pub proposed: Vec<LessonId>,
}

/// A lessons run that was allowed to start and has been recorded.
#[derive(Debug)]
pub struct BegunLessons {
    pipeline: Pipeline,
    repo: Repo,
    setup: AgentSetup,
    corrections: Vec<Correction>,
    pub run: Run,
}

impl Pipeline {
    /// A queued lessons run made again from its record (its process stopped while it
    /// waited).
    pub(crate) async fn resume_lessons(&self, run: Run) -> Result<BegunLessons, PipelineError> {
        let repo = self.store.repositories().repo(run.repo_id).await?;
        let corrections = self.store.lessons().new_corrections(repo.id).await?;
        let setup = self.agent_setup(&repo, Some(run.backend), None).await?;
        Ok(BegunLessons {
            pipeline: self.clone(),
            repo,
            setup,
            corrections,
            run,
        })
    }
}

impl LessonWork<'_> {
    /// Checks everything that can refuse a lessons run on `repo` (a new correction to
    /// learn from, quota, budget, agent, sandbox), then records it.
    pub async fn begin_lessons(
        &self,
        repo: &RepoName,
        options: LessonsOptions,
    ) -> Result<BegunLessons, PipelineError> {
        let repo = self
            .pipeline
            .store
            .repositories()
            .repo_by_name(repo)
            .await?;
        let corrections = self
            .pipeline
            .store
            .lessons()
            .new_corrections(repo.id)
            .await?;
        if corrections.is_empty() {
            return Err(PipelineError::NoNewCorrections {
                repo: repo.name.full_name(),
            });
        }
        let setup = self
            .pipeline
            .one_runs_setup(&repo, options.backend, options.timeout)
            .await?;
        let run = self
            .pipeline
            .store
            .stage_runs()
            .start_stage_run(&StageRunRequest {
                repo_id: repo.id,
                pr_number: None,
                feedback_id: None,
                stage: Stage::Lessons,
                backend: setup.sandbox.backend(),
                agent_preset: repo.agent_preset.clone(),
                parent_run_id: None,
                quota_units: 1,
            })
            .await?;
        Ok(BegunLessons {
            pipeline: self.pipeline.clone(),
            repo,
            setup,
            corrections,
            run,
        })
    }

    /// Lessons runs for the repositories that start them by themselves (after N new
    /// corrections): begun, for the caller to drive. Corrections are counted since the
    /// repository's last lessons run whatever its end, so a run that failed is not
    /// started again and again on the same corrections; a refusal (quota, budget, setup)
    /// is logged and the repository skipped.
    pub async fn begin_due_lessons(&self) -> Result<Vec<BegunLessons>, PipelineError> {
        let mut begun = Vec::new();
        for repo in self.pipeline.store.repositories().repos().await? {
            if repo.disconnected_at.is_some() {
                continue;
            }
            let Some(after) = self
                .pipeline
                .store
                .lessons()
                .lesson_settings(repo.id)
                .await?
                .after_corrections
            else {
                continue;
            };
            let latest = self
                .pipeline
                .store
                .lessons()
                .latest_lessons_run(repo.id)
                .await?;
            if latest.as_ref().is_some_and(|run| run.status.is_active()) {
                continue;
            }
            let since = latest.map(|run| run.created_at);
            let waiting = self
                .pipeline
                .store
                .lessons()
                .corrections_of(repo.id, since)
                .await?
                .len();
            if waiting < after as usize {
                continue;
            }
            match self
                .pipeline
                .lessons()
                .begin_lessons(&repo.name, LessonsOptions::default())
                .await
            {
                Ok(run) => {
                    tracing::info!(repo = %repo.name, run = %run.run_id(), waiting, "lessons are due: a lessons run started");
                    begun.push(run);
                }
                Err(error) => {
                    tracing::info!(repo = %repo.name, %error, "lessons are due, but the lessons run was refused");
                }
            }
        }
        Ok(begun)
    }
}

impl BegunLessons {
    pub fn run_id(&self) -> RunId {
        self.run.id
    }

    /// The repository it runs on.
    pub fn repo_name(&self) -> &RepoName {
        &self.repo.name
    }

    /// Runs the agent to its end and records what it proposed. The run is ended
    /// whatever happens.
    pub async fn drive(mut self) -> Result<LessonsReport, PipelineError> {
        let run_id = self.run.id;
        let driven = async {
            let pipeline = self.pipeline.clone();
            match pipeline
                .wait_for_turn(run_id, &self.repo, &mut self.setup)
                .await?
            {
                QueueWaitEnd::Cancelled => Ok(LessonsReport {
                    run: pipeline.store.runs().run(run_id).await?,
                    proposed: Vec::new(),
                }),
                QueueWaitEnd::Started => self.drive_to_the_end().await,
            }
        }
        .instrument(tracing::info_span!("run", run = %run_id))
        .await;
        if let Err(error) = &driven {
            end_a_run_whose_driving_failed(&self.pipeline.store, run_id, None, error).await;
        }
        driven
    }

    async fn drive_to_the_end(&self) -> Result<LessonsReport, PipelineError> {
        let store = &self.pipeline.store;
        let run_id = self.run.id;
        store.runs().mark_run_running(run_id, None).await?;
        let (cancel_sender, cancel) = watch::channel(false);
        let interval = self.pipeline.settings.heartbeat_interval;
        let _supervision = supervise(store.clone(), run_id, interval, Arc::new(cancel_sender));
        let log = RunLog::new(store.clone(), run_id, self.setup.redactor.clone());
        let workspace = self.pipeline.workspace_of(run_id);
        let job = AgentJob {
            setup: &self.setup,
            log: &log,
            workspace: &workspace,
            repo: &self.repo,
            run_id,
            stage: Stage::Lessons,
            cancel: &cancel,
            // The owner's own corrections, on the base branch.
            strangers_work: None,
        };
        let proposed = self.propose(&job).await;
        if !self.pipeline.settings.keep_workspaces {
            if let Err(error) = std::fs::remove_dir_all(&workspace) {
                tracing::warn!(run = %run_id, %error, "the run's workspace could not be removed");
            }
        }
        let repo = &self.repo.name;
        let (outcome, event, ids) = match proposed {
            Ok((detail, ids)) => {
                log.say(&format!("done: {detail}")).await?;
                (
                    RunOutcome::Succeeded {
                        exit_code: Some(0),
                        end_sha: None,
                        output: Some(detail.clone()),
                    },
                    (
                        RunEventKind::RunSucceeded,
                        format!("lessons on {repo}: {detail}"),
                    ),
                    ids,
                )
            }
            Err(stop) => {
                let outcome = stop.logged_outcome(&log).await?;
                let message = match &outcome {
                    RunOutcome::Failed { message, .. } => {
                        format!("lessons on {repo} failed: {message}")
                    }
                    _ => format!("lessons on {repo} were cancelled"),
                };
                (outcome, (RunEventKind::RunFailed, message), Vec::new())
            }
        };
        self.setup.sandbox.teardown_done(run_id).await;
        store.runs().finish_run(run_id, &outcome).await?;
        store
            .runs()
            .record_run_event(run_id, None, event.0, &event.1)
            .await?;
        Ok(LessonsReport {
            run: store.runs().run(run_id).await?,
            proposed: ids,
        })
    }

    /// The job: a copy of the default branch, the corrections and accepted lessons as
    /// inputs, the agent, its `lessons.json` read and recorded.
    /// What the agent reads: the corrections since lessons were last drawn, and the
    /// lessons accepted so far.
    async fn agent_inputs(&self) -> Result<[(String, String); 2], Stop> {
        let accepted: Vec<String> = self
            .pipeline
            .store
            .lessons()
            .lessons_of(self.repo.id)
            .await?
            .into_iter()
            .filter(|lesson| lesson.state == LessonState::Accepted)
            .map(|lesson| format!("- {}", lesson.rule))
            .collect();
        let corrections = self
            .corrections
            .iter()
            .map(Correction::for_prompt)
            .collect::<Vec<_>>()
            .join("\n");
        Ok([
            ("corrections.md".to_owned(), corrections),
            (
                "lessons.md".to_owned(),
                if accepted.is_empty() {
                    "No lesson is accepted yet.\n".to_owned()
                } else {
                    accepted.join("\n") + "\n"
                },
            ),
        ])
    }

    /// The lessons stage's prompt: the repository's own, or the default, filled in.
    async fn prompt(&self, base: &str) -> Result<String, Stop> {
        let store = &self.pipeline.store;
        let template = match store
            .stage_runs()
            .stage_prompt(self.repo.id, Stage::Lessons)
            .await?
        {
            Some(own) => own,
            None => default_stage_template(Stage::Lessons)
                .unwrap_or_default()
                .to_owned(),
        };
        Ok(fill_stage_template(
            &template,
            &StagePromptValues {
                base,
                instructions: &self.repo.custom_instructions,
                ..StagePromptValues::default()
            },
        ))
    }

    async fn propose(&self, job: &AgentJob<'_>) -> Result<(String, Vec<LessonId>), Stop> {
        let store = &self.pipeline.store;
        let base = self.repo.default_branch.clone();
        let copy = self
            .pipeline
            .prepare_working_copy(
                job,
                CopyStart::Branch {
                    branch: &base,
                    base_for_new: None,
                    pull_request: None,
                    in_fork: None,
                    resume: None,
                },
                None,
            )
            .await?;
        let inputs = self.agent_inputs().await?;
        let prompt = self.prompt(&base).await?;
        job.log
            .say(&format!(
                "{} corrections since lessons were last drawn",
                self.corrections.len()
            ))
            .await?;
        let commit_message = format!("Lessons\n\nHandoff lessons run {}.\n", job.run_id);
        let out = self
            .pipeline
            .run_agent(
                job,
                &copy,
                JobFiles {
                    prompt: &prompt,
                    commit_message: &commit_message,
                    inputs: &inputs,
                },
            )
            .await?;
        let Some(text) = self.setup.read_output(&out.join("lessons.json")) else {
            return Err(Stop::failed(
                RunFailureCode::NoOutput,
                format!(
                    "the agent wrote no lessons (out/lessons.json is missing or empty); see the log of run {}",
                    job.run_id
                ),
            ));
        };
        let given: Vec<_> = self.corrections.iter().map(|c| c.id).collect();
        let proposals = read_lesson_proposals(&text, &given).map_err(|error| {
            Stop::failed(
                RunFailureCode::BadLessons,
                format!("the agent's lessons were refused: {error}"),
            )
        })?;
        let ids = store
            .lessons()
            .record_lesson_proposals(self.repo.id, job.run_id, &proposals)
            .await?;
        let detail = match ids.len() {
            0 => format!(
                "{} corrections read; no new lesson proposed",
                self.corrections.len()
            ),
            1 => "1 lesson proposed: accept, edit or reject it".to_owned(),
            n => format!("{n} lessons proposed: accept, edit or reject them"),
        };
        Ok((detail, ids))
    }
}
