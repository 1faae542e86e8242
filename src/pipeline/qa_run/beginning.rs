//! Beginning a QA run: everything that can refuse it is checked before anything is spent
//! (the PR is open, no unforced re-run over edits of a stage's own comment, no input
//! edited by someone else waiting for approval, fix may push, quota, agent, sandbox),
//! then the run is recorded.

use crate::domain::{
    CommentKind, CommentVersion, Repo, RepoName, Run, SandboxBackend, Stage, VersionOrigin,
};
use crate::github::comment_publishing::{read_back, CommentPlace, ReadBack};
use crate::github::wire::WirePull;
use crate::pipeline::handles::QaRuns;
use crate::pipeline::{Pipeline, PipelineError};
use crate::store::StageRunRequest;

use super::*;

impl Pipeline {
    /// The QA run, started in the mirror with the quota units it takes, and the budget
    /// a full-auto chain holds back (`reservation`) reserved for it.
    async fn start_stage_run(
        &self,
        repo: &Repo,
        pr_number: u64,
        plan: QaPlan,
        setup: &AgentSetup,
        quota_units: u32,
        reservation: Option<f64>,
    ) -> Result<Run, PipelineError> {
        let run = self
            .store
            .stage_runs()
            .start_stage_run(&StageRunRequest {
                repo_id: repo.id,
                pr_number: Some(pr_number),
                feedback_id: self
                    .store
                    .stage_runs()
                    .feedback_of_pull_request(repo.id, pr_number)
                    .await?,
                stage: plan.stage(),
                backend: setup.sandbox.backend(),
                agent_preset: repo.agent_preset.clone(),
                parent_run_id: None,
                quota_units,
            })
            .await?;
        if let Some(usd) = reservation {
            self.store.spend().reserve_budget(run.id, usd).await?;
        }
        Ok(run)
    }

    /// Pull request `pr_number` of `repo` as GitHub has it now, mirrored; refused unless
    /// it is open.
    async fn open_pull_request(
        &self,
        repo: &Repo,
        pr_number: u64,
    ) -> Result<WirePull, PipelineError> {
        let (pull, _) = self
            .github
            .pull_request(&self.store, &repo.name, pr_number)
            .await?;
        self.store
            .pull_requests()
            .mirror_pull_request(repo.id, &pull.mirrored())
            .await?;
        if pull.state() != crate::domain::PullRequestState::Open {
            return Err(PipelineError::PullRequestNotOpen {
                number: pr_number,
                state: pull.state().to_string(),
            });
        }
        Ok(pull)
    }

