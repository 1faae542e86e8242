//! Spend: what runs cost, step by step and in total, the budgets and prices the owner
//! set, and the 80% notices (a month's figures are [`super::month_spend`]).

use crate::areas::SpendRecords;
use chrono::{DateTime, Datelike as _, TimeZone as _, Utc};
use serde::Serialize;
use sqlx::Row as _;

use super::error::StoreError;
use super::settings::SettingKey;
use super::time_text::{start_of_month, time_text};
use handoff_domain::agent_step::{AgentStep, ToolCall};
use handoff_domain::budgets::{
    dollars, reached_share, Budgets, SpendLimit, SpentSoFar, DEFAULT_RUN_BUDGET_USD,
    NOTICE_AT_SHARE,
};
use handoff_domain::model_prices::{PriceLineError, PriceTable, TokenUsage};
use handoff_domain::{Repo, RepoId, RunId, SpendSource};

pub use super::month_spend::{DaySpend, ItemSpend, MonthSpend, PartSpend};

/// The file in the data folder whose lines price models, as `spend.prices` does
/// (`MODEL INPUT OUTPUT [CACHE_WRITE CACHE_READ]` in dollars a million tokens, one a line,
/// `#` for a comment): for prices kept beside the database, under the setting's.
pub const PRICES_FILE: &str = "prices.txt";

/// How a run's note about a budget at 80% begins.
pub const BUDGET_NOTE: &str = "budget: ";

/// A run's spend as it ended, to record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSpend {
    pub source: Option<SpendSource>,
    pub cost_usd: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub unpriced_tokens: Option<i64>,
}

/// A budget that reached 80% of itself with a run's spend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetNotice {
    /// `month` (a repository's) or `day` (the installation's).
    pub period: &'static str,
    pub repo: Option<String>,
    pub budget_usd: f64,
    pub spent_usd: f64,
}

impl std::fmt::Display for BudgetNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repo {
            Some(repo) => write!(
                f,
                "{repo} has spent {} of its {} monthly budget ({:.0}%)",
                dollars(self.spent_usd),
                dollars(self.budget_usd),
                self.spent_usd / self.budget_usd * 100.0
            ),
            None => write!(
                f,
                "Handoff has spent {} of its {} daily budget ({:.0}%)",
                dollars(self.spent_usd),
                dollars(self.budget_usd),
                self.spent_usd / self.budget_usd * 100.0
            ),
        }
    }
}

/// A budget setting that does not read.
fn bad_setting(key: SettingKey, value: &str, what: &str) -> StoreError {
    StoreError::BadSetting {
        key: key.as_str().to_owned(),
        value: value.to_owned(),
        reason: what.to_owned(),
    }
}

/// A dollar amount as the owner writes it: `5`, `$5`, `2.50`; `none`: no limit.
pub fn parse_dollars(text: &str) -> Result<Option<f64>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let usd: f64 = text
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("{text:?} is not an amount of dollars (or `none`)"))?;
    if !usd.is_finite() || usd < 0.0 {
        return Err(format!("{text:?}: a budget cannot be negative"));
    }
    Ok(Some(usd))
}

pub(super) fn start_of_day(time: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(time.year(), time.month(), time.day(), 0, 0, 0)
        .single()
        .unwrap_or(time)
}

