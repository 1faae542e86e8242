//! The run queue as the database keeps it: a run waits with status `queued` until the
//! queue's rule (`domain::run_queue`) gives it a slot, and the step from `queued` to
//! `running` happens in one write transaction, so that two processes sharing the
//! database never start more runs than the slots allow. A queued run whose process
//! stopped (a restart) stays queued until another process adopts it.

use crate::areas::RunQueueRecords;
use serde::Serialize;
use sqlx::Row as _;
use sqlx::SqliteConnection;

use super::error::StoreError;
use super::row_mapping::{run_columns, run_from_row};
use super::settings::SettingKey;
use handoff_domain::run_queue::{queue_turns, QueueTurn, QueuedRun, RunningRun, SlotLimits};
use handoff_domain::{RepoId, Run, RunId, RunStatus, SandboxBackend};

/// Where one queued run stands when its process asks for its turn.
#[derive(Debug, Clone, PartialEq)]
pub enum TakenTurn {
    /// It holds a slot now and is `running`, on this backend.
    Started { backend: SandboxBackend },
    /// It waits; `place` counts from 1.
    Waiting { place: u32 },
    /// The owner asked to cancel it while it waited.
    CancelRequested,
    /// It is no longer queued (ended meanwhile, or another process started it).
    NotQueued { status: RunStatus },
    /// This process starts no more runs (it is stopping): the run stays queued for the
    /// next process to take over.
    HeldWhileStopping,
}

/// One run in the queue as the owner sees it: going, or waiting at a place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueEntry {
    pub run: Run,
    pub repo: String,
    /// The item's title, for a run on a feedback item.
    pub title: Option<String>,
    /// `None` while it runs.
    pub place: Option<u32>,
}

/// A slot count as the owner writes it: a whole number of at least 1, or `none` for
/// no limit of its own (the backends' slots only).
pub fn parse_slot_count(text: &str, none_allowed: bool) -> Result<Option<u32>, String> {
    let text = text.trim();
    if none_allowed && text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    match text.parse::<u32>() {
        Ok(slots) if slots >= 1 => Ok(Some(slots)),
        _ if none_allowed => Err(format!(
            "{text:?} is not a whole number of slots of at least 1 (or `none`)"
        )),
        _ => Err(format!(
            "{text:?} is not a whole number of slots of at least 1"
        )),
    }
}

impl RunQueueRecords<'_> {
    /// The installation's and the backends' slots, as set (a setting that does not
    /// read as a number is logged and the default used).
    pub async fn slot_limits(&self) -> Result<SlotLimits, StoreError> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let mut limits = SlotLimits::for_machine(cores);
        if let Some(text) = self
            .store
            .settings()
            .setting(SettingKey::QueueSlots)
            .await?
        {
            match parse_slot_count(&text, false) {
                Ok(Some(slots)) => limits.installation = slots,
                Ok(None) => {}
                Err(refusal) => {
                    tracing::warn!(%refusal, "queue.slots is not understood; the default is used")
                }
            }
        }
        for (key, slot) in [
            (SettingKey::QueueSlotsDocker, &mut limits.docker),
            (SettingKey::QueueSlotsE2b, &mut limits.e2b),
            (SettingKey::QueueSlotsLocal, &mut limits.local),
        ] {
            if let Some(text) = self.store.settings().setting(key).await? {
                match parse_slot_count(&text, true) {
                    Ok(slots) => *slot = slots,
                    Err(refusal) => {
                        tracing::warn!(setting = key.as_str(), %refusal, "a backend's slots are not understood; it has none of its own")
                    }
                }
            }
        }
        Ok(limits)
    }

    /// Every queued run's turn now, in the queue's order.
    pub async fn queue_turns(
        &self,
        e2b_usable: bool,
    ) -> Result<Vec<(RunId, QueueTurn)>, StoreError> {
        let limits = self.slot_limits().await?;
        let mut connection = self.store.pool.acquire().await?;
        turns_in(&mut connection, limits, e2b_usable).await
    }

    /// Asks for queued run `id`'s turn: it starts (and is `running` from this moment,
    /// its slot held) when the queue's rule gives it one, else it waits at its place.
    pub async fn take_queue_turn(
        &self,
        id: RunId,
        e2b_usable: bool,
    ) -> Result<TakenTurn, StoreError> {
        if self.store.starts_no_more_runs() {
            return Ok(TakenTurn::HeldWhileStopping);
        }
        let limits = self.slot_limits().await?;
        // Most asks end in waiting: a plain read decides those without the write lock.
        let mut connection = self.store.pool.acquire().await?;
        if let Some(taken) = turn_of(&mut connection, id, limits, e2b_usable).await? {
            return Ok(taken);
        }
        drop(connection);
        let mut transaction = self.store.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(taken) = turn_of(&mut transaction, id, limits, e2b_usable).await? {
            return Ok(taken);
        }
        let turns = turns_in(&mut transaction, limits, e2b_usable).await?;
        let Some(QueueTurn::Start { backend }) = turns
            .iter()
            .find_map(|(run, turn)| (*run == id).then_some(*turn))
        else {
            return Err(StoreError::Corrupt(format!(
                "run {id} had a turn that went away inside one transaction"
            )));
        };
        let now = self.store.now_text();
        let driver = self.store.driver_columns();
        sqlx::query(
            "UPDATE runs SET status = 'running', started_at = ?, heartbeat_at = ?, backend = ?, \
               driver_pid = ?, driver_machine = ?, driver_started_at = ?, driver_lock = ? \
             WHERE id = ? AND status = 'queued'",
        )
        .bind(&now)
        .bind(&now)
        .bind(backend.as_str())
        .bind(driver.pid)
        .bind(driver.machine)
        .bind(driver.started_at)
        .bind(driver.lock)
        .bind(id.0)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(TakenTurn::Started { backend })
    }

    /// The place of each queued run (0: its turn came and it is starting), for the
    /// cards and panels that show where a run stands.
    pub async fn queue_places(
        &self,
        e2b_usable: bool,
    ) -> Result<std::collections::HashMap<RunId, u32>, StoreError> {
        Ok(self
            .queue_turns(e2b_usable)
            .await?
            .into_iter()
            .map(|(run, turn)| match turn {
                QueueTurn::Start { .. } => (run, 0),
                QueueTurn::Wait { place } => (run, place),
            })
            .collect())
    }

    /// The queue as the owner sees it: the runs going, then the waiting ones by place.
    pub async fn queue(&self, e2b_usable: bool) -> Result<Vec<QueueEntry>, StoreError> {
        let places = self.queue_places(e2b_usable).await?;
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            ", (SELECT p.owner || '/' || p.name FROM repos p WHERE p.id = runs.repo_id) AS repo_full_name, \
               (SELECT f.title FROM feedback f WHERE f.id = runs.feedback_id) AS feedback_title \
             FROM runs WHERE status IN ('queued', 'running') AND parent_run_id IS NULL ORDER BY id"
        ))
        .fetch_all(&self.store.pool)
        .await?;
        let mut going = Vec::new();
        let mut waiting = Vec::new();
        for row in &rows {
            let run = run_from_row(row)?;
            let entry = QueueEntry {
                repo: row.try_get("repo_full_name")?,
                title: row.try_get("feedback_title")?,
                place: None,
                run,
            };
            if entry.run.status == RunStatus::Running {
                going.push(entry);
                continue;
            }
            // A run whose turn came but that its process has not started yet is
            // placed first.
            waiting.push(QueueEntry {
                place: Some(places.get(&entry.run.id).copied().unwrap_or(0)),
                ..entry
            });
        }
        waiting.sort_by_key(|entry| (entry.place, entry.run.id.0));
        going.extend(waiting);
        Ok(going)
    }
}

