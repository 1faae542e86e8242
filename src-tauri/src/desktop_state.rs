//! What the shell holds for the lifetime of the window: the core (store, data folder,
//! keyring), or the coded error that kept the store from opening (shown by the page,
//! never a crash: a damaged or newer database must be explained, not hidden), the
//! handle of the log file's level, and when the app started (its first paint is said in
//! the log with the time it took).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use handoff_api::core_types::{CodedError, LogHandle, LogLevel};
use handoff_api::log::start_log;
use handoff_api::{data_folder, AppCore};

pub struct DesktopState {
    pub data_dir: PathBuf,
    pub core: Result<AppCore, CodedError>,
    /// The log's level control; none when the log file could not be opened.
    pub log: Option<LogHandle>,
    /// When `main` began.
    started: Instant,
    first_paint_said: AtomicBool,
}

impl DesktopState {
    pub async fn open(started: Instant) -> DesktopState {
        let data_dir = match data_folder() {
            Ok(dir) => dir,
            Err(error) => {
                eprintln!("Handoff: {}", error.message);
                return DesktopState {
                    data_dir: PathBuf::new(),
                    core: Err(error),
                    log: None,
                    started,
                    first_paint_said: AtomicBool::new(false),
                };
            }
        };
        let log = match start_log(&data_dir, "app", true) {
            Ok(log) => Some(log),
            Err(error) => {
                eprintln!(
                    "Handoff: {}; the app runs without a log file",
                    error.message
                );
                None
            }
        };
        let core = AppCore::open(&data_dir).await;
        match &core {
            Ok(core) => {
                tracing::info!(data_dir = %data_dir.display(), "the app started");
                if let Some(log) = &log {
                    match handoff_api::log::stored_log_level(core).await {
                        Ok(level) => log.apply_setting(level),
                        Err(error) => {
                            tracing::warn!(message = %error.message, "the log level setting could not be read")
                        }
                    }
                }
            }
            Err(error) => {
                tracing::error!(code = %error.code, message = %error.message, "the database could not be opened")
            }
        }
        DesktopState {
            data_dir,
            core,
            log,
            started,
            first_paint_said: AtomicBool::new(false),
        }
    }

    /// Says in the log, once, that the page painted its first board, and how long after
    /// the app started (how start-up time is measured: `benches/app_start.rs`).
    pub fn say_first_paint(&self) {
        if !self.first_paint_said.swap(true, Ordering::SeqCst) {
            tracing::info!(
                milliseconds = self.started.elapsed().as_millis() as u64,
                "the window painted its first board"
            );
        }
    }

    /// Applies a newly chosen log level to this process.
    pub fn apply_log_level(&self, level: LogLevel) {
        if let Some(log) = &self.log {
            log.apply_setting(Some(level));
        }
    }

    pub fn core(&self) -> Result<&AppCore, CodedError> {
        self.core.as_ref().map_err(Clone::clone)
    }
}
