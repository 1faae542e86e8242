//! The job run in the sandbox: its files written (the prompt, with the owner's standing
//! lessons at its end, inputs, commit message, script), its log recorded as it comes,
//! and how it ended (done, cancelled, timed out, refused output, a failing exit) turned
//! into the run's outcome.

use std::path::PathBuf;

use tokio::sync::mpsc;
use tokio::sync::watch;

use crate::domain::call_reservation::CallRefusal;
use crate::domain::model_prices::PriceTable;
use crate::sandbox::output_limits::OutputRefused;
use crate::sandbox::SandboxEvent;
use crate::store::spend_ledger::LedgerRun;
use crate::store::Store;

use crate::domain::agent_presets::{AgentChoice, TreeOwner};
use crate::domain::test_setting::TestSetting;
use crate::domain::RunFailureCode;
use crate::domain::SandboxBackend;
use crate::pipeline::agent_failure::agent_error_of;
use crate::pipeline::job_script::{
    JobScript, AGENT_OUTPUT_TAIL, KEPT_COPY_UNUSABLE_EXIT, KEPT_COPY_UNUSABLE_MARK,
};
use crate::pipeline::kept_copy::CopySteps;

use super::job_spend::{meter_lost, JobBudget};
use super::reported_metering::meter_reports;
use crate::pipeline::run_log::record_sandbox_events;
use crate::pipeline::Pipeline;
use crate::sandbox::output_limits::check_output_folder;
use crate::sandbox::{JobControl, SandboxEnd, SandboxJob};

use super::*;

impl Pipeline {
    /// Writes the job's files and runs it in the sandbox, recording its log; returns the
    /// `out/` folder. A cancel, a timeout or a non-zero exit stops the run.
    pub(crate) async fn run_agent(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        files: JobFiles<'_>,
    ) -> Result<PathBuf, Stop> {
        let AgentJob {
            setup,
            log,
            workspace,
            run_id,
            cancel,
            strangers_work,
            ..
        } = *job;
        let cancel = cancel.clone();
        let store = &self.store;
        let JobBudget {
            budgets,
            key: agent_key,
            ledger_run,
            prices,
        } = self.prepare_the_job(job, copy, files).await?;

        say_where_it_runs(log, setup, strangers_work).await?;
        let (events, receiver) = mpsc::unbounded_channel();
        let recorder = tokio::spawn(record_sandbox_events(
            store.clone(),
            run_id,
            setup.redactor.clone(),
            receiver,
        ));
        let sandbox_job = self.sandbox_job(job, copy, agent_key.clone());
        let (control, reported) =
            job_control(store, log, setup, ledger_run, prices, events, cancel).await?;
        let end = setup.sandbox.run(&sandbox_job, control).await;
        let reported_reached = budget_reported_reached(reported).await;
        let recorded = recorder
            .await
            .map_err(|error| Stop::failed(RunFailureCode::Log, error.to_string()));
        let out = workspace.join("out");
        // Nothing of out/ is read before it is known to be within its caps, nor after a
        // run that did not end by itself.
        let ended_by_itself = matches!(end, Ok(SandboxEnd::Exited(_)));
        let within_caps = check_output_folder(&out, &self.settings.limits.output);
        // What the agent spent stays on the run however it ended: cancelled, timed out,
        // its sandbox broken, or its budget reached.
        let spent = self
            .record_job_spend(
                job,
                agent_key.as_ref(),
                &budgets,
                &out,
                ended_by_itself && within_caps.is_ok(),
            )
            .await;
        recorded??;
        if let Some(stop) = stopped_by_spend(agent_key.as_ref(), reported_reached) {
            spent?;
            return Err(stop);
        }
        let end = end.map_err(|error| Stop::failed(RunFailureCode::Sandbox, error.to_string()))?;
        check_the_kept_copy(copy, setup, &end, workspace)?;
        let see_log = format!("see the log of run {run_id}");
        let code = exit_code(end, setup, &see_log)?;
        if let Err(Stop::Failed {
            code: RunFailureCode::BudgetReached,
            ..
        }) = &spent
        {
            if within_caps.is_ok() {
                self.keep_unfinished_work(job, copy, &out).await?;
            }
        }
        spent?;
        output_of_exit(code, within_caps, setup, out, &see_log)
    }

    /// The job's budget, its files written and its start recorded.
    async fn prepare_the_job(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        files: JobFiles<'_>,
    ) -> Result<JobBudget, Stop> {
        let test_settings = self.test_settings_of(job).await?;
        let job_script = self.job_script(job, copy, &test_settings);
        let budget = self.budget_the_job(job).await?;
        let prompt = self.with_standing_lessons(job, copy, files.prompt).await?;
        write_job_files(&job.workspace.join("handoff"), &prompt, &files, &job_script)?;
        self.store
            .runs()
            .record_run_start(job.run_id, &copy.branch, &copy.start_sha, &prompt)
            .await?;
        Ok(budget)
    }

