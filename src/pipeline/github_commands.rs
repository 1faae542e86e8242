//! The owner's `@handoff` commands carried out: after a sync recorded them, each is
//! claimed (in the database first, so one process of this data folder has it; then on
//! GitHub, so one installation of the owner's has it), marked taken with a reaction,
//! and done — an Update PR or a first run with the owner's words as a follow-up, a QA
//! stage or the whole chain on the PR, or a stop of the item's running run. When the run
//! ends (or the command cannot be done) Handoff answers on the thread with the result
//! and its cost. Nobody else's `@handoff` reaches here: the sync keeps a visitor's as a
//! candidate the owner may include.

use super::code_run::{BegunCodeRun, CodeRunOptions};
use super::qa_run::{BegunQa, QaOptions};
use super::{Pipeline, PipelineError};
use crate::domain::github_command::CommandAnswer;
use crate::domain::{
    CommandAsk, CommandState, FeedbackId, GithubCommand, Run, RunId, RunStatus, Stage,
};
use crate::github::command_claims::{
    claim_on_thread, post_answer, post_claim, settle_claim, ClaimSettled, TAKEN_REACTION,
};
use crate::github::comment_authorship::SignedInAccount;
use crate::pipeline::handles::GithubCommandWork;
use crate::store::{this_machine, RunFilter};

/// A run a command began, for the caller to drive.
#[derive(Debug)]
pub enum CommandRun {
    Code(Box<BegunCodeRun>),
    Qa(Box<BegunQa>),
}

/// A command's run, begun; driving it answers the command when it ends.
#[derive(Debug)]
pub struct BegunCommandRun {
    pipeline: Pipeline,
    pub command: GithubCommand,
    run: CommandRun,
}

impl BegunCommandRun {
    pub fn run_id(&self) -> RunId {
        match &self.run {
            CommandRun::Code(run) => run.run_id(),
            CommandRun::Qa(run) => run.run_id(),
        }
    }

    /// Drives the run to its end, then writes the command's answer on GitHub.
    pub async fn drive(self) -> Result<Run, PipelineError> {
        let run_id = self.run_id();
        match self.run {
            CommandRun::Code(run) => {
                run.drive().await?;
            }
            CommandRun::Qa(run) => {
                run.drive().await?;
            }
        }
        if let Err(error) = self
            .pipeline
            .github_commands()
            .answer_github_commands()
            .await
        {
            tracing::warn!(run = %run_id, %error, "a @handoff command's answer could not be written yet");
        }
        Ok(self.pipeline.store.runs().run(run_id).await?)
    }
}

/// What carrying out the commands seen did.
#[derive(Debug, Default)]
pub struct GithubCommandsBegun {
    /// The runs begun (queued), for the caller to drive.
    pub runs: Vec<BegunCommandRun>,
    /// Every command decided now, as it stands after.
    pub decided: Vec<GithubCommand>,
}

/// What a command came to when carried out.
enum Carried {
    Run(CommandRun),
    /// Done at once (a stop): what to answer.
    Done(String),
}

impl Pipeline {
    /// Claims `command` for this installation. False when it is not this one's to carry
    /// out: claimed already, taken elsewhere (decided so), or not claimable now (tried
    /// again at the next sync).
    async fn claim_here(
        &self,
        command: &GithubCommand,
        owner: &SignedInAccount,
        installation: &str,
        begun: &mut GithubCommandsBegun,
    ) -> Result<bool, PipelineError> {
        if !self
            .store
            .github_commands()
            .move_github_command(
                command.id,
                CommandState::Seen,
                CommandState::Claiming,
                None,
                None,
            )
            .await?
        {
            return Ok(false);
        }
        match self.claim(command, owner, installation).await {
            Ok(None) => Ok(true),
            Ok(Some(outcome)) => {
                tracing::info!(command = command.comment_id, %outcome, "a @handoff command was taken elsewhere");
                let settled = self
                    .settle(command, CommandState::TakenElsewhere, Some(&outcome), None)
                    .await?;
                begun.decided.push(settled);
                Ok(false)
            }
            Err(error) => {
                // Tried again at the next sync.
                tracing::warn!(command = command.comment_id, %error, "a @handoff command could not be claimed");
                self.store
                    .github_commands()
                    .move_github_command(
                        command.id,
                        CommandState::Claiming,
                        CommandState::Seen,
                        None,
                        None,
                    )
                    .await?;
                Ok(false)
            }
        }
    }

