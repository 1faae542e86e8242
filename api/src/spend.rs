//! Spend in the window: a month's figures (per day, the top items, per model and per
//! stage) against the budget, the owner's Claude plan against its monthly credit, the
//! budgets, the plan and the price table to edit, and a run's steps as its key
//! forwarder saw them.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::{invalid_input, AppCore};
use handoff::domain::agent_step::AgentStep;
use handoff::domain::budgets::DEFAULT_RUN_BUDGET_USD;
use handoff::domain::claude_plan::{ClaudePlan, PastTheCredit, PlanCredit};
use handoff::domain::model_prices::{PriceTable, DEFAULT_PRICES_CHECKED};
use handoff::domain::{RepoName, RunId};
use handoff::error_code::CodedError;
use handoff::pipeline::PipelineSettings;
use handoff::store::spend::{parse_dollars, MonthSpend};

use handoff::store::SettingKey;

/// One day of the month.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DaySpendRecord {
    #[cfg_attr(feature = "page-contract", ts(as = "String"))]
    pub day: NaiveDate,
    pub cost_usd: f64,
    pub tokens: i64,
    pub runs: i64,
}

/// One of the items that cost most.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ItemSpendRecord {
    pub repo: String,
    pub feedback_id: Option<i64>,
    pub pr_number: Option<u64>,
    pub title: Option<String>,
    pub cost_usd: f64,
    pub tokens: i64,
    pub runs: i64,
}

/// A model's or a stage's share.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PartSpendRecord {
    pub name: String,
    pub cost_usd: f64,
    pub tokens: i64,
}

/// A month's spend.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MonthSpendRecord {
    pub month: String,
    pub repo: Option<String>,
    pub cost_usd: f64,
    pub tokens: i64,
    pub unpriced_tokens: i64,
    pub runs_without_cost: i64,
    pub runs: i64,
    pub budget_usd: Option<f64>,
    /// What the month's runs paid with the owner's Claude plan drew, on every repository.
    pub paid_with_plan_usd: f64,
    pub days: Vec<DaySpendRecord>,
    pub top_items: Vec<ItemSpendRecord>,
    pub by_model: Vec<PartSpendRecord>,
    pub by_stage: Vec<PartSpendRecord>,
}

impl From<MonthSpend> for MonthSpendRecord {
    fn from(month: MonthSpend) -> Self {
        let part = |part: handoff::store::spend::PartSpend| PartSpendRecord {
            name: part.name,
            cost_usd: part.cost_usd,
            tokens: part.tokens,
        };
        MonthSpendRecord {
            month: month.month,
            repo: month.repo,
            cost_usd: month.cost_usd,
            tokens: month.tokens,
            unpriced_tokens: month.unpriced_tokens,
            runs_without_cost: month.runs_without_cost,
            runs: month.runs,
            budget_usd: month.budget_usd,
            paid_with_plan_usd: month.paid_with_plan_usd,
            days: month
                .days
                .into_iter()
                .map(|day| DaySpendRecord {
                    day: day.day,
                    cost_usd: day.cost_usd,
                    tokens: day.tokens,
                    runs: day.runs,
                })
                .collect(),
            top_items: month
                .top_items
                .into_iter()
                .map(|item| ItemSpendRecord {
                    repo: item.repo,
                    feedback_id: item.feedback_id.map(|id| id.0),
                    pr_number: item.pr_number,
                    title: item.title,
                    cost_usd: item.cost_usd,
                    tokens: item.tokens,
                    runs: item.runs,
                })
                .collect(),
            by_model: month.by_model.into_iter().map(part).collect(),
            by_stage: month.by_stage.into_iter().map(part).collect(),
        }
    }
}

/// One row of the price table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PriceRecord {
    pub model: String,
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
    /// Whether the owner set it (else it is a default).
    pub own: bool,
}

/// The budgets and prices as the window edits them: amounts as typed, empty for no
/// limit.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BudgetSettingsView {
    pub run_usd: String,
    pub run_tokens: String,
    pub day_usd: String,
    /// The owner's price lines, as typed (`MODEL INPUT OUTPUT [CACHE_WRITE CACHE_READ]`).
    pub own_prices: String,
    pub prices: Vec<PriceRecord>,
    /// The day the default prices were compared with the providers' pages.
    pub prices_checked: String,
    /// The owner's Claude plan (`pro`, `max-5x`, `max-20x`), or empty for none.
    pub claude_plan: String,
    /// `stop` or `go-on` once the plan's credit is drawn.
    pub plan_past_credit: String,
}

