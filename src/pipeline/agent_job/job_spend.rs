//! What a job may spend and what it spent: the budgets checked before its sandbox
//! starts, the key handed to the sandbox with the job's limit on its meter, and, once
//! the agent has ended, the spend recorded: metered by the key forwarder where one
//! stood, else as the agent reported it.

use std::path::Path;

use super::{unfinished_work_ref, AgentJob, Stop, UnfinishedWork, WorkingCopy};
use crate::domain::agent_step::AgentStep;
use crate::domain::budgets::{dollars, Budgets};
use crate::domain::call_reservation::{CallBudgets, PlanBudget};
use crate::domain::model_prices::PriceTable;
use crate::domain::{FeedbackId, PaidWith, RunFailureCode, SandboxBackend, SpendSource, Stage};
use crate::pipeline::spend_ledger::StoreLedger;
use crate::pipeline::Pipeline;
use crate::sandbox::key_forwarding::ForwardedKey;
use crate::secrets::Redactor;
use crate::store::spend::{RunSpend, BUDGET_NOTE};
use crate::store::spend_ledger::LedgerRun;
use crate::store::RunFilter;

/// `steps` with every secret of the run and the job's placeholder scrubbed out of their
/// texts: what a model wrote or asked a tool to do may quote either.
fn scrubbed_steps(steps: Vec<AgentStep>, redactor: &Redactor, placeholder: &str) -> Vec<AgentStep> {
    steps
        .into_iter()
        .map(|step| {
            step.scrubbed(|text| redactor.redact(text).replace(placeholder, "[placeholder]"))
        })
        .collect()
}

/// How a run ends whose meter stopped seeing its model calls, for `why`.
pub(crate) fn meter_lost(why: &str) -> Stop {
    Stop::failed(
        RunFailureCode::Sandbox,
        format!(
            "the run's meter stopped seeing its model calls ({why}); what they were charged \
             up to then is recorded"
        ),
    )
}

/// What a job may spend, found before its sandbox starts.
pub(crate) struct JobBudget {
    pub budgets: Budgets,
    /// The job's key, its meter reserving each call in the ledger.
    pub key: Option<ForwardedKey>,
    /// The job's place in the ledger, for calls no forwarder sees.
    pub ledger_run: LedgerRun,
    pub prices: PriceTable,
}

impl Pipeline {
    /// The job's budgets; a run whose repository month or day is spent stops here,
    /// before any sandbox starts. Also the job's key, whose meter holds its limit.
    pub(crate) async fn budget_the_job(&self, job: &AgentJob<'_>) -> Result<JobBudget, Stop> {
        let store = &self.store;
        let repo = store.repositories().repo(job.repo.id).await?;
        let budgets = store.spend().budgets_for(&repo).await?;
        // A stage of a full-auto chain may use what its chain holds back.
        let own_chain = store.runs().run(job.run_id).await?.parent_run_id;
        let before = store
            .spend()
            .committed_so_far(repo.id, store.now(), own_chain)
            .await?;
        budgets
            .check_before_run(&repo.name.full_name(), before)
            .map_err(|refusal| Stop::failed(RunFailureCode::BudgetSpent, refusal.to_string()))?;
        let prices = store.spend().price_table().await?;
        let name = repo.name.full_name();
        let plan_credit = self.plan_credit_of_the_job(job).await?;
        // Every model call is reserved in the ledger every run shares: the run's own
        // budget, its repository's month and the day (and the plan's month, for a run
        // the owner's Claude plan pays for) hold whatever runs at once.
        let ledger_run = LedgerRun {
            run_id: job.run_id,
            repo_id: repo.id,
            own_chain,
            budgets: CallBudgets {
                run: budgets.run,
                repo: name,
                repo_month_usd: budgets.repo_month_usd,
                day_usd: budgets.day_usd,
                plan_credit,
            },
        };
        let ledger = StoreLedger::for_run(store.clone(), ledger_run.clone());
        let key = job
            .setup
            .agent_key
            .as_ref()
            .map(|key| key.renewed_with(budgets.run, prices.clone(), Some(ledger)));
        // Only a forwarder of Handoff's sees a call before it leaves; on E2B the sandbox's
        // egress rule adds the key, and calls are counted once the agent reports them.
        let on_e2b = job.setup.sandbox.backend() == SandboxBackend::E2b;
        if key.is_some() || on_e2b {
            let left = budgets.limit_for_run(before);
            let how = if on_e2b {
                "each model call is counted as the agent reports it, and the sandbox is \
                 ended once a budget is spent"
            } else {
                "each model call is reserved at its worst case first, and refused once a \
                 budget is spent"
            };
            job.log
                .say(&format!(
                    "budget of this run: {}, with {} left this month and today ({how})",
                    budgets.run.describe(),
                    left.usd.map_or_else(|| "no limit".to_owned(), dollars)
                ))
                .await?;
        }
        Ok(JobBudget {
            budgets,
            key,
            ledger_run,
            prices,
        })
    }

