//! The log file: what Handoff's processes (the desktop app and the `handoff` command line)
//! did and what went wrong, written through `tracing` to `logs/handoff.log` in the data
//! folder. The file rolls over at a size cap and keeps a few older files, so it never
//! grows without bound; every line passes through [`redact_token_shapes`] on its way to
//! the disk, so a secret that slipped into an error text still never reaches it.
//!
//! The level comes from the environment variable [`LOG_LEVEL_VARIABLE`] when set (any
//! `tracing` filter, for example `debug` or `handoff=trace`), else from the stored
//! setting, else `info`; a front end changes it while running through [`LogHandle`].

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{fmt, reload, EnvFilter, Registry};

use crate::data_dir::create_private_folder;
use crate::secrets::redact_token_shapes;

mod following;
pub use following::LogFollower;

/// The environment variable that sets the log level, over the stored setting.
pub const LOG_LEVEL_VARIABLE: &str = "HANDOFF_LOG";
/// The folder in the data folder that holds the log files.
pub const LOG_FOLDER_NAME: &str = "logs";
/// The file being written; older ones are `handoff.log.1` (newest) to `.3`.
pub const LOG_FILE_NAME: &str = "handoff.log";
/// The size at which the log file rolls over.
pub const MAX_LOG_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// How many rolled-over files are kept besides the one being written.
pub const KEPT_OLD_FILES: u32 = 3;

crate::stored_text_enum! {
    /// How much the log says: each level includes the ones above it.
    pub enum LogLevel as "log level" {
        Error => "error",
        Warn => "warn",
        Info => "info",
        Debug => "debug",
        Trace => "trace",
    }
}

impl LogLevel {
    /// The level when neither the environment nor the setting names one.
    pub const DEFAULT: LogLevel = LogLevel::Info;

    /// The filter for this level: Handoff's own crates at this level, the libraries it
    /// uses at `warn` at most (their `info` lines say nothing an owner can act on).
    pub fn filter_directives(self) -> String {
        let level = self.as_str();
        let libraries = match self {
            LogLevel::Error => "error",
            _ => "warn",
        };
        format!("{libraries},handoff={level},handoff_cli={level},handoff_desktop={level}")
    }
}

/// What can go wrong setting up the log.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    #[error("cannot open the log file in {folder}: {source}")]
    Open {
        folder: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{LOG_LEVEL_VARIABLE} is not a log filter: {0}")]
    BadFilter(String),
    #[error("a log is already installed in this process")]
    AlreadyInstalled,
    #[error("cannot read the log file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The folder that holds the log files of the data folder `data_dir`.
pub fn log_folder(data_dir: &Path) -> PathBuf {
    data_dir.join(LOG_FOLDER_NAME)
}

/// The log file being written in the data folder `data_dir`.
pub fn log_file(data_dir: &Path) -> PathBuf {
    log_folder(data_dir).join(LOG_FILE_NAME)
}

/// The level the environment asks for, if it names a plain level (a richer filter in
/// the variable still applies, it just has no [`LogLevel`]).
pub fn level_from_environment() -> Option<String> {
    std::env::var(LOG_LEVEL_VARIABLE)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// Changes the level of an installed log while the process runs.
#[derive(Clone)]
pub struct LogHandle {
    filter: reload::Handle<EnvFilter, Registry>,
    folder: PathBuf,
}

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "LogHandle({})", self.folder.display())
    }
}

impl LogHandle {
    /// Applies the stored setting `level`; the environment variable, when set, still
    /// wins, and `None` means the default.
    pub fn apply_setting(&self, level: Option<LogLevel>) {
        if level_from_environment().is_some() {
            return;
        }
        let directives = level.unwrap_or(LogLevel::DEFAULT).filter_directives();
        match EnvFilter::try_new(&directives) {
            Ok(filter) => {
                if let Err(error) = self.filter.reload(filter) {
                    tracing::warn!(%error, "the log level could not be changed");
                }
            }
            Err(error) => tracing::warn!(%error, directives, "not a log filter"),
        }
    }

    /// The folder the log files are in.
    pub fn folder(&self) -> &Path {
        &self.folder
    }
}

