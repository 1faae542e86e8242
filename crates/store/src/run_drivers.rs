//! Who drives each active run, and whether that process still lives. A process that
//! drives a run (begins it, takes its turn in the queue, beats its heartbeat, takes it
//! over) writes itself into the run's record, and for as long as it lives holds an
//! exclusive lock on a file of its own in the data folder's `run-drivers` folder. The
//! operating system gives a lock back when its process ends, however it ends, so a
//! process that finds the lock free knows at once that the run's driver is gone, on
//! Linux, macOS and Windows alike. A driver on another machine (a data folder shared
//! over the network) can only be known gone by its silence.

use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use sqlx::Row as _;

use super::error::StoreError;
use super::row_mapping::{run_columns, run_from_row};
use super::time_text::time_text;
use super::Store;
use crate::file_lock::{self, FileLock};
use handoff_domain::run_driver::{DriverLiveness, RunDriver};
use handoff_domain::Run;

/// The folder, beside the database, that holds the drivers' lock files.
const DRIVERS_FOLDER: &str = "run-drivers";

/// This process as the driver of runs, holding its lock while it lives.
#[derive(Debug)]
pub(super) struct ThisDriver {
    driver: RunDriver,
    _lock: FileLock,
}

/// An active run with the last sign of life of its driver, and who that is.
#[derive(Debug, Clone)]
pub struct ActiveRun {
    pub run: Run,
    /// The newest heartbeat, or when the run was made if it has none.
    pub last_sign_of_life: DateTime<Utc>,
    /// `None` for a run recorded before drivers were, or whose driver could not take a
    /// lock: only its silence tells then.
    pub driver: Option<RunDriver>,
    /// The stored text of `last_sign_of_life`, so that a take-over can check nothing
    /// changed since it was read.
    sign_of_life_text: String,
}

/// The driver columns' values for "this process drives it".
pub(super) struct DriverColumns {
    pub pid: Option<i64>,
    pub machine: Option<String>,
    pub started_at: Option<String>,
    pub lock: Option<String>,
}

impl Store {
    fn drivers_folder(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(DRIVERS_FOLDER)
    }

    /// This process as a driver, made (its lock taken) the first time it drives a run.
    /// `None` when no lock can be made there: its runs are then known gone only by
    /// their silence, and the log says why.
    pub fn this_driver(&self) -> Option<&RunDriver> {
        self.driver
            .get_or_init(|| match ThisDriver::take(&self.drivers_folder(), self.now()) {
                Ok(driver) => Some(driver),
                Err(error) => {
                    tracing::warn!(folder = %self.drivers_folder().display(), %error, "no driver's lock could be made; a crash of this process is known only after its runs fall silent");
                    None
                }
            })
            .as_ref()
            .map(|this| &this.driver)
    }