    /// The repository's test-only settings the job's sandbox is given, said by name in
    /// the log: none when the tree holds what someone other than the owner wrote, which
    /// could carry them off.
    async fn test_settings_of(&self, job: &AgentJob<'_>) -> Result<Vec<TestSetting>, Stop> {
        let settings = self
            .store
            .test_settings()
            .test_settings(job.repo.id)
            .await?;
        if settings.is_empty() {
            return Ok(settings);
        }
        let names = settings
            .iter()
            .map(|setting| setting.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(why) = job.strangers_work {
            job.log
                .say(&format!(
                    "test-only settings withheld ({names}): the tree holds what someone \
                     other than the owner wrote ({why})"
                ))
                .await?;
            return Ok(Vec::new());
        }
        job.log
            .say(&format!("test-only settings set in the sandbox: {names}"))
            .await?;
        Ok(settings)
    }

    /// The job the sandbox runs: the workspace, the item's kept copy, the key, the
    /// time limit and the output's limits.
    fn sandbox_job(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        agent_key: Option<ForwardedKey>,
    ) -> SandboxJob {
        SandboxJob {
            run_id: job.run_id,
            workspace: job.workspace.to_owned(),
            kept_copy: copy.kept.as_ref().map(|kept| kept.feedback_id),
            agent_key,
            timeout: job.setup.timeout,
            limits: self.settings.limits,
        }
    }

    /// The job's script: what the sandbox runs, from the working copy to the agent's
    /// commits. The agent's own configuration in the tree is switched off when the tree
    /// holds someone else's work.
    fn job_script(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        test_settings: &[TestSetting],
    ) -> String {
        let setup = job.setup;
        let tree = match job.strangers_work {
            Some(_) => TreeOwner::Stranger,
            None => TreeOwner::Owner,
        };
        let agent_command = setup.agent.command_in(job.stage, tree);
        // The test-only settings first: the preset's own switches come after and win.
        let agent_environment: Vec<(&str, &str)> = test_settings
            .iter()
            .map(|setting| (setting.name.as_str(), setting.value.as_str()))
            .chain(setup.agent.environment_in(tree))
            .collect();
        JobScript {
            run_id: job.run_id,
            copy_steps: &copy.steps,
            branch: &copy.branch,
            stage: job.stage,
            agent_command: &agent_command,
            agent_environment: &agent_environment,
            agent_scratch_files: setup.agent.scratch_files(),
            start_sha: &copy.start_sha,
            checkout_sha: &copy.checkout_sha,
            git_name: &self.settings.git_name,
            git_email: &self.settings.git_email,
        }
        .render()
    }
}
/// The budget the agent's reports reached while it ran, if they did.
async fn budget_reported_reached(
    reported: Option<tokio::task::JoinHandle<Option<CallRefusal>>>,
) -> Option<CallRefusal> {
    match reported {
        Some(reached) => reached.await.unwrap_or_else(|error| {
            tracing::warn!(%error, "the reading of the agent's reported spend stopped");
            None
        }),
        None => None,
    }
}

/// How spend stopped the run, if it did. A run whose meter stopped seeing its calls (its
/// gate stopped) says so first; then a budget the agent's reports reached.
fn stopped_by_spend(
    agent_key: Option<&ForwardedKey>,
    reported_reached: Option<CallRefusal>,
) -> Option<Stop> {
    if let Some(why) = agent_key.and_then(|key| key.meter.lost()) {
        return Some(meter_lost(&why));
    }
    reported_reached.map(|reached| {
        Stop::failed(
            RunFailureCode::BudgetReached,
            format!(
                "budget reached, as the agent reported its spend: {}; the sandbox was \
                 ended and nothing was pushed",
                reached.as_reached()
            ),
        )
    })
}

/// The agent's output folder after it exited with `code`: read only when within its
/// caps. A failure carries the agent's own account of it.
fn output_of_exit(
    code: i64,
    within_caps: Result<(), OutputRefused>,
    setup: &AgentSetup,
    out: PathBuf,
    see_log: &str,
) -> Result<PathBuf, Stop> {
    if code == 0 {
        within_caps.map_err(|refused| {
            Stop::failed(
                RunFailureCode::OutputTooLarge,
                format!("the agent's output was refused: {refused}; {see_log}"),
            )
        })?;
        return Ok(out);
    }
    let reason = within_caps
        .ok()
        .and_then(|()| setup.read_output(&out.join(AGENT_OUTPUT_TAIL)))
        .and_then(|tail| agent_error_of(&tail))
        .map_or_else(String::new, |reason| format!(": {reason}"));
    Err(Stop::failed(
        RunFailureCode::AgentFailed,
        format!("the agent exited with code {code}{reason}; {see_log}"),
    ))
}

/// The job's files in the workspace's `handoff` folder: the prompt, the commit message,
/// the script and the inputs.
fn write_job_files(
    handoff: &Path,
    prompt: &str,
    files: &JobFiles<'_>,
    job_script: &str,
) -> Result<(), Stop> {
    let write = |path: PathBuf, text: &str| {
        std::fs::write(path, text)
            .map_err(|error| Stop::failed(RunFailureCode::Workspace, error.to_string()))
    };
    write(handoff.join("prompt.md"), prompt)?;
    write(handoff.join("commit-message.txt"), files.commit_message)?;
    write(handoff.join("job.sh"), job_script)?;
    for (name, text) in files.inputs {
        write(handoff.join("inputs").join(name), text)?;
    }
    Ok(())
}

/// Says in the log where the agent runs, and refuses to run someone else's work as the
/// owner: the last word before anything of the tree runs, whatever began the run.
async fn say_where_it_runs(
    log: &RunLog,
    setup: &AgentSetup,
    strangers_work: Option<&str>,
) -> Result<(), Stop> {
    log.say(&format!(
        "starting the {} sandbox ({} limit)",
        setup.sandbox.backend(),
        humanize(setup.timeout)
    ))
    .await?;
    if let Some(why) = strangers_work {
        // The last word before anything of the tree runs: whatever began the run,
        // someone else's code never runs as the owner.
        if setup.sandbox.backend() == SandboxBackend::Local {
            return Err(Stop::failed(
                RunFailureCode::NeedsSandbox,
                format!(
                    "the run would work on what someone other than you wrote ({why}), \
                     as you, on the local backend: nothing ran; run it in a sandbox \
                     (Docker or E2B)"
                ),
            ));
        }
        log.say(&match &setup.agent {
            AgentChoice::Preset(preset) => format!(
                "the tree holds what someone other than the owner wrote ({why}): \
                 {} starts with the tree's own agent configuration switched off",
                preset.name
            ),
            AgentChoice::Custom(_) => format!(
                "warning: the tree holds what someone other than the owner wrote \
                 ({why}), and a custom command's own switches are unknown to Handoff: \
                 whatever configuration the tree holds for it, it may read"
            ),
        })
        .await?;
    }
    if setup.sandbox.backend() == SandboxBackend::Local {
        log.say(
            "warning: the local backend is no sandbox: the agent runs as you, with your \
             files, keyring and network in reach (a development choice this repository \
             confirmed)",
        )
        .await?;
    }
    Ok(())
}

/// How the job is followed and stopped. Where no forwarder sees the calls (E2B), the
/// agent's own reports are metered as they come, and end the sandbox once a budget is
/// spent: then the budget reached, if it is, comes back at the end.
async fn job_control(
    store: &Store,
    log: &RunLog,
    setup: &AgentSetup,
    ledger_run: LedgerRun,
    prices: PriceTable,
    events: mpsc::UnboundedSender<SandboxEvent>,
    cancel: watch::Receiver<bool>,
) -> Result<
    (
        JobControl,
        Option<tokio::task::JoinHandle<Option<CallRefusal>>>,
    ),
    Stop,
> {
    Ok(if setup.sandbox.backend() == SandboxBackend::E2b {
        log.say(
            "spend: no forwarder of Handoff's meters a run on E2B (its egress rule \
                 adds the key): its spend is what the agent reports as it runs, and the \
                 sandbox is ended once a budget is spent",
        )
        .await?;
        let metering = meter_reports(
            store.clone(),
            ledger_run,
            prices,
            log.clone(),
            events,
            cancel.clone(),
        );
        let control = JobControl {
            events: metering.events.clone(),
            cancel: metering.cancel.clone(),
        };
        (control, Some(metering.reached))
    } else {
        (JobControl { events, cancel }, None)
    })
}

/// Refuses a run whose kept copy could not be brought to the branch's tip; otherwise,
/// whatever the agent did, the copy holds the start now.
fn check_the_kept_copy(
    copy: &WorkingCopy,
    setup: &AgentSetup,
    end: &SandboxEnd,
    workspace: &Path,
) -> Result<(), Stop> {
    if let Some(kept) = &copy.kept {
        let refused = matches!(copy.steps, CopySteps::RefreshKept { .. })
            && *end == SandboxEnd::Exited(KEPT_COPY_UNUSABLE_EXIT)
            && workspace.join("out").join(KEPT_COPY_UNUSABLE_MARK).exists();
        if refused {
            return Err(Stop::failed(
                RunFailureCode::KeptCopyUnusable,
                "the item's kept working copy could not be brought to the branch's tip",
            ));
        }
        // Whatever the agent did, the copy holds the start now.
        if let Err(error) = kept.remember(
            setup.sandbox.backend(),
            &[&copy.start_sha, &copy.checkout_sha],
        ) {
            tracing::warn!(item = %kept.feedback_id, %error, "the kept copy's record cannot be written; the next run makes a fresh copy");
        }
    }
    Ok(())
}

/// The agent's exit code, or how the run was stopped before it exited.
fn exit_code(end: SandboxEnd, setup: &AgentSetup, see_log: &str) -> Result<i64, Stop> {
    match end {
        SandboxEnd::Cancelled => Err(Stop::Cancelled),
        SandboxEnd::TimedOut => Err(Stop::failed(
            RunFailureCode::TimedOut,
            format!(
                "the run took longer than {} and was stopped; {see_log}",
                humanize(setup.timeout)
            ),
        )),
        SandboxEnd::Exited(code) => Ok(code),
    }
}