    /// Moves a claimed `command` to `state`, with what was said and the run it began,
    /// and returns it as it is now.
    async fn settle(
        &self,
        command: &GithubCommand,
        state: CommandState,
        said: Option<&str>,
        run_id: Option<RunId>,
    ) -> Result<GithubCommand, PipelineError> {
        let commands = self.store.github_commands();
        commands
            .move_github_command(command.id, CommandState::Claiming, state, said, run_id)
            .await?;
        Ok(commands.github_command(command.id).await?)
    }

    /// Carries out a claimed `command`: a run begun, a thing done, or a refusal, each
    /// recorded with the command.
    async fn take_claimed(
        &self,
        command: &GithubCommand,
        begun: &mut GithubCommandsBegun,
    ) -> Result<(), PipelineError> {
        let repo = self.store.repositories().repo(command.repo_id).await?;
        if let Err(error) = self
            .github
            .react_to_issue_comment(&repo.name, command.comment_id, TAKEN_REACTION)
            .await
        {
            tracing::warn!(command = command.comment_id, %error, "the taken reaction could not be added");
        }
        match self.carry_out(command).await {
            Ok(Carried::Run(run)) => {
                let run_id = match &run {
                    CommandRun::Code(run) => run.run_id(),
                    CommandRun::Qa(run) => run.run_id(),
                };
                tracing::info!(command = command.comment_id, run = %run_id, ask = command.ask.word(), "a @handoff command began a run");
                let command = self
                    .settle(command, CommandState::Taken, None, Some(run_id))
                    .await?;
                begun.decided.push(command.clone());
                begun.runs.push(BegunCommandRun {
                    pipeline: self.clone(),
                    command,
                    run,
                });
            }
            Ok(Carried::Done(said)) => {
                let settled = self
                    .settle(command, CommandState::Taken, Some(&said), None)
                    .await?;
                begun.decided.push(settled);
            }
            Err(error) => {
                let refusal = format!("Handoff could not do this: {error}");
                tracing::info!(command = command.comment_id, %refusal, "a @handoff command was refused");
                let settled = self
                    .settle(command, CommandState::Refused, Some(&refusal), None)
                    .await?;
                begun.decided.push(settled);
            }
        }
        Ok(())
    }

    /// Claims `command` on GitHub for this installation (see `command_claims`): `None`
    /// when it is this installation's to carry out, else why it is not.
    async fn claim(
        &self,
        command: &GithubCommand,
        owner: &SignedInAccount,
        installation: &str,
    ) -> Result<Option<String>, PipelineError> {
        let repo = self.store.repositories().repo(command.repo_id).await?;
        match claim_on_thread(&self.github, &self.store, owner, &repo.name, command).await? {
            Some((_, earlier)) if earlier.installation != installation => {
                return Ok(Some(format!(
                    "taken by another installation ({})",
                    earlier.installation
                )));
            }
            // This installation claimed it before, and stopped before it went on.
            Some((claim, _)) => {
                self.store
                    .github_commands()
                    .set_github_command_claim(command.id, Some(claim))
                    .await?;
                return Ok(None);
            }
            None => {}
        }
        // A stop is claimed only where something of the item runs: the installation
        // that drives the run is the one that can stop it.
        if command.ask == CommandAsk::Stop
            && self.active_run_of(command.feedback_id).await?.is_none()
        {
            return Ok(Some(
                "left to another installation: nothing of the item runs on this one".to_owned(),
            ));
        }
        let claim = post_claim(
            &self.github,
            &repo.name,
            command,
            installation,
            &this_machine(),
        )
        .await?;
        self.store
            .github_commands()
            .set_github_command_claim(command.id, Some(claim))
            .await?;
        let settled = settle_claim(
            &self.github,
            &self.store,
            owner,
            &repo.name,
            command,
            installation,
            claim,
        )
        .await?;
        Ok(match settled {
            ClaimSettled::Won => None,
            ClaimSettled::Lost { installation } => {
                Some(format!("taken by another installation ({installation})"))
            }
        })
    }