impl SpendRecords<'_> {
    /// The price table: the defaults, then the lines of [`PRICES_FILE`] in the data
    /// folder, then the owner's `spend.prices` setting, each on top of the one before.
    pub async fn price_table(&self) -> Result<PriceTable, StoreError> {
        let mut table = PriceTable::default();
        let file = self
            .store
            .path
            .parent()
            .map(|folder| folder.join(PRICES_FILE));
        if let Some(file) = file.filter(|file| file.is_file()) {
            let text = std::fs::read_to_string(&file).map_err(|error| StoreError::BadSetting {
                key: file.display().to_string(),
                value: String::new(),
                reason: format!("the prices file cannot be read: {error}"),
            })?;
            let lines = PriceTable::parse_lines(&text).map_err(|error| StoreError::BadSetting {
                key: file.display().to_string(),
                value: error.line.clone(),
                reason: error.to_string(),
            })?;
            table.models.extend(lines);
        }
        let overrides = self
            .store
            .settings()
            .setting(SettingKey::SpendPrices)
            .await?;
        if let Some(overrides) = overrides.as_deref() {
            let lines = PriceTable::parse_lines(overrides).map_err(|error: PriceLineError| {
                bad_setting(SettingKey::SpendPrices, overrides, &error.to_string())
            })?;
            table.models.extend(lines);
        }
        Ok(table)
    }

    /// The budgets that apply to a run of `repo`.
    pub async fn budgets_for(&self, repo: &Repo) -> Result<Budgets, StoreError> {
        let dollars = |key: SettingKey, value: Option<String>, default: Option<f64>| match value {
            None => Ok(default),
            Some(value) => {
                parse_dollars(&value).map_err(|reason| bad_setting(key, &value, &reason))
            }
        };
        let run_usd = dollars(
            SettingKey::BudgetRunUsd,
            self.store
                .settings()
                .setting(SettingKey::BudgetRunUsd)
                .await?,
            Some(DEFAULT_RUN_BUDGET_USD),
        )?;
        let day_usd = dollars(
            SettingKey::BudgetDayUsd,
            self.store
                .settings()
                .setting(SettingKey::BudgetDayUsd)
                .await?,
            None,
        )?;
        let run_tokens = match self
            .store
            .settings()
            .setting(SettingKey::BudgetRunTokens)
            .await?
        {
            None => None,
            Some(value) if value.trim().eq_ignore_ascii_case("none") => None,
            Some(value) => Some(value.trim().parse::<u64>().map_err(|_| {
                bad_setting(
                    SettingKey::BudgetRunTokens,
                    &value,
                    "a number of tokens (or `none`)",
                )
            })?),
        };
        Ok(Budgets {
            run: SpendLimit {
                usd: run_usd,
                tokens: run_tokens,
            },
            repo_month_usd: repo.monthly_budget_usd,
            day_usd,
        })
    }

    /// Sets (or, with `None`, removes) a repository's monthly budget.
    pub async fn set_monthly_budget(
        &self,
        id: RepoId,
        budget_usd: Option<f64>,
    ) -> Result<Repo, StoreError> {
        if budget_usd.is_some_and(|usd| !usd.is_finite() || usd < 0.0) {
            return Err(StoreError::BadSetting {
                key: "monthly budget".to_owned(),
                value: format!("{budget_usd:?}"),
                reason: "a budget cannot be negative".to_owned(),
            });
        }
        sqlx::query("UPDATE repos SET monthly_budget_usd = ? WHERE id = ?")
            .bind(budget_usd)
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        self.store.repositories().repo(id).await
    }

    /// What the month of `now` and its day have seen spent, for `repo_id`'s budgets.
    pub async fn spent_so_far(
        &self,
        repo_id: RepoId,
        now: DateTime<Utc>,
    ) -> Result<SpentSoFar, StoreError> {
        let mut connection = self.store.pool.acquire().await?;
        committed_in_periods(&mut connection, repo_id, now, None).await
    }

    /// What the month and the day have spent or hold back for full-auto chains under
    /// way (but `own_chain`): what a new run may no longer count on.
    pub async fn committed_so_far(
        &self,
        repo_id: RepoId,
        now: DateTime<Utc>,
        own_chain: Option<RunId>,
    ) -> Result<SpentSoFar, StoreError> {
        let mut connection = self.store.pool.acquire().await?;
        committed_in_periods(&mut connection, repo_id, now, Some(own_chain)).await
    }

    /// Holds `usd` back for the full-auto chain `run_id` while it runs.
    pub async fn reserve_budget(&self, run_id: RunId, usd: f64) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET reserved_usd = ? WHERE id = ?")
            .bind(usd)
            .bind(run_id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Refuses, before anything is recorded, a run of `repo` when its month or the day
    /// has spent its budget, and a full-auto chain of `chain_runs` stages whose run
    /// budgets together the month or the day cannot hold back; what the chain is to
    /// hold back ([`SpendRecords::reserve_budget`]).
    pub async fn check_budget_left(
        &self,
        repo: &Repo,
        chain_runs: Option<u32>,
    ) -> Result<Option<f64>, StoreError> {
        let budgets = self.budgets_for(repo).await?;
        let spent = self
            .committed_so_far(repo.id, self.store.now(), None)
            .await?;
        let name = repo.name.full_name();
        budgets.check_before_run(&name, spent)?;
        Ok(match chain_runs {
            Some(runs) => budgets.check_reservation(&name, spent, runs)?,
            None => None,
        })
    }

    /// Records how much a run spent: its steps (when metered) and its totals.
    pub async fn record_run_spend(
        &self,
        id: RunId,
        spend: &RunSpend,
        steps: &[AgentStep],
    ) -> Result<(), StoreError> {
        // Immediate: the step positions read here are written in the same transaction.
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let first: i64 = sqlx::query_scalar(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM agent_steps WHERE run_id = ?",
        )
        .bind(id.0)
        .fetch_one(&mut *transaction)
        .await?;
        for (offset, step) in steps.iter().enumerate() {
            let tool_calls =
                serde_json::to_string(&step.tool_calls).unwrap_or_else(|_| "[]".to_owned());
            let count = |tokens: u64| i64::try_from(tokens).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO agent_steps (run_id, position, model, began_at, duration_ms, status, \
                 input_tokens, cache_write_tokens, cache_read_tokens, output_tokens, \
                 reasoning_tokens, cost_usd, tool_calls, text, details_left_out, usage_unread) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(id.0)
            .bind(first + i64::try_from(offset).unwrap_or(i64::MAX))
            .bind(&step.model)
            .bind(time_text(step.began_at))
            .bind(count(step.duration_ms))
            .bind(i64::from(step.status))
            .bind(count(step.usage.input))
            .bind(count(step.usage.cache_write))
            .bind(count(step.usage.cache_read))
            .bind(count(step.usage.output))
            .bind(count(step.usage.reasoning))
            .bind(step.cost_usd)
            .bind(tool_calls)
            .bind(&step.text)
            .bind(step.details_left_out)
            .bind(step.usage_unread)
            .execute(&mut *transaction)
            .await?;
        }
        sqlx::query(
            "UPDATE runs SET llm_cost_usd = ?, tokens_in = ?, tokens_out = ?, spend_source = ?, \
             unpriced_tokens = ? WHERE id = ?",
        )
        .bind(spend.cost_usd)
        .bind(spend.tokens_in)
        .bind(spend.tokens_out)
        .bind(spend.source.map(SpendSource::as_str))
        .bind(spend.unpriced_tokens)
        .bind(id.0)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(())
    }

    /// The steps of run `id`, in order.
    pub async fn agent_steps(&self, id: RunId) -> Result<Vec<AgentStep>, StoreError> {
        if !self.store.runs().run_exists(id).await? {
            return Err(StoreError::RunNotFound(id));
        }
        let rows = sqlx::query(
            "SELECT model, began_at, duration_ms, status, input_tokens, cache_write_tokens, \
             cache_read_tokens, output_tokens, reasoning_tokens, cost_usd, tool_calls, text, \
             details_left_out, usage_unread FROM agent_steps WHERE run_id = ? ORDER BY position",
        )
        .bind(id.0)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let count = |column: &str| -> Result<u64, StoreError> {
                    let value: i64 = row.try_get(column)?;
                    Ok(u64::try_from(value).unwrap_or(0))
                };
                let tool_calls: String = row.try_get("tool_calls")?;
                let status: i64 = row.try_get("status")?;
                Ok(AgentStep {
                    model: row.try_get("model")?,
                    began_at: row.try_get("began_at")?,
                    duration_ms: count("duration_ms")?,
                    status: u16::try_from(status).unwrap_or(0),
                    usage: TokenUsage {
                        input: count("input_tokens")?,
                        cache_write: count("cache_write_tokens")?,
                        cache_read: count("cache_read_tokens")?,
                        output: count("output_tokens")?,
                        reasoning: count("reasoning_tokens")?,
                        // Which cache writes were an hour's is not kept: the step's cost,
                        // worked out when it was metered, is.
                        cache_write_hour: 0,
                    },
                    cost_usd: row.try_get("cost_usd")?,
                    tool_calls: serde_json::from_str::<Vec<ToolCall>>(&tool_calls)
                        .unwrap_or_default(),
                    text: row.try_get("text")?,
                    details_left_out: row.try_get("details_left_out")?,
                    usage_unread: row.try_get("usage_unread")?,
                })
            })
            .collect()
    }

    /// The notices due now for `repo`'s budgets: each budget that has reached 80% says
    /// so once per period.
    pub async fn budget_notices(
        &self,
        repo: &Repo,
        budgets: &Budgets,
        now: DateTime<Utc>,
    ) -> Result<Vec<BudgetNotice>, StoreError> {
        let after = self.spent_so_far(repo.id, now).await?;
        let mut due = Vec::new();
        if let Some(budget) = budgets.repo_month_usd {
            if reached_share(budget, after.repo_month_usd, NOTICE_AT_SHARE)
                && self
                    .first_notice(
                        &format!("repo:{}", repo.id.0),
                        &now.format("%Y-%m").to_string(),
                    )
                    .await?
            {
                due.push(BudgetNotice {
                    period: "month",
                    repo: Some(repo.name.full_name()),
                    budget_usd: budget,
                    spent_usd: after.repo_month_usd,
                });
            }
        }
        if let Some(budget) = budgets.day_usd {
            if reached_share(budget, after.day_usd, NOTICE_AT_SHARE)
                && self
                    .first_notice("day", &now.format("%Y-%m-%d").to_string())
                    .await?
            {
                due.push(BudgetNotice {
                    period: "day",
                    repo: None,
                    budget_usd: budget,
                    spent_usd: after.day_usd,
                });
            }
        }
        Ok(due)
    }

    /// Whether this is the first notice of `scope` in `period` (and records it).
    async fn first_notice(&self, scope: &str, period: &str) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO spend_notices (scope, period, noticed_at) VALUES (?, ?, ?) \
             ON CONFLICT (scope, period) DO NOTHING",
        )
        .bind(scope)
        .bind(period)
        .bind(time_text(self.store.now()))
        .execute(&self.store.pool)
        .await?;
        Ok(inserted.rows_affected() == 1)
    }
}

