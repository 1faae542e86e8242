//! A month's spend, of one repository or of all: per day, the items that cost most, per
//! model and per stage, for the window's chart and `handoff spend`.

use crate::areas::SpendRecords;
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use sqlx::Row as _;

use super::error::StoreError;
use super::time_text::{start_of_month, time_text};
use handoff_domain::{FeedbackId, Repo};

/// One day of a month.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DaySpend {
    pub day: NaiveDate,
    pub cost_usd: f64,
    pub tokens: i64,
    pub runs: i64,
}

/// A feedback item's (or pull request's) spend in a month.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemSpend {
    pub repo: String,
    pub feedback_id: Option<FeedbackId>,
    pub pr_number: Option<u64>,
    pub title: Option<String>,
    pub cost_usd: f64,
    pub tokens: i64,
    pub runs: i64,
}

/// Tokens and dollars of one model or one stage in a month.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartSpend {
    pub name: String,
    pub cost_usd: f64,
    pub tokens: i64,
}

/// A month's spend, of one repository or of them all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonthSpend {
    /// `2026-12`.
    pub month: String,
    pub repo: Option<String>,
    pub cost_usd: f64,
    pub tokens: i64,
    /// Tokens of models with no price, which the cost leaves out.
    pub unpriced_tokens: i64,
    /// Runs with tokens but no cost known.
    pub runs_without_cost: i64,
    pub runs: i64,
    /// The repository's monthly budget (one repository only).
    pub budget_usd: Option<f64>,
    /// What the month's runs paid with the owner's Claude plan charged or hold, on every
    /// repository (the plan's credit is the account's), in API-equivalent dollars.
    pub paid_with_plan_usd: f64,
    /// Every day of the month, spent or not.
    pub days: Vec<DaySpend>,
    /// The five items that cost most.
    pub top_items: Vec<ItemSpend>,
    pub by_model: Vec<PartSpend>,
    pub by_stage: Vec<PartSpend>,
}

/// The runs of one month (and of one repository, or all): the four parameters that
/// [`in_month`] binds.
const RUNS_OF_MONTH: &str =
    "r.created_at >= ? AND r.created_at < ? AND (? IS NULL OR r.repo_id = ?)";

/// `sql` (this file's own text), whose first four parameters are the month's first instant, the next month's,
/// and the repository (twice; NULL for all), with them bound.
fn in_month(
    sql: String,
    from: &str,
    until: &str,
    repo_id: Option<i64>,
) -> sqlx::query::Query<'static, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    // Made of this file's constant pieces only: nothing typed reaches the text.
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(from.to_owned())
        .bind(until.to_owned())
        .bind(repo_id)
        .bind(repo_id)
}