    /// The item's active run (the top of a chain), if one goes.
    async fn active_run_of(&self, feedback_id: FeedbackId) -> Result<Option<Run>, PipelineError> {
        Ok(self
            .store
            .runs()
            .runs(&RunFilter {
                feedback_id: Some(feedback_id),
                active_only: true,
                limit: None,
            })
            .await?
            .into_iter()
            .find(|run| run.parent_run_id.is_none()))
    }

    async fn carry_out(&self, command: &GithubCommand) -> Result<Carried, PipelineError> {
        let item = self.store.feedback().feedback(command.feedback_id).await?;
        match &command.ask {
            CommandAsk::Stop => match self.active_run_of(item.id).await? {
                Some(run) => {
                    self.run_queue().cancel_run(run.id).await?;
                    Ok(Carried::Done(format!(
                        "Handoff stopped run {} ({}).",
                        run.id, run.stage
                    )))
                }
                None => Ok(Carried::Done(
                    "Nothing of this item was running: there was nothing to stop.".to_owned(),
                )),
            },
            CommandAsk::Instructions(text) => {
                let run = self
                    .code_runs()
                    .begin_code_run(
                        item.id,
                        CodeRunOptions {
                            instructions: Some(text.clone()),
                            ..CodeRunOptions::default()
                        },
                    )
                    .await?;
                Ok(Carried::Run(CommandRun::Code(Box::new(run))))
            }
            CommandAsk::Stage(stage) => {
                let Some(pr_number) = item.pr_number else {
                    return Err(PipelineError::CommandNeedsPullRequest { stage: *stage });
                };
                let repo = self.store.repositories().repo(item.repo_id).await?;
                let run = self
                    .qa_runs()
                    .begin_qa(&repo.name, pr_number, *stage, QaOptions::default())
                    .await?;
                Ok(Carried::Run(CommandRun::Qa(Box::new(run))))
            }
        }
    }

    /// How `run` ended, with its cost, in words for the command's thread; and the cost.
    async fn run_answer(&self, run: &Run) -> Result<(String, f64), PipelineError> {
        let mut cost = run.llm_cost_usd.unwrap_or_default();
        if run.stage == Stage::FullAuto {
            let stages = self
                .store
                .runs()
                .runs(&RunFilter {
                    feedback_id: run.feedback_id,
                    active_only: false,
                    limit: None,
                })
                .await?;
            cost += stages
                .iter()
                .filter(|stage| stage.parent_run_id == Some(run.id))
                .filter_map(|stage| stage.llm_cost_usd)
                .sum::<f64>();
        }
        let what = match run.stage {
            Stage::Code => "The run".to_owned(),
            Stage::FullAuto => "The QA chain".to_owned(),
            stage => format!("The {stage} stage"),
        };
        // A first run's PR is known from its item once the run opened it.
        let pr_number = match (run.pr_number, run.feedback_id) {
            (Some(number), _) => Some(number),
            (None, Some(item)) => self.store.feedback().feedback(item).await?.pr_number,
            (None, None) => None,
        };
        let how = match run.status {
            RunStatus::Succeeded => match pr_number {
                Some(number) if run.stage == Stage::Code => format!("succeeded: PR #{number}"),
                _ => "succeeded".to_owned(),
            },
            RunStatus::Failed => format!(
                "failed: {}",
                run.failure_message
                    .as_deref()
                    .unwrap_or("no reason recorded")
            ),
            RunStatus::Cancelled => "was cancelled".to_owned(),
            RunStatus::Queued | RunStatus::Running => "is still going".to_owned(),
        };
        Ok((
            format!("{what} (run {}) {how}. Cost: ${cost:.2}.", run.id),
            cost,
        ))
    }
}