/// The owner's Claude plan this month: what the runs it paid for drew from its credit,
/// in API-equivalent dollars, on every repository (the credit is the account's).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanMonthRecord {
    /// "Claude Max 5x".
    pub label: String,
    pub credit_usd: f64,
    pub drawn_usd: f64,
    /// Whether calls paid with the plan are refused once the credit is drawn.
    pub stops_at_credit: bool,
    /// Whether the plan's token is in the keyring (without it, Claude Code pays with
    /// the API key).
    pub token_kept: bool,
}

/// The Spend tab: a month of one repository or of all, and the settings.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SpendView {
    pub month: MonthSpendRecord,
    pub repos: Vec<String>,
    pub settings: BudgetSettingsView,
    /// The owner's Claude plan, when one is named.
    pub plan: Option<PlanMonthRecord>,
}

/// The budgets as the window sends them: empty text is no limit, except for the run,
/// where it is the default ($5) and `none` is no limit.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(default, rename_all = "camelCase")]
pub struct BudgetSettingsInput {
    pub run_usd: String,
    pub run_tokens: String,
    pub day_usd: String,
    pub own_prices: String,
    /// The owner's Claude plan, or empty for none.
    pub claude_plan: String,
    /// `stop` (also when empty) or `go-on`.
    pub plan_past_credit: String,
}

/// A tool call of a step.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    pub name: String,
    pub input: String,
}

/// One model call of a run.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "page-contract", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AgentStepRecord {
    pub model: String,
    pub began_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub status: u16,
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub text: String,
    pub details_left_out: bool,
    /// The answer's usage could not be read: the call was charged all it reserved.
    pub usage_unread: bool,
}

impl From<AgentStep> for AgentStepRecord {
    fn from(step: AgentStep) -> Self {
        AgentStepRecord {
            model: step.model,
            began_at: step.began_at,
            duration_ms: step.duration_ms,
            status: step.status,
            input_tokens: step.usage.input,
            cache_read_tokens: step.usage.cache_read,
            cache_write_tokens: step.usage.cache_write,
            output_tokens: step.usage.output,
            cost_usd: step.cost_usd,
            tool_calls: step
                .tool_calls
                .into_iter()
                .map(|call| ToolCallRecord {
                    name: call.name,
                    input: call.input,
                })
                .collect(),
            text: step.text,
            details_left_out: step.details_left_out,
            usage_unread: step.usage_unread,
        }
    }
}

/// The steps of run `run_id`.
pub async fn run_steps(core: &AppCore, run_id: i64) -> Result<Vec<AgentStepRecord>, CodedError> {
    Ok(core
        .store
        .spend()
        .agent_steps(RunId(run_id))
        .await?
        .into_iter()
        .map(AgentStepRecord::from)
        .collect())
}

async fn budget_settings(core: &AppCore) -> Result<BudgetSettingsView, CodedError> {
    let store = &core.store;
    let text = |value: Option<String>| value.unwrap_or_default();
    let own_prices = text(store.settings().setting(SettingKey::SpendPrices).await?);
    let own = PriceTable::parse_lines(&own_prices).unwrap_or_default();
    let prices = store
        .spend()
        .price_table()
        .await?
        .models
        .into_iter()
        .map(|(model, price)| PriceRecord {
            own: own.contains_key(&model),
            model,
            input: price.input,
            output: price.output,
            cache_write: price.cache_write,
            cache_read: price.cache_read,
        })
        .collect();
    Ok(BudgetSettingsView {
        run_usd: store
            .settings()
            .setting(SettingKey::BudgetRunUsd)
            .await?
            .unwrap_or_else(|| format!("{DEFAULT_RUN_BUDGET_USD}")),
        run_tokens: text(
            store
                .settings()
                .setting(SettingKey::BudgetRunTokens)
                .await?,
        ),
        day_usd: text(store.settings().setting(SettingKey::BudgetDayUsd).await?),
        own_prices,
        prices,
        prices_checked: DEFAULT_PRICES_CHECKED.to_owned(),
        claude_plan: text(store.settings().setting(SettingKey::ClaudePlan).await?),
        plan_past_credit: store
            .settings()
            .setting(SettingKey::ClaudePlanPastCredit)
            .await?
            .unwrap_or_else(|| PastTheCredit::Stop.as_str().to_owned()),
    })
}

