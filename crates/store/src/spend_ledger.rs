//! The spend ledger: each model call reserved before it leaves and settled once its
//! answer is read, in the database every run and every process shares.
//!
//! A reservation is made in one immediate transaction: what the call's run, its
//! repository's month, the day (and, for a run paid with the owner's Claude plan, the
//! plan's month) have charged or hold is read and the reservation
//! written with no other writer in between, so that two calls (of one run or of two
//! runs, in this process or another) never both take the last of a budget.

use crate::areas::SpendRecords;
use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::spend::committed_in_periods;
use super::time_text::time_text;
use handoff_domain::call_reservation::{CallAsk, CallBudgets, CallCharge, CallRefusal, Committed};
use handoff_domain::{RepoId, RunId};

/// What a run's ledger holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunLedger {
    /// Calls reserved.
    pub calls: u64,
    /// Dollars charged (settled) or held (not yet).
    pub charged_usd: f64,
    pub charged_tokens: u64,
    /// Calls whose answers were never settled, or settled unread.
    pub unread_calls: u64,
    /// Calls no forwarder saw, recorded as the agent reported them.
    pub reported_calls: u64,
}

/// Where a call stands against one run's budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRun {
    pub run_id: RunId,
    pub repo_id: RepoId,
    /// The full-auto chain the run is a stage of, whose hold-back it may use.
    pub own_chain: Option<RunId>,
    pub budgets: CallBudgets,
}

impl SpendRecords<'_> {
    /// Reserves `ask` for `run`'s call at `now`, when its run, its month and its day
    /// can hold it; the reservation's entry, or which budget refused it.
    pub async fn reserve_model_call(
        &self,
        run: &LedgerRun,
        ask: &CallAsk,
        now: DateTime<Utc>,
    ) -> Result<Result<i64, CallRefusal>, StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let committed = committed_for(&mut transaction, run, now).await?;
        if let Err(refusal) = run.budgets.check(ask, committed) {
            transaction.rollback().await?;
            return Ok(Err(refusal));
        }
        let entry: i64 = sqlx::query_scalar(
            "INSERT INTO model_call_ledger (run_id, model, reserved_usd, reserved_tokens, \
             unpriced, reserved_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(run.run_id.0)
        .bind(&ask.model)
        .bind(ask.usd)
        .bind(i64::try_from(ask.tokens).unwrap_or(i64::MAX))
        .bind(ask.unpriced)
        .bind(time_text(now))
        .fetch_one(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(Ok(entry))
    }

    /// Records a call `run` made that no forwarder saw, as its agent reported it
    /// (`usd`, `tokens`), settled at once; the first budget the run has reached with it,
    /// if one has.
    pub async fn record_reported_call(
        &self,
        run: &LedgerRun,
        model: &str,
        usd: f64,
        tokens: u64,
        now: DateTime<Utc>,
    ) -> Result<Option<CallRefusal>, StoreError> {
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        let tokens = i64::try_from(tokens).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO model_call_ledger (run_id, model, reserved_usd, reserved_tokens, \
             charged_usd, charged_tokens, reserved_at, settled_at, reported) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
        )
        .bind(run.run_id.0)
        .bind(model)
        .bind(usd)
        .bind(tokens)
        .bind(usd)
        .bind(tokens)
        .bind(time_text(now))
        .bind(time_text(now))
        .execute(&mut *transaction)
        .await?;
        let committed = committed_for(&mut transaction, run, now).await?;
        transaction.commit().await?;
        Ok(run.budgets.reached(committed))
    }

    /// Settles the reservation `entry` with what its call was charged.
    pub async fn settle_model_call(
        &self,
        entry: i64,
        charge: &CallCharge,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE model_call_ledger SET charged_usd = ?, charged_tokens = ?, unread = ?, \
             settled_at = ? WHERE id = ? AND settled_at IS NULL",
        )
        .bind(charge.usd)
        .bind(i64::try_from(charge.tokens).unwrap_or(i64::MAX))
        .bind(charge.unread)
        .bind(time_text(now))
        .bind(entry)
        .execute(&self.store.pool)
        .await?;
        Ok(())
    }

    /// Settles every reservation of `run_id` still held at all it reserved (answers never
    /// read: the run ended, or its meter stopped, first); what its ledger holds then.
    pub async fn close_run_ledger(
        &self,
        run_id: RunId,
        now: DateTime<Utc>,
    ) -> Result<RunLedger, StoreError> {
        sqlx::query(
            "UPDATE model_call_ledger SET charged_usd = reserved_usd, \
             charged_tokens = reserved_tokens, unread = 1, settled_at = ? \
             WHERE run_id = ? AND settled_at IS NULL",
        )
        .bind(time_text(now))
        .bind(run_id.0)
        .execute(&self.store.pool)
        .await?;
        self.run_ledger(run_id).await
    }

    /// What `run_id`'s ledger holds.
    pub async fn run_ledger(&self, run_id: RunId) -> Result<RunLedger, StoreError> {
        let (calls, usd, tokens, unread, reported): (i64, f64, i64, i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), COALESCE(SUM(COALESCE(charged_usd, reserved_usd)), 0.0), \
                    COALESCE(SUM(COALESCE(charged_tokens, reserved_tokens)), 0), \
                    COALESCE(SUM(CASE WHEN unread = 1 OR settled_at IS NULL THEN 1 ELSE 0 END), 0), \
                    COALESCE(SUM(reported), 0) \
             FROM model_call_ledger WHERE run_id = ?",
        )
        .bind(run_id.0)
        .fetch_one(&self.store.pool)
        .await?;
        let count = |value: i64| u64::try_from(value).unwrap_or(0);
        Ok(RunLedger {
            calls: count(calls),
            charged_usd: usd,
            charged_tokens: count(tokens),
            unread_calls: count(unread),
            reported_calls: count(reported),
        })
    }
}

/// What `run`'s budgets stand at: its own calls, its month's and its day's.
async fn committed_for(
    connection: &mut sqlx::SqliteConnection,
    run: &LedgerRun,
    now: DateTime<Utc>,
) -> Result<Committed, StoreError> {
    let (run_usd, run_tokens): (f64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(COALESCE(charged_usd, reserved_usd)), 0.0), \
                COALESCE(SUM(COALESCE(charged_tokens, reserved_tokens)), 0) \
         FROM model_call_ledger WHERE run_id = ?",
    )
    .bind(run.run_id.0)
    .fetch_one(&mut *connection)
    .await?;
    let periods = committed_in_periods(connection, run.repo_id, now, Some(run.own_chain)).await?;
    let plan_month_usd = match run.budgets.plan_credit {
        Some(_) => super::plan_credit::plan_month_charged(connection, now).await?,
        None => 0.0,
    };
    Ok(Committed {
        run_usd,
        run_tokens: u64::try_from(run_tokens).unwrap_or(0),
        repo_month_usd: periods.repo_month_usd,
        day_usd: periods.day_usd,
        plan_month_usd,
    })
}