impl GithubCommandWork<'_> {
    /// Claims and carries out every command the syncs recorded and nobody took yet.
    pub async fn begin_github_commands(&self) -> Result<GithubCommandsBegun, PipelineError> {
        let mut begun = GithubCommandsBegun::default();
        let seen = self
            .pipeline
            .store
            .github_commands()
            .github_commands_in(CommandState::Seen)
            .await?;
        if seen.is_empty() {
            // Answers still owed (a run whose process ended before it answered, an
            // answer GitHub did not take) go out at every sync, new commands or not.
            self.pipeline
                .github_commands()
                .answer_github_commands()
                .await?;
            return Ok(begun);
        }
        let owner = SignedInAccount::of(&self.pipeline.github, &self.pipeline.store).await?;
        let installation = self.pipeline.store.settings().installation_id().await?;
        for command in seen {
            if self
                .pipeline
                .claim_here(&command, &owner, &installation, &mut begun)
                .await?
            {
                self.pipeline.take_claimed(&command, &mut begun).await?;
            }
        }
        self.pipeline
            .github_commands()
            .answer_github_commands()
            .await?;
        Ok(begun)
    }

    /// Answers, on their threads, the commands whose run ended and those refused. Each
    /// answer is written once: the command is moved to answered before it is posted
    /// (and back, when posting fails, to be tried at the next sync).
    pub async fn answer_github_commands(&self) -> Result<u32, PipelineError> {
        let mut answered = 0;
        let waiting = [CommandState::Taken, CommandState::Refused];
        let installation = self.pipeline.store.settings().installation_id().await?;
        for from in waiting {
            for command in self
                .pipeline
                .store
                .github_commands()
                .github_commands_in(from)
                .await?
            {
                let mut answer = CommandAnswer {
                    command_comment_id: command.comment_id,
                    installation: installation.clone(),
                    run_id: None,
                    cost_usd: None,
                };
                let text = match (from, command.run_id) {
                    (CommandState::Taken, Some(run_id)) => {
                        let run = self.pipeline.store.runs().run(run_id).await?;
                        if run.status.is_active() {
                            continue;
                        }
                        let (text, cost) = self.pipeline.run_answer(&run).await?;
                        answer.run_id = u64::try_from(run.id.0).ok();
                        answer.cost_usd = Some(cost);
                        text
                    }
                    _ => command.outcome.clone().unwrap_or_default(),
                };
                if !self
                    .pipeline
                    .store
                    .github_commands()
                    .move_github_command(command.id, from, CommandState::Answered, None, None)
                    .await?
                {
                    continue;
                }
                let repo = self
                    .pipeline
                    .store
                    .repositories()
                    .repo(command.repo_id)
                    .await?;
                match post_answer(
                    &self.pipeline.github,
                    &repo.name,
                    &command,
                    &answer,
                    &text,
                    &this_machine(),
                )
                .await
                {
                    Ok(_) => answered += 1,
                    Err(error) => {
                        tracing::warn!(command = command.comment_id, %error, "a @handoff command's answer could not be posted");
                        self.pipeline
                            .store
                            .github_commands()
                            .move_github_command(
                                command.id,
                                CommandState::Answered,
                                from,
                                None,
                                None,
                            )
                            .await?;
                    }
                }
            }
        }
        Ok(answered)
    }
}