/// Decides `id`'s turn where it does not start now; `None` where it starts (the caller
/// then takes the slot, under the write lock).
async fn turn_of(
    connection: &mut SqliteConnection,
    id: RunId,
    limits: SlotLimits,
    e2b_usable: bool,
) -> Result<Option<TakenTurn>, StoreError> {
    let row = sqlx::query("SELECT status, cancel_requested_at FROM runs WHERE id = ?")
        .bind(id.0)
        .fetch_optional(&mut *connection)
        .await?
        .ok_or(StoreError::RunNotFound(id))?;
    let status_text: String = row.try_get("status")?;
    let status = RunStatus::parse(&status_text)
        .ok_or_else(|| StoreError::Corrupt(format!("run status {status_text:?}")))?;
    if status != RunStatus::Queued {
        return Ok(Some(TakenTurn::NotQueued { status }));
    }
    if row
        .try_get::<Option<String>, _>("cancel_requested_at")?
        .is_some()
    {
        return Ok(Some(TakenTurn::CancelRequested));
    }
    let turns = turns_in(connection, limits, e2b_usable).await?;
    Ok(
        match turns
            .iter()
            .find_map(|(run, turn)| (*run == id).then_some(*turn))
        {
            Some(QueueTurn::Start { .. }) => None,
            Some(QueueTurn::Wait { place }) => Some(TakenTurn::Waiting { place }),
            None => Some(TakenTurn::NotQueued { status }),
        },
    )
}

/// The queue's rule applied to the runs going and waiting now.
async fn turns_in(
    connection: &mut SqliteConnection,
    limits: SlotLimits,
    e2b_usable: bool,
) -> Result<Vec<(RunId, QueueTurn)>, StoreError> {
    // A full-auto chain's stages run one after another inside the chain's slot.
    let running = sqlx::query(
        "SELECT repo_id, backend FROM runs WHERE status = 'running' AND parent_run_id IS NULL",
    )
    .fetch_all(&mut *connection)
    .await?
    .iter()
    .map(|row| {
        Ok(RunningRun {
            repo_id: RepoId(row.try_get("repo_id")?),
            backend: backend_of(row)?,
        })
    })
    .collect::<Result<Vec<_>, StoreError>>()?;
    let queued = sqlx::query(
        "SELECT r.id, r.repo_id, r.backend, p.run_slots, p.overflow_to_e2b \
         FROM runs r JOIN repos p ON p.id = r.repo_id \
         WHERE r.status = 'queued' AND r.parent_run_id IS NULL ORDER BY r.id",
    )
    .fetch_all(&mut *connection)
    .await?
    .iter()
    .map(|row| {
        Ok(QueuedRun {
            run_id: RunId(row.try_get("id")?),
            repo_id: RepoId(row.try_get("repo_id")?),
            backend: backend_of(row)?,
            repo_slots: row
                .try_get::<Option<i64>, _>("run_slots")?
                .and_then(|slots| u32::try_from(slots).ok()),
            may_overflow_to_e2b: e2b_usable && row.try_get::<i64, _>("overflow_to_e2b")? != 0,
        })
    })
    .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(queue_turns(limits, &running, &queued))
}

fn backend_of(row: &sqlx::sqlite::SqliteRow) -> Result<SandboxBackend, StoreError> {
    let text: String = row.try_get("backend")?;
    SandboxBackend::parse(&text).ok_or_else(|| StoreError::Corrupt(format!("backend {text:?}")))
}