    /// Records what pays for the job's model calls; for the owner's Claude plan, the
    /// plan's monthly credit as a budget (when the owner has runs stop there), and a run
    /// that finds it drawn stops before any sandbox starts.
    async fn plan_credit_of_the_job(&self, job: &AgentJob<'_>) -> Result<Option<PlanBudget>, Stop> {
        let Some(key) = &job.setup.agent_key else {
            return Ok(None);
        };
        let store = &self.store;
        if !key.is_plan_token() {
            store
                .spend()
                .set_run_paid_with(job.run_id, PaidWith::ApiKey)
                .await?;
            return Ok(None);
        }
        store
            .spend()
            .set_run_paid_with(job.run_id, PaidWith::ClaudePlan)
            .await?;
        let Some(plan) = store.spend().claude_plan().await? else {
            job.log
                .say("paid with the owner's Claude plan (no plan named: its credit is not counted)")
                .await?;
            return Ok(None);
        };
        let drawn = store.spend().plan_month_charged(store.now()).await?;
        let credit = plan.plan.monthly_credit_usd();
        job.log
            .say(&format!(
                "paid with the {} plan: {} of its {} monthly credit drawn this month, at API \
                 prices",
                plan.plan.label(),
                dollars(drawn),
                dollars(credit)
            ))
            .await?;
        let Some(usd) = plan.month_budget_usd() else {
            return Ok(None);
        };
        let budget = PlanBudget {
            plan: plan.plan.label().to_owned(),
            usd,
        };
        if let Some(reached) = budget.reached(drawn) {
            return Err(Stop::failed(
                RunFailureCode::BudgetSpent,
                reached.as_reached(),
            ));
        }
        Ok(Some(budget))
    }

    /// Records what the job spent once its agent has ended: every model call the key
    /// forwarder metered, or else the agent's own account in `out` (read only when
    /// `out_readable`). Says in the log when a budget reached 80%. A job whose budget
    /// was spent stops here: nothing of it is pushed.
    pub(crate) async fn record_job_spend(
        &self,
        job: &AgentJob<'_>,
        key: Option<&ForwardedKey>,
        budgets: &Budgets,
        out: &Path,
        out_readable: bool,
    ) -> Result<(), Stop> {
        let AgentJob {
            setup, log, run_id, ..
        } = *job;
        // Every settlement in the ledger first; a call never settled (its answer never
        // read to its end) is charged all it reserved.
        if let Some(key) = key {
            key.meter.settled().await;
        }
        let ledger = self
            .store
            .spend()
            .close_run_ledger(run_id, self.store.now())
            .await?;
        let metered = key
            .map(|key| (key, key.meter.spend()))
            .filter(|(_, spend)| {
                spend.calls > 0 || spend.refused_calls > 0 || ledger.calls > ledger.reported_calls
            });
        // Calls no forwarder saw, as the agent reported them while it ran (E2B).
        let reported = (ledger.reported_calls > 0).then_some(ledger);
        let (spend, steps) = match metered {
            Some((key, spend)) => {
                let steps = scrubbed_steps(key.meter.steps(), &setup.redactor, &key.placeholder);
                (metered_run_spend(&spend), steps)
            }
            None => {
                let told = out_readable
                    .then(|| setup.agent_usage(out, run_id))
                    .filter(|usage| usage.is_known());
                (reported_run_spend(told, reported), Vec::new())
            }
        };
        self.store
            .spend()
            .record_run_spend(run_id, &spend, &steps)
            .await?;
        if let Some(cost) = spend.cost_usd {
            log.say(&format!(
                "spent: ${cost:.4}, {} tokens in, {} out ({})",
                spend.tokens_in.unwrap_or(0),
                spend.tokens_out.unwrap_or(0),
                match spend.source {
                    Some(SpendSource::Metered) => "metered",
                    _ => "as reported by the agent",
                }
            ))
            .await?;
        }
        self.note_budgets_at_eighty_percent(job, budgets).await?;
        if ledger.unread_calls > 0 {
            log.say(&format!(
                "{} model call(s) whose answer's usage could not be read were charged all \
                 they reserved (the run's ledger holds {})",
                ledger.unread_calls,
                dollars(ledger.charged_usd)
            ))
            .await?;
        }
        match metered {
            Some((key, _)) => stop_when_the_meter_says(key),
            None => Ok(()),
        }
    }