impl SpendRecords<'_> {
    /// The month (`2026-12`) of `repo` (or of every repository): per day, per item,
    /// per model and per stage.
    pub async fn month_spend(
        &self,
        repo: Option<&Repo>,
        month_start: DateTime<Utc>,
    ) -> Result<MonthSpend, StoreError> {
        let month_start = start_of_month(month_start);
        let next_month = start_of_month(month_start + chrono::Duration::days(32));
        let repo_id = repo.map(|repo| repo.id.0);
        let (from, until) = (time_text(month_start), time_text(next_month));
        let window = |sql| in_month(sql, &from, &until, repo_id);
        let totals = window(format!(
            "SELECT COALESCE(SUM(r.llm_cost_usd), 0.0) AS cost, \
                    COALESCE(SUM(COALESCE(r.tokens_in, 0) + COALESCE(r.tokens_out, 0)), 0) AS tokens, \
                    COALESCE(SUM(COALESCE(r.unpriced_tokens, 0)), 0) AS unpriced, \
                    COALESCE(SUM(r.llm_cost_usd IS NULL AND r.tokens_in IS NOT NULL), 0) AS without_cost, \
                    COUNT(*) AS runs \
             FROM runs r WHERE {RUNS_OF_MONTH} AND r.stage != 'full-auto'"
        ))
        .fetch_one(&self.store.pool)
        .await?;
        let by_day = window(format!(
            "SELECT substr(r.created_at, 1, 10) AS day, COALESCE(SUM(r.llm_cost_usd), 0.0) AS cost, \
                    COALESCE(SUM(COALESCE(r.tokens_in, 0) + COALESCE(r.tokens_out, 0)), 0) AS tokens, \
                    COUNT(*) AS runs \
             FROM runs r WHERE {RUNS_OF_MONTH} AND r.stage != 'full-auto' GROUP BY day"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        let days = every_day_of_month(&by_day, month_start, next_month)?;
        let top = window(format!(
            "SELECT p.owner || '/' || p.name AS repo, r.feedback_id, r.pr_number, f.title, \
                    COALESCE(SUM(r.llm_cost_usd), 0.0) AS cost, \
                    COALESCE(SUM(COALESCE(r.tokens_in, 0) + COALESCE(r.tokens_out, 0)), 0) AS tokens, \
                    COUNT(*) AS runs \
             FROM runs r JOIN repos p ON p.id = r.repo_id \
             LEFT JOIN feedback f ON f.id = r.feedback_id \
             WHERE {RUNS_OF_MONTH} AND r.stage != 'full-auto' \
             GROUP BY r.repo_id, COALESCE(r.feedback_id, -r.pr_number) \
             HAVING cost > 0 OR tokens > 0 \
             ORDER BY cost DESC, tokens DESC LIMIT 5"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        let top_items = top.iter().map(item_spend).collect::<Result<Vec<_>, _>>()?;
        let (by_model, by_stage) = self
            .parts_by_model_and_stage(&from, &until, repo_id)
            .await?;
        Ok(MonthSpend {
            month: month_start.format("%Y-%m").to_string(),
            repo: repo.map(|repo| repo.name.full_name()),
            cost_usd: totals.try_get("cost")?,
            tokens: totals.try_get("tokens")?,
            unpriced_tokens: totals.try_get("unpriced")?,
            runs_without_cost: totals.try_get("without_cost")?,
            runs: totals.try_get("runs")?,
            budget_usd: repo.and_then(|repo| repo.monthly_budget_usd),
            paid_with_plan_usd: self.plan_month_charged(month_start).await?,
            days,
            top_items,
            by_model,
            by_stage,
        })
    }

    /// What each model and each stage spent between `from` and `until` (of `repo_id`, or
    /// of every repository), most first.
    async fn parts_by_model_and_stage(
        &self,
        from: &str,
        until: &str,
        repo_id: Option<i64>,
    ) -> Result<(Vec<PartSpend>, Vec<PartSpend>), StoreError> {
        let parts = |rows: Vec<sqlx::sqlite::SqliteRow>| {
            rows.iter().map(part_spend).collect::<Result<Vec<_>, _>>()
        };
        let by_model = in_month(
            format!(
                "SELECT s.model AS name, COALESCE(SUM(s.cost_usd), 0.0) AS cost, \
                        SUM(s.input_tokens + s.cache_write_tokens + s.cache_read_tokens + s.output_tokens) AS tokens \
                 FROM agent_steps s JOIN runs r ON r.id = s.run_id \
                 WHERE {RUNS_OF_MONTH} GROUP BY s.model ORDER BY cost DESC, tokens DESC"
            ),
            from,
            until,
            repo_id,
        )
        .fetch_all(&self.store.pool)
        .await?;
        let by_stage = in_month(
            format!(
                "SELECT r.stage AS name, COALESCE(SUM(r.llm_cost_usd), 0.0) AS cost, \
                        COALESCE(SUM(COALESCE(r.tokens_in, 0) + COALESCE(r.tokens_out, 0)), 0) AS tokens \
                 FROM runs r WHERE {RUNS_OF_MONTH} AND r.stage != 'full-auto' \
                 GROUP BY r.stage HAVING tokens > 0 OR cost > 0 ORDER BY cost DESC, tokens DESC"
            ),
            from,
            until,
            repo_id,
        )
        .fetch_all(&self.store.pool)
        .await?;
        Ok((parts(by_model)?, parts(by_stage)?))
    }
}

/// Every day from `month_start` to before `next_month`, with what `by_day` (rows of
/// `day`, `cost`, `tokens`, `runs`) holds for it; a day without runs spent nothing.
fn every_day_of_month(
    by_day: &[sqlx::sqlite::SqliteRow],
    month_start: DateTime<Utc>,
    next_month: DateTime<Utc>,
) -> Result<Vec<DaySpend>, StoreError> {
    let mut days = Vec::new();
    let mut day = month_start.date_naive();
    while day < next_month.date_naive() && days.len() <= 31 {
        let text = day.format("%Y-%m-%d").to_string();
        let found = by_day.iter().find(|row| {
            row.try_get::<String, _>("day")
                .is_ok_and(|stored| stored == text)
        });
        days.push(DaySpend {
            day,
            cost_usd: found.map_or(Ok(0.0), |row| row.try_get("cost"))?,
            tokens: found.map_or(Ok(0), |row| row.try_get("tokens"))?,
            runs: found.map_or(Ok(0), |row| row.try_get("runs"))?,
        });
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    Ok(days)
}

/// One item of the month's most costly, from its row.
fn item_spend(row: &sqlx::sqlite::SqliteRow) -> Result<ItemSpend, StoreError> {
    let pr_number: Option<i64> = row.try_get("pr_number")?;
    Ok(ItemSpend {
        repo: row.try_get("repo")?,
        feedback_id: row
            .try_get::<Option<i64>, _>("feedback_id")?
            .map(FeedbackId),
        pr_number: pr_number.and_then(|number| u64::try_from(number).ok()),
        title: row.try_get("title")?,
        cost_usd: row.try_get("cost")?,
        tokens: row.try_get("tokens")?,
        runs: row.try_get("runs")?,
    })
}

/// One model's or stage's part of the month, from its row.
fn part_spend(row: &sqlx::sqlite::SqliteRow) -> Result<PartSpend, StoreError> {
    Ok(PartSpend {
        name: row.try_get("name")?,
        cost_usd: row.try_get("cost")?,
        tokens: row.try_get("tokens")?,
    })
}