    /// From now on, this process starts no more runs: its queued runs wait for the
    /// next process (it is stopping). Shared by the store's clones.
    pub fn start_no_more_runs(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether [`Store::start_no_more_runs`] was called.
    pub fn starts_no_more_runs(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// This process as a driver if it has driven a run yet.
    pub fn this_driver_so_far(&self) -> Option<&RunDriver> {
        self.driver.get()?.as_ref().map(|this| &this.driver)
    }

    pub(super) fn driver_columns(&self) -> DriverColumns {
        let driver = self.this_driver();
        DriverColumns {
            pid: driver.map(|driver| i64::from(driver.pid)),
            machine: driver.map(|driver| driver.machine.clone()),
            started_at: driver.map(|driver| time_text(driver.started_at)),
            lock: driver.map(|driver| driver.lock.clone()),
        }
    }

    /// Whether `driver` still lives, as far as this machine can tell.
    pub fn driver_liveness(&self, driver: &RunDriver) -> DriverLiveness {
        if driver.machine != this_machine() || !is_lock_name(&driver.lock) {
            return DriverLiveness::CannotTell;
        }
        match file_lock::is_held(&self.drivers_folder().join(&driver.lock)) {
            Ok(Some(true)) => DriverLiveness::Alive,
            // A driver's file goes only once its lock was found free.
            Ok(Some(false)) | Ok(None) => DriverLiveness::Gone,
            Err(error) => {
                tracing::warn!(lock = %driver.lock, %error, "a run driver's lock could not be looked at");
                DriverLiveness::CannotTell
            }
        }
    }

    /// Every active run (queued or running) with its driver, oldest first.
    pub async fn active_runs_and_drivers(&self) -> Result<Vec<ActiveRun>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            ", COALESCE(heartbeat_at, created_at) AS sign_of_life, driver_pid, driver_machine, \
               driver_started_at, driver_lock \
             FROM runs WHERE status IN ('queued', 'running') ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let sign_of_life_text: String = row.try_get("sign_of_life")?;
                let pid: Option<i64> = row.try_get("driver_pid")?;
                let machine: Option<String> = row.try_get("driver_machine")?;
                let started_at: Option<DateTime<Utc>> = row.try_get("driver_started_at")?;
                let lock: Option<String> = row.try_get("driver_lock")?;
                let driver = match (pid, machine, started_at, lock) {
                    (Some(pid), Some(machine), Some(started_at), Some(lock)) => Some(RunDriver {
                        pid: u32::try_from(pid).unwrap_or_default(),
                        machine,
                        started_at,
                        lock,
                    }),
                    _ => None,
                };
                Ok(ActiveRun {
                    run: run_from_row(row)?,
                    last_sign_of_life: row.try_get("sign_of_life")?,
                    driver,
                    sign_of_life_text,
                })
            })
            .collect()
    }

    /// Takes over queued run `seen` for this process, if it is still queued and no sign
    /// of life came from it since it was read; whether it did. Two processes that try at
    /// once cannot both take it.
    pub async fn take_over_queued_run(&self, seen: &ActiveRun) -> Result<bool, StoreError> {
        let me = self.driver_columns();
        let taken = sqlx::query(
            "UPDATE runs SET heartbeat_at = ?, driver_pid = ?, driver_machine = ?, \
               driver_started_at = ?, driver_lock = ? \
             WHERE id = ? AND status = 'queued' AND COALESCE(heartbeat_at, created_at) = ?",
        )
        .bind(self.now_text())
        .bind(me.pid)
        .bind(me.machine)
        .bind(me.started_at)
        .bind(me.lock)
        .bind(seen.run.id.0)
        .bind(&seen.sign_of_life_text)
        .execute(&self.pool)
        .await?;
        Ok(taken.rows_affected() == 1)
    }
}

impl ThisDriver {
    /// Takes a lock of its own in `folder`. The file is locked under a hidden name and
    /// then renamed, so that a sweep never takes a new driver's file for a gone one; files
    /// of drivers that are gone are swept on the way.
    fn take(folder: &Path, now: chrono::DateTime<chrono::Utc>) -> std::io::Result<ThisDriver> {
        fs::create_dir_all(folder)?;
        sweep_gone_drivers(folder);
        let pid = std::process::id();
        let name = format!("{pid}-{:016x}.lock", rand::random::<u64>());
        let hidden = folder.join(format!(".{name}"));
        let lock = FileLock::try_take(&hidden)?.ok_or_else(|| {
            std::io::Error::other(format!("{} is locked already", hidden.display()))
        })?;
        fs::rename(&hidden, folder.join(&name))?;
        Ok(ThisDriver {
            driver: RunDriver {
                pid,
                machine: this_machine(),
                started_at: now,
                lock: name,
            },
            _lock: lock,
        })
    }
}

/// Removes the lock files whose process is gone. Records that still name one read it
/// as gone all the same: a missing file means its lock was found free.
fn sweep_gone_drivers(folder: &Path) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_lock_name(&name) {
            continue;
        }
        let path = entry.path();
        if let Ok(Some(false)) = file_lock::is_held(&path) {
            if let Err(error) = fs::remove_file(&path) {
                tracing::debug!(file = %path.display(), %error, "a gone driver's lock file stays");
            }
        }
    }
}

/// A driver's lock file name as this module makes them: never a path, never hidden.
fn is_lock_name(name: &str) -> bool {
    !name.starts_with('.')
        && name.ends_with(".lock")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

/// This machine's name, as the owner knows it.
pub fn this_machine() -> String {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let from_kernel = fs::read_to_string("/proc/sys/kernel/hostname").ok();
        let from_environment = ["COMPUTERNAME", "HOSTNAME"]
            .iter()
            .find_map(|name| std::env::var(name).ok());
        let from_program = || {
            std::process::Command::new("hostname")
                .output()
                .ok()
                .filter(|output| output.status.success())
                .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        };
        from_kernel
            .or(from_environment)
            .or_else(from_program)
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "this machine".to_owned())
    })
    .clone()
}