    /// A budget the run brought to 80% is said in its log and noted on it (once a
    /// period; the store keeps which were given).
    async fn note_budgets_at_eighty_percent(
        &self,
        job: &AgentJob<'_>,
        budgets: &Budgets,
    ) -> Result<(), Stop> {
        for notice in self
            .store
            .spend()
            .budget_notices(job.repo, budgets, self.store.now())
            .await?
        {
            tracing::info!(%notice, "a budget reached 80%");
            job.log.say(&format!("notice: {notice}")).await?;
            self.store
                .runs()
                .add_run_note(job.run_id, &format!("{BUDGET_NOTE}{notice}"))
                .await?;
        }
        Ok(())
    }

    /// Keeps the commits of a job its budget stopped (the agent's work so far, which the
    /// job script committed) in the repository's cache, for a retry to go on from;
    /// nothing of them is pushed.
    pub(crate) async fn keep_unfinished_work(
        &self,
        job: &AgentJob<'_>,
        copy: &WorkingCopy,
        out: &Path,
    ) -> Result<(), Stop> {
        let bundle = out.join("changes.bundle");
        if !bundle.exists() {
            return Ok(());
        }
        let git = self.host_git();
        let _cache_lock = self.lock_cache(job.log, job.repo).await?;
        let kept_ref = unfinished_work_ref(job.run_id);
        let end_sha = match git.import_bundle(&copy.cache, &bundle, &kept_ref).await {
            Ok(end_sha) => end_sha,
            Err(error) => {
                tracing::warn!(run = %job.run_id, %error, "the unfinished commits could not be kept");
                return Ok(());
            }
        };
        if !git
            .is_ancestor(&copy.cache, &copy.start_sha, &end_sha)
            .await
        {
            return Ok(());
        }
        self.store
            .runs()
            .record_unfinished_commits(job.run_id, &end_sha)
            .await?;
        job.log
            .say(&format!(
                "the agent's work so far (up to {}) is kept for a retry; nothing was pushed",
                &end_sha[..end_sha.len().min(12)]
            ))
            .await?;
        Ok(())
    }

    /// What the item's last code run left unfinished, when its budget stopped it.
    pub(crate) async fn unfinished_work_of(
        &self,
        feedback_id: FeedbackId,
    ) -> Result<Option<UnfinishedWork>, Stop> {
        let runs = self
            .store
            .runs()
            .runs(&RunFilter {
                feedback_id: Some(feedback_id),
                active_only: false,
                limit: None,
            })
            .await?;
        let last_finished = runs
            .into_iter()
            .filter(|run| run.stage == Stage::Code && !run.status.is_active())
            .max_by_key(|run| run.id.0);
        Ok(
            last_finished.and_then(|run| match (run.failure_code, run.start_sha, run.end_sha) {
                (Some(RunFailureCode::BudgetReached), Some(start_sha), Some(end_sha)) => {
                    Some(UnfinishedWork {
                        run_id: run.id,
                        start_sha,
                        end_sha,
                    })
                }
                _ => None,
            }),
        )
    }
}

