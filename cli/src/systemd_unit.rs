//! `handoff serve --install`: a systemd user unit that runs the daemon at login, written
//! to the user's unit folder, enabled and started. The .deb ships the same unit for
//! `/usr/bin/handoff` (`packaging/handoff.service`); the user's own one, written here,
//! takes its place.

use std::path::{Path, PathBuf};

use super::command_error::CliError;

/// The unit's file name.
const UNIT: &str = "handoff.service";

/// The daemon's timings the unit passes on (each `None`: the daemon's default).
#[derive(Debug, Clone, Copy, Default)]
pub struct DaemonTimings {
    pub sync_seconds: Option<u64>,
    pub grace_seconds: Option<u64>,
}

/// The unit for `program` serving `data_dir`.
pub fn unit_text(program: &Path, data_dir: &Path, arguments: &DaemonTimings) -> String {
    let mut command = format!(
        "{} --data-dir {} serve",
        quoted(&program.display().to_string()),
        quoted(&data_dir.display().to_string())
    );
    if let Some(seconds) = arguments.sync_seconds {
        command.push_str(&format!(" --sync-seconds {seconds}"));
    }
    if let Some(seconds) = arguments.grace_seconds {
        command.push_str(&format!(" --grace-seconds {seconds}"));
    }
    // systemd waits this long after SIGTERM: the grace for the runs, and some more.
    let stop_seconds = arguments.grace_seconds.unwrap_or(120) + 45;
    format!(
        "[Unit]\n\
         Description=Handoff: sync, the run queue and automatic updates with no window\n\
         After=network-online.target\n\
         Wants=network-online.target\n\
         \n\
         [Service]\n\
         ExecStart={command}\n\
         Restart=on-failure\n\
         RestartSec=10\n\
         KillMode=mixed\n\
         TimeoutStopSec={stop_seconds}\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

/// A word for ExecStart, quoted when it holds a space or a quote.
fn quoted(word: &str) -> String {
    if word
        .chars()
        .any(|c| c.is_whitespace() || c == '"' || c == '\\')
    {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        word.to_owned()
    }
}

/// The user's systemd unit folder.
fn unit_folder() -> Result<PathBuf, CliError> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|value| !value.is_empty()) {
        Some(config) => PathBuf::from(config),
        None => PathBuf::from(std::env::var_os("HOME").ok_or_else(|| {
            CliError::Failure(
                "neither XDG_CONFIG_HOME nor HOME is set: the unit has no folder".to_owned(),
            )
        })?)
        .join(".config"),
    };
    Ok(config.join("systemd/user"))
}

/// Writes the unit, then asks systemd to load, enable and start it.
pub fn install(data_dir: &Path, arguments: &DaemonTimings) -> Result<(), CliError> {
    if !cfg!(target_os = "linux") {
        return Err(CliError::Failure(
            "`handoff serve --install` writes a systemd unit, which only Linux has\nhint: start `handoff serve` at login with launchd (macOS) or the Task Scheduler (Windows)".to_owned(),
        ));
    }
    let program = std::env::current_exe().map_err(|error| {
        CliError::Failure(format!("this program's path cannot be told: {error}"))
    })?;
    let folder = unit_folder()?;
    let path = folder.join(UNIT);
    std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::write(&path, unit_text(&program, data_dir, arguments)))
        .map_err(|error| {
            CliError::Failure(format!("{} cannot be written: {error}", path.display()))
        })?;
    println!("wrote {}", path.display());
    for step in [
        &["--user", "daemon-reload"][..],
        &["--user", "enable", "--now", UNIT],
    ] {
        let ran = std::process::Command::new("systemctl").args(step).output();
        let failed = match ran {
            Ok(output) if output.status.success() => None,
            Ok(output) => Some(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
            Err(error) => Some(error.to_string()),
        };
        if let Some(why) = failed {
            return Err(CliError::Failure(format!(
                "`systemctl {}` failed: {why}\nhint: the unit is written; start it with `systemctl --user enable --now {UNIT}` once your user's systemd runs, or run `handoff serve` yourself",
                step.join(" ")
            )));
        }
    }
    println!("enabled and started {UNIT}: the daemon runs now and at every login (`handoff status` says what it does; `journalctl --user -u {UNIT}` and `handoff log` what it did)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_serve_on_the_data_folder_and_gives_its_runs_time_to_end() {
        let unit = unit_text(
            Path::new("/usr/bin/handoff"),
            Path::new("/home/me/My Data"),
            &DaemonTimings {
                sync_seconds: Some(60),
                grace_seconds: None,
            },
        );
        assert!(
            unit.contains("ExecStart=/usr/bin/handoff --data-dir \"/home/me/My Data\" serve --sync-seconds 60\n"),
            "{unit}"
        );
        assert!(unit.contains("TimeoutStopSec=165\n"), "{unit}");
        assert!(unit.contains("WantedBy=default.target"), "{unit}");
    }
}