/// The owner's plan in the month whose runs paid with it drew `drawn_usd`, when a plan
/// is named.
async fn plan_month(core: &AppCore, drawn_usd: f64) -> Result<Option<PlanMonthRecord>, CodedError> {
    let Some(plan) = core.store.spend().claude_plan().await? else {
        return Ok(None);
    };
    let settings = PipelineSettings::configured(&core.store).await?;
    Ok(Some(PlanMonthRecord {
        label: plan.plan.label().to_owned(),
        credit_usd: plan.plan.monthly_credit_usd(),
        drawn_usd,
        stops_at_credit: plan.month_budget_usd().is_some(),
        token_kept: settings.claude_plan_token(&core.secrets).await?.is_some(),
    }))
}

/// The month of `repo` (`owner/name`, or every repository when empty) and the
/// settings.
pub async fn spend_view(core: &AppCore, repo: Option<String>) -> Result<SpendView, CodedError> {
    let store = &core.store;
    let repo = match repo
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
    {
        Some(name) => {
            let name: RepoName =
                name.parse()
                    .map_err(|error: handoff::domain::RepoNameError| {
                        invalid_input(error.to_string())
                    })?;
            Some(store.repositories().repo_by_name(&name).await?)
        }
        None => None,
    };
    let month = month_spent(core, repo.as_ref().map(|repo| &repo.name), core.store.now())
        .await?
        .0;
    let repos = store
        .repositories()
        .repos()
        .await?
        .into_iter()
        .map(|repo| repo.name.full_name())
        .collect();
    Ok(SpendView {
        plan: plan_month(core, month.paid_with_plan_usd).await?,
        month: month.into(),
        repos,
        settings: budget_settings(core).await?,
    })
}

/// What the month holding `at` spent, for repository `repo` (or all), and the Claude
/// plan the owner named, if any.
pub async fn month_spent(
    core: &AppCore,
    repo: Option<&RepoName>,
    at: chrono::DateTime<Utc>,
) -> Result<(MonthSpend, Option<PlanCredit>), CodedError> {
    let repo = match repo {
        Some(name) => Some(core.store.repositories().repo_by_name(name).await?),
        None => None,
    };
    let month = core.store.spend().month_spend(repo.as_ref(), at).await?;
    Ok((month, core.store.spend().claude_plan().await?))
}

/// Saves the budgets and the owner's prices; nothing is saved when one does not read.
pub async fn save_budget_settings(
    core: &AppCore,
    input: &BudgetSettingsInput,
    repo: Option<String>,
) -> Result<SpendView, CodedError> {
    let store = &core.store;
    let dollars = |label: &str, text: &str| {
        parse_dollars(if text.trim().is_empty() { "none" } else { text })
            .map_err(|reason| invalid_input(format!("{label}: {reason}")))
    };
    let run_usd = match input.run_usd.trim() {
        "" => None,
        text => {
            dollars("Per run", text)?;
            Some(text.to_owned())
        }
    };
    let day_usd = dollars("Per day", &input.day_usd)?;
    let run_tokens = match input.run_tokens.trim() {
        "" => None,
        text => Some(text.parse::<u64>().map_err(|_| {
            invalid_input(format!(
                "Tokens per run: {text:?} is not a number of tokens"
            ))
        })?),
    };
    PriceTable::parse_lines(&input.own_prices)
        .map_err(|error| invalid_input(format!("Your prices: {error}")))?;
    let claude_plan = match input.claude_plan.trim() {
        "" | "none" => None,
        named => Some(ClaudePlan::parse(named).ok_or_else(|| {
            invalid_input(format!(
                "Claude plan: {named:?} is not a plan (pro, max-5x or max-20x)"
            ))
        })?),
    };
    let past_credit = match input.plan_past_credit.trim() {
        "" => PastTheCredit::Stop,
        text => PastTheCredit::parse(text).ok_or_else(|| {
            invalid_input(format!(
                "Past the plan's credit: {text:?} is neither stop nor go-on"
            ))
        })?,
    };
    for (key, value) in [
        (SettingKey::BudgetRunUsd, run_usd),
        (SettingKey::BudgetDayUsd, day_usd.map(|usd| usd.to_string())),
        (
            SettingKey::BudgetRunTokens,
            run_tokens.map(|tokens| tokens.to_string()),
        ),
        (
            SettingKey::SpendPrices,
            Some(input.own_prices.trim().to_owned()).filter(|text| !text.is_empty()),
        ),
        (
            SettingKey::ClaudePlan,
            claude_plan.map(|plan| plan.as_str().to_owned()),
        ),
        (
            SettingKey::ClaudePlanPastCredit,
            (past_credit == PastTheCredit::GoOn).then(|| past_credit.as_str().to_owned()),
        ),
    ] {
        match value {
            Some(value) => store.settings().set_setting(key, &value).await?,
            None => store.settings().remove_setting(key).await?,
        }
    }
    spend_view(core, repo).await
}