/// Installs the process's log: lines go to the log file of `data_dir` (tagged with
/// `process`, for example `app` or `cli`, and the process id) and, when `echo_to_stderr`,
/// to standard error as well. Call once, early; `level` is the stored setting.
pub fn install(
    data_dir: &Path,
    process: &'static str,
    level: Option<LogLevel>,
    echo_to_stderr: bool,
) -> Result<LogHandle, LogFileError> {
    let folder = log_folder(data_dir);
    let file = RollingLogFile::open(&folder, process, MAX_LOG_FILE_BYTES, KEPT_OLD_FILES).map_err(
        |source| LogFileError::Open {
            folder: folder.clone(),
            source,
        },
    )?;
    let filter = match level_from_environment() {
        Some(directives) => EnvFilter::try_new(&directives)
            .map_err(|error| LogFileError::BadFilter(error.to_string()))?,
        None => EnvFilter::new(level.unwrap_or(LogLevel::DEFAULT).filter_directives()),
    };
    let (filter, handle) = reload::Layer::new(filter);
    let to_file = fmt::layer().with_ansi(false).with_writer(file);
    let to_stderr = echo_to_stderr.then(|| {
        fmt::layer()
            .with_writer(|| RedactingWriter(io::stderr()))
            .with_ansi(false)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(to_file)
        .with(to_stderr)
        .try_init()
        .map_err(|_| LogFileError::AlreadyInstalled)?;
    log_panics();
    Ok(LogHandle {
        filter: handle,
        folder,
    })
}

/// Writes every panic to the log (with its thread and place) before the usual report on
/// standard error, so a panic in a background task or a run is in the log file the owner
/// is pointed to, not only on a terminal nobody watches.
fn log_panics() {
    let usual_report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |panic| {
        let message = panic_message(panic.payload());
        let thread = std::thread::current();
        let place = panic
            .location()
            .map(|location| format!("{}:{}", location.file(), location.line()))
            .unwrap_or_else(|| "an unknown place".to_owned());
        tracing::error!(
            thread = thread.name().unwrap_or("unnamed"),
            place = %place,
            "panicked: {message}"
        );
        usual_report(panic);
    }));
}

/// The text a panic was raised with (`panic!("…")`), or a word saying it had none.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Standard error with token-shaped text scrubbed.
struct RedactingWriter<W>(W);

impl<W: io::Write> io::Write for RedactingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(bytes);
        self.0.write_all(redact_token_shapes(&text).as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A log file that rolls over at a size cap: `handoff.log` becomes `handoff.log.1`, the
/// `.1` becomes `.2` and so on, and the oldest beyond the kept count is deleted. Several
/// processes may append to it at once; each line is one write, so lines do not mix.
pub struct RollingLogFile {
    path: PathBuf,
    tag: String,
    max_bytes: u64,
    kept_old_files: u32,
    open: Mutex<File>,
}

impl std::fmt::Debug for RollingLogFile {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "RollingLogFile({})", self.path.display())
    }
}

impl RollingLogFile {
    /// Opens (or makes) `handoff.log` in `folder` for appending, the folder private to
    /// this account.
    pub fn open(
        folder: &Path,
        process: &str,
        max_bytes: u64,
        kept_old_files: u32,
    ) -> io::Result<RollingLogFile> {
        create_private_folder(folder)?;
        let path = folder.join(LOG_FILE_NAME);
        let file = open_for_append(&path)?;
        Ok(RollingLogFile {
            path,
            tag: format!("{process}[{}] ", std::process::id()),
            max_bytes,
            kept_old_files,
            open: Mutex::new(file),
        })
    }

    /// Appends one line (or a few), scrubbed, rolling the file over first when it is
    /// full.
    pub fn append(&self, text: &str) -> io::Result<()> {
        let mut line = String::with_capacity(self.tag.len() + text.len() + 1);
        line.push_str(&self.tag);
        line.push_str(&redact_token_shapes(text));
        if !line.ends_with('\n') {
            line.push('\n');
        }
        let mut file = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // The length on disk, not a count of our own writes: another process writes
        // to the same file, and may have rolled it over already.
        let on_disk = std::fs::metadata(&self.path).map(|meta| meta.len()).ok();
        match on_disk {
            Some(length) if length + line.len() as u64 > self.max_bytes => {
                self.roll_over()?;
                *file = open_for_append(&self.path)?;
            }
            Some(_) => {}
            // Rolled over by another process and not made again yet, or deleted.
            None => *file = open_for_append(&self.path)?,
        }
        file.write_all(line.as_bytes())
    }

    fn roll_over(&self) -> io::Result<()> {
        let numbered = |number: u32| {
            let mut name = self.path.clone().into_os_string();
            name.push(format!(".{number}"));
            PathBuf::from(name)
        };
        let oldest = numbered(self.kept_old_files);
        if oldest.exists() {
            std::fs::remove_file(&oldest)?;
        }
        for number in (1..self.kept_old_files).rev() {
            let from = numbered(number);
            if from.exists() {
                std::fs::rename(&from, numbered(number + 1))?;
            }
        }
        if self.kept_old_files == 0 {
            std::fs::remove_file(&self.path)
        } else {
            std::fs::rename(&self.path, numbered(1))
        }
    }
}

fn open_for_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    allow_rolling_over_while_open(&mut options);
    let file = options.open(path)?;
    crate::data_dir::make_private(path, 0o600)?;
    Ok(file)
}