/// What the runs of `repo_id` (or of all repositories) charged since `since`: each run's
/// ledger of model calls (settled or still held), or what it recorded when it ended;
/// with `held_back`, also what full-auto chains still running hold back beyond what
/// their stages charged, but for the chain `own_chain`.
async fn spent_since(
    connection: &mut sqlx::SqliteConnection,
    repo_id: Option<RepoId>,
    since: DateTime<Utc>,
    held_back: Option<Option<RunId>>,
) -> Result<f64, StoreError> {
    let repo_id = repo_id.map(|id| id.0);
    // This installation's runs, and those another installation of the owner's said on
    // GitHub it made.
    let spent: f64 = sqlx::query_scalar(
        "SELECT (SELECT COALESCE(SUM(charged_usd), 0.0) FROM run_charges \
                 WHERE created_at >= ?1 AND (?2 IS NULL OR repo_id = ?2)) \
              + (SELECT COALESCE(SUM(cost_usd), 0.0) FROM runs_seen_elsewhere \
                 WHERE ended_at >= ?1 AND (?2 IS NULL OR repo_id = ?2))",
    )
    .bind(time_text(since))
    .bind(repo_id)
    .fetch_one(&mut *connection)
    .await?;
    let Some(own_chain) = held_back else {
        return Ok(spent);
    };
    let reserved: f64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(MAX(f.reserved_usd - (SELECT COALESCE(SUM(c.charged_usd), 0.0) \
                                FROM run_charges c WHERE c.parent_run_id = f.id), 0.0)), 0.0) \
         FROM runs f WHERE f.reserved_usd IS NOT NULL AND f.status IN ('queued', 'running') \
         AND (? IS NULL OR f.repo_id = ?) AND (? IS NULL OR f.id != ?)",
    )
    .bind(repo_id)
    .bind(repo_id)
    .bind(own_chain.map(|id| id.0))
    .bind(own_chain.map(|id| id.0))
    .fetch_one(&mut *connection)
    .await?;
    Ok(spent + reserved)
}

/// What `repo_id`'s month of `now` and the installation's day have charged (and, with
/// `held_back`, hold back for chains but `own_chain`).
pub(super) async fn committed_in_periods(
    connection: &mut sqlx::SqliteConnection,
    repo_id: RepoId,
    now: DateTime<Utc>,
    held_back: Option<Option<RunId>>,
) -> Result<SpentSoFar, StoreError> {
    Ok(SpentSoFar {
        repo_month_usd: spent_since(connection, Some(repo_id), start_of_month(now), held_back)
            .await?,
        day_usd: spent_since(connection, None, start_of_day(now), held_back).await?,
    })
}