/// The run's spend as the key forwarder metered it. A cost is given only when some of
/// the tokens had a price (or there were none).
fn metered_run_spend(spend: &crate::egress::run_meter::MeteredSpend) -> RunSpend {
    let count = |tokens: u64| Some(i64::try_from(tokens).unwrap_or(i64::MAX));
    let priced_any = spend.unpriced_tokens < spend.usage.total();
    RunSpend {
        source: Some(SpendSource::Metered),
        cost_usd: (priced_any || spend.usage.total() == 0).then_some(spend.cost_usd),
        tokens_in: count(spend.usage.all_input()),
        tokens_out: count(spend.usage.output),
        unpriced_tokens: (spend.unpriced_tokens > 0)
            .then(|| count(spend.unpriced_tokens))
            .flatten(),
    }
}

/// The run's spend where no forwarder metered it: the agent's own account at its end
/// (`told`), when it gave one, else what it reported as it ran (`reported`).
fn reported_run_spend(
    told: Option<crate::pipeline::agent_usage::AgentUsage>,
    reported: Option<crate::store::spend_ledger::RunLedger>,
) -> RunSpend {
    match (told, reported) {
        (Some(usage), _) => RunSpend {
            source: Some(SpendSource::Reported),
            cost_usd: usage.cost_usd,
            tokens_in: usage.tokens_in,
            tokens_out: usage.tokens_out,
            unpriced_tokens: None,
        },
        (None, Some(reported)) => RunSpend {
            source: Some(SpendSource::Reported),
            cost_usd: Some(reported.charged_usd),
            tokens_in: None,
            tokens_out: None,
            unpriced_tokens: None,
        },
        (None, None) => RunSpend::default(),
    }
}

/// Stops the run when its meter was lost, or when a budget refused its calls.
fn stop_when_the_meter_says(key: &ForwardedKey) -> Result<(), Stop> {
    if let Some(why) = key.meter.lost() {
        return Err(meter_lost(&why));
    }
    if key.meter.budget_reached() {
        let spend = key.meter.spend();
        return Err(Stop::failed(
            RunFailureCode::BudgetReached,
            format!(
                "budget reached: {}; {} model call(s) were refused after {} and {} \
                 tokens; nothing was pushed, and the item's working copy is kept for \
                 a retry",
                key.meter
                    .last_refusal()
                    .unwrap_or_else(|| "a budget was spent".to_owned()),
                spend.refused_calls,
                dollars(spend.charged_usd),
                spend.usage.total(),
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::agent_step::ToolCall;
    use crate::domain::model_prices::TokenUsage;
    use crate::secrets::Secret;

    #[test]
    fn neither_the_key_nor_the_placeholder_survives_in_a_step() {
        let key = Secret::new("sk-ant-the-real-key-0123456789");
        let placeholder = "handoff-placeholder-00112233445566778899aabbccddeeff";
        let step = AgentStep {
            model: "claude-sonnet-4-5".to_owned(),
            began_at: chrono::Utc::now(),
            duration_ms: 10,
            status: 200,
            usage: TokenUsage::default(),
            cost_usd: None,
            tool_calls: vec![ToolCall {
                name: "Bash".to_owned(),
                input: format!(r#"{{"command":"curl -H 'x-api-key: {placeholder}' …"}}"#),
            }],
            text: format!(
                "The key is {} and the variable holds {placeholder}.",
                key.expose()
            ),
            details_left_out: false,
            usage_unread: false,
        };
        let scrubbed = scrubbed_steps(vec![step], &Redactor::new([&key]), placeholder);
        let shown = serde_json::to_string(&scrubbed).unwrap();
        assert!(!shown.contains(key.expose()), "{shown}");
        assert!(!shown.contains(placeholder), "{shown}");
        assert!(shown.contains("[placeholder]"), "{shown}");
    }
}