/// Lets the file be renamed (rolled over) while it is open here. Unix always does;
/// Windows only when every handle on the file allowed it, so every handle Handoff opens
/// on the log shares it for reading, writing and deleting.
#[cfg(windows)]
fn allow_rolling_over_while_open(options: &mut OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt as _;
    // FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE
    options.share_mode(0x1 | 0x2 | 0x4);
}

#[cfg(not(windows))]
fn allow_rolling_over_while_open(_options: &mut OpenOptions) {}

/// A log file opened for reading, which a writer may still roll over.
fn open_for_reading(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    allow_rolling_over_while_open(&mut options);
    options.open(path)
}

/// The writer `tracing` asks for each line: the shared rolling file.
#[derive(Debug)]
pub struct LogLineWriter<'a>(&'a RollingLogFile);

impl io::Write for LogLineWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.append(&String::from_utf8_lossy(bytes))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> fmt::MakeWriter<'a> for RollingLogFile {
    type Writer = LogLineWriter<'a>;

    fn make_writer(&'a self) -> LogLineWriter<'a> {
        LogLineWriter(self)
    }
}

/// The last `count` lines of the log of `data_dir`, oldest first, reaching into the
/// newest rolled-over file when the current one holds fewer. No log yet reads as none.
pub fn last_lines(data_dir: &Path, count: usize) -> Result<Vec<String>, LogFileError> {
    let current = log_file(data_dir);
    let mut previous = current.clone().into_os_string();
    previous.push(".1");
    let mut lines = Vec::new();
    for path in [PathBuf::from(previous), current] {
        match open_for_reading(&path) {
            Ok(file) => {
                for line in io::BufReader::new(file).lines() {
                    match line {
                        Ok(line) => lines.push(line),
                        // A line cut by a write in progress, or not text: skip it.
                        Err(error) if error.kind() == io::ErrorKind::InvalidData => {}
                        Err(source) => return Err(LogFileError::Read { path, source }),
                    }
                }
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(LogFileError::Read { path, source }),
        }
    }
    let skip = lines.len().saturating_sub(count);
    Ok(lines.split_off(skip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_rolls_over_and_only_the_kept_files_remain() {
        let folder = tempfile::tempdir().unwrap();
        let log = RollingLogFile::open(folder.path(), "test", 200, 2).unwrap();
        for number in 0..40 {
            log.append(&format!("line {number:02} with some words to fill it up"))
                .unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["handoff.log", "handoff.log.1", "handoff.log.2"]);
        for name in &names {
            let size = std::fs::metadata(folder.path().join(name)).unwrap().len();
            assert!(size <= 200, "{name} is {size} bytes, over the cap");
        }
        let newest = std::fs::read_to_string(folder.path().join("handoff.log")).unwrap();
        assert!(newest.contains("line 39"), "{newest}");
    }

    #[test]
    fn a_panic_in_any_thread_is_written_to_the_log_file() {
        let data_dir = tempfile::tempdir().unwrap();
        let _log = install(data_dir.path(), "test", None, false).unwrap();
        let panicked = std::thread::Builder::new()
            .name("run-driver".to_owned())
            .spawn(|| panic!("the step table has no row 7"))
            .unwrap()
            .join();
        assert!(panicked.is_err());
        let lines = last_lines(data_dir.path(), 20).unwrap().join("\n");
        assert!(
            lines.contains("panicked: the step table has no row 7")
                && lines.contains("thread=\"run-driver\"")
                && lines.contains("log_file.rs"),
            "{lines}"
        );
    }

    #[test]
    fn a_token_in_a_line_never_reaches_the_file() {
        let folder = tempfile::tempdir().unwrap();
        let log = RollingLogFile::open(folder.path(), "test", 10_000, 1).unwrap();
        log.append("request failed with ghp_abcdefghijklmnopqrstuvwxyz0123456789 in it")
            .unwrap();
        let text = std::fs::read_to_string(folder.path().join("handoff.log")).unwrap();
        assert!(
            !text.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
            "{text}"
        );
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn the_last_lines_reach_into_the_rolled_over_file() {
        let data = tempfile::tempdir().unwrap();
        let log = RollingLogFile::open(&log_folder(data.path()), "test", 120, 2).unwrap();
        for number in 0..10 {
            log.append(&format!("entry {number}: ........................"))
                .unwrap();
        }
        let lines = last_lines(data.path(), 4).unwrap();
        assert_eq!(lines.len(), 4);
        assert!(
            lines[3].ends_with("entry 9: ........................"),
            "{lines:?}"
        );
        assert!(lines[0].contains("entry 6"), "{lines:?}");
    }

    #[test]
    fn each_level_keeps_libraries_at_warn_at_most() {
        assert_eq!(
            LogLevel::Debug.filter_directives(),
            "warn,handoff=debug,handoff_cli=debug,handoff_desktop=debug"
        );
        assert!(LogLevel::Error.filter_directives().starts_with("error,"));
        assert_eq!(LogLevel::parse("verbose"), None);
    }
}
