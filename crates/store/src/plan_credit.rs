//! The owner's Claude plan in the store: which plan it is (a setting), which runs it paid
//! for (`runs.paid_with`), and how much of its monthly credit those runs have drawn, in
//! the API-equivalent dollars the ledger charges.

use crate::areas::SpendRecords;
use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::time_text::{start_of_month, time_text};
use super::SettingKey;
use handoff_domain::claude_plan::{ClaudePlan, PastTheCredit, PlanCredit};
use handoff_domain::{PaidWith, RunId};

impl SpendRecords<'_> {
    /// The owner's plan, if one is named.
    pub async fn claude_plan(&self) -> Result<Option<PlanCredit>, StoreError> {
        let Some(named) = self
            .store
            .settings()
            .setting(SettingKey::ClaudePlan)
            .await?
        else {
            return Ok(None);
        };
        let plan = ClaudePlan::parse(named.trim()).ok_or_else(|| StoreError::BadSetting {
            key: SettingKey::ClaudePlan.as_str().to_owned(),
            value: named.clone(),
            reason: "pro, max-5x or max-20x".to_owned(),
        })?;
        let past_the_credit = match self
            .store
            .settings()
            .setting(SettingKey::ClaudePlanPastCredit)
            .await?
        {
            None => PastTheCredit::Stop,
            Some(text) => PastTheCredit::parse(&text).ok_or_else(|| StoreError::BadSetting {
                key: SettingKey::ClaudePlanPastCredit.as_str().to_owned(),
                value: text.clone(),
                reason: "stop or go-on".to_owned(),
            })?,
        };
        Ok(Some(PlanCredit {
            plan,
            past_the_credit,
        }))
    }

    /// Records what pays for run `id`'s model calls.
    pub async fn set_run_paid_with(
        &self,
        id: RunId,
        paid_with: PaidWith,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET paid_with = ? WHERE id = ?")
            .bind(paid_with.as_str())
            .bind(id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// What the runs paid with the plan have charged or hold in the calendar month (UTC)
    /// of `now` (the month's runs, finished or not), on every repository: the plan's credit is the account's, not a
    /// repository's.
    pub async fn plan_month_charged(&self, now: DateTime<Utc>) -> Result<f64, StoreError> {
        let mut connection = self.store.pool.acquire().await?;
        plan_month_charged(&mut connection, now).await
    }
}

/// [`SpendRecords::plan_month_charged`] on `connection` (inside a ledger transaction).
pub(super) async fn plan_month_charged(
    connection: &mut sqlx::SqliteConnection,
    now: DateTime<Utc>,
) -> Result<f64, StoreError> {
    let month_start = start_of_month(now);
    let next_month = start_of_month(month_start + chrono::Duration::days(32));
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(SUM(c.charged_usd), 0.0) FROM run_charges c \
         JOIN runs r ON r.id = c.run_id \
         WHERE c.created_at >= ? AND c.created_at < ? AND r.paid_with = ?",
    )
    .bind(time_text(month_start))
    .bind(time_text(next_month))
    .bind(PaidWith::ClaudePlan.as_str())
    .fetch_one(&mut *connection)
    .await?)
}