    /// Refuses a QA run that would overwrite the owner's edit of a comment its stages
    /// write (unless `force`), a fix that cannot push, or a stage whose input is an edit
    /// awaiting the owner's approval.
    async fn check_comments_and_fix(
        &self,
        repo: &Repo,
        plan: QaPlan,
        pr_number: u64,
        force: bool,
        fix_refusal: Option<&str>,
    ) -> Result<(), PipelineError> {
        if !force {
            let mut checked = Vec::new();
            for stage in plan.stages() {
                let kind = stage.comment();
                if checked.contains(&kind) {
                    continue;
                }
                checked.push(kind);
                if let Some(version) = self.current_version(repo, pr_number, kind).await? {
                    if version.origin != VersionOrigin::Agent {
                        return Err(PipelineError::OwnerEdits {
                            stage: stage.stage(),
                            kind,
                            version: version.number,
                        });
                    }
                }
            }
        }
        if let (QaPlan::One(QaStage::Fix), Some(reason)) = (plan, fix_refusal) {
            return Err(PipelineError::FixCannotPush {
                number: pr_number,
                reason: reason.to_owned(),
            });
        }
        if let QaPlan::One(stage) = plan {
            if let Some(kind) = stage.input() {
                if let Some(version) = self.current_version(repo, pr_number, kind).await? {
                    if version.awaits_owner_approval() {
                        return Err(PipelineError::EditAwaitsApproval {
                            stage: stage.stage(),
                            kind,
                            version: version.number,
                            editor: version.written_by(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// A queued QA run (a stage or a chain) made again from its record: its process
    /// stopped while it waited. What could refuse it was checked when it was begun.
    pub(crate) async fn resume_qa(&self, run: Run) -> Result<BegunQa, PipelineError> {
        let plan = QaPlan::of(run.stage).ok_or(PipelineError::NotAQaStage)?;
        let pr_number = run.pr_number.ok_or(PipelineError::NotAQaStage)?;
        let repo = self.store.repositories().repo(run.repo_id).await?;
        let (pull, _) = self
            .github
            .pull_request(&self.store, &repo.name, pr_number)
            .await?;
        let setup = self.agent_setup(&repo, Some(run.backend), None).await?;
        let whose_work = self.whose_work_on(&repo, &pull).await?;
        Ok(BegunQa {
            pipeline: self.clone(),
            repo,
            pull,
            setup,
            plan,
            run,
            whose_work,
        })
    }

    /// The version of the `kind` comment that is on GitHub now, if there is one.
    pub(super) async fn current_version(
        &self,
        repo: &Repo,
        pr_number: u64,
        kind: CommentKind,
    ) -> Result<Option<CommentVersion>, PipelineError> {
        let place = CommentPlace {
            repo,
            pr_number,
            kind,
        };
        Ok(match read_back(&self.github, &self.store, place).await? {
            ReadBack::Present { version, .. } => Some(version),
            ReadBack::Missing { .. } => None,
        })
    }
}

impl QaRuns<'_> {
    /// Checks everything that can refuse the QA run (the PR is open, no unforced re-run
    /// over edits of a stage's own comment, no input edited by someone else waiting for
    /// approval, fix may push, quota, agent, sandbox), then records it. A full-auto run
    /// reserves, in the same step, the quota its stages need.
    pub async fn begin_qa(
        &self,
        repo: &RepoName,
        pr_number: u64,
        stage: Stage,
        options: QaOptions,
    ) -> Result<BegunQa, PipelineError> {
        let pipeline = self.pipeline;
        let plan = QaPlan::of(stage).ok_or(PipelineError::NotAQaStage)?;
        let repo = pipeline.store.repositories().repo_by_name(repo).await?;
        let pull = pipeline.open_pull_request(&repo, pr_number).await?;
        let fix_refusal = fix_push_refusal(&pull, &repo);
        pipeline
            .check_comments_and_fix(
                &repo,
                plan,
                pr_number,
                options.force,
                fix_refusal.as_deref(),
            )
            .await?;
        let whose_work = pipeline.whose_work_on(&repo, &pull).await?;
        let backend = options.backend.unwrap_or(repo.sandbox_backend);
        if let Some(refusal) = strangers_code_here(
            whose_work.strangers_tree.as_deref(),
            backend,
            plan,
            pr_number,
        ) {
            return Err(refusal);
        }
        // A chain's stages each take a unit; fix is not among them when it cannot push.
        let quota_units = match plan {
            QaPlan::One(_) => 1,
            QaPlan::FullAuto if fix_refusal.is_some() => 3,
            QaPlan::FullAuto => 4,
        };
        pipeline
            .store
            .spend()
            .check_quota_left(&repo, quota_units)
            .await?;
        // A chain holds back its stages' run budgets the way it reserves their quota.
        let reservation = pipeline
            .store
            .spend()
            .check_budget_left(
                &repo,
                matches!(plan, QaPlan::FullAuto).then_some(quota_units),
            )
            .await?;
        let setup = pipeline
            .agent_setup(&repo, options.backend, options.timeout)
            .await?;
        let run = pipeline
            .start_stage_run(&repo, pr_number, plan, &setup, quota_units, reservation)
            .await?;
        Ok(BegunQa {
            pipeline: pipeline.clone(),
            repo,
            pull,
            setup,
            plan,
            run,
            whose_work,
        })
    }
}

/// The refusal of a stage on the local backend when the PR holds someone else's work. A
/// stage runs the PR's code (tests do, and an agent may run anything in the tree it
/// reads): on the local backend, a PR with anything of someone else's in it (`strangers`
/// says why) would run that as the owner, with their files and keyring in reach.
fn strangers_code_here(
    strangers: Option<&str>,
    backend: SandboxBackend,
    plan: QaPlan,
    pr_number: u64,
) -> Option<PipelineError> {
    match (strangers, backend) {
        (Some(why), SandboxBackend::Local) => Some(PipelineError::StrangersCodeNeedsSandbox {
            what: format!("{} on PR #{pr_number} ({why})", plan.stage()),
        }),
        _ => None,
    }
}
