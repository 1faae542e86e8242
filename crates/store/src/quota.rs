//! Run quota: each run uses one unit of its repository's monthly quota.

use crate::areas::SpendRecords;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::error::StoreError;
use super::time_text::{start_of_month, time_text};
use handoff_domain::{Repo, RepoId, RunId};

/// A repository's quota this month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuotaStatus {
    /// Runs allowed this month; `None` means no limit.
    pub quota: Option<u32>,
    pub used: u32,
    /// Runs left this month; `None` means no limit.
    pub left: Option<u32>,
}

impl QuotaStatus {
    pub fn is_exhausted(&self) -> bool {
        self.left == Some(0)
    }
}

pub(super) async fn quota_status_in<'c, E>(
    executor: E,
    repo_id: RepoId,
    now: DateTime<Utc>,
) -> Result<QuotaStatus, StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Sqlite>,
{
    // This installation's runs, and those another installation of the owner's said on
    // GitHub it made.
    let month_start = time_text(start_of_month(now));
    let (quota, used): (Option<i64>, i64) = sqlx::query_as(
        "SELECT r.monthly_run_quota, \
                (SELECT COALESCE(SUM(q.units), 0) FROM quota_uses q \
                 WHERE q.repo_id = r.id AND q.used_at >= ?) \
              + (SELECT COUNT(*) FROM runs_seen_elsewhere e \
                 WHERE e.repo_id = r.id AND e.ended_at >= ?) \
         FROM repos r WHERE r.id = ?",
    )
    .bind(&month_start)
    .bind(&month_start)
    .bind(repo_id.0)
    .fetch_optional(executor)
    .await?
    .ok_or_else(|| StoreError::RepoNotFound(format!("#{repo_id}")))?;
    let quota = quota.map(|q| u32::try_from(q).unwrap_or(u32::MAX));
    let used = u32::try_from(used).unwrap_or(u32::MAX);
    Ok(QuotaStatus {
        quota,
        used,
        left: quota.map(|q| q.saturating_sub(used)),
    })
}

impl SpendRecords<'_> {
    /// Gives back what a reservation did not use: the run `run_id` used `units`.
    pub async fn settle_quota(&self, run_id: RunId, units: u32) -> Result<(), StoreError> {
        sqlx::query("UPDATE quota_uses SET units = MIN(units, ?) WHERE run_id = ?")
            .bind(i64::from(units))
            .bind(run_id.0)
            .execute(&self.store.pool)
            .await?;
        Ok(())
    }

    /// Refuses, before anything is recorded, a run of `repo` that needs `units` when
    /// fewer are left this month.
    pub async fn check_quota_left(&self, repo: &Repo, units: u32) -> Result<(), StoreError> {
        let quota = self.quota_status(repo.id, self.store.now()).await?;
        match (quota.quota, quota.left) {
            (Some(limit), Some(left)) if left < units => Err(StoreError::QuotaExhausted {
                repo: repo.name.full_name(),
                quota: limit,
                used: quota.used,
            }),
            _ => Ok(()),
        }
    }

    /// The quota of `repo_id` in the month of `now`.
    pub async fn quota_status(
        &self,
        repo_id: RepoId,
        now: DateTime<Utc>,
    ) -> Result<QuotaStatus, StoreError> {
        quota_status_in(&self.store.pool, repo_id, now).await
    }
}
