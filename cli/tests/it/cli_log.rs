//! The log file from the command line: a failed command leaves a line in it (and prints
//! the core's message with this command line's hint), `handoff log` prints its end and
//! `--follow` what is written after, the level is a setting and an environment variable,
//! and choices that are fixed are listed and checked by the parser.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn handoff(data_dir: &Path, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(arguments)
        .env("HANDOFF_DATA_DIR", data_dir)
        .env_remove("HANDOFF_LOG")
        .output()
        .expect("handoff runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_failed_command_says_what_to_do_and_leaves_a_line_in_the_log() {
    let data = tempfile::tempdir().unwrap();
    let missing = handoff(data.path(), &["feedback", "show", "999"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr).trim(),
        "error: no feedback 999\nhint: `handoff feedback list` shows the ids"
    );

    let log = handoff(data.path(), &["log"]);
    assert!(log.status.success(), "{}", text(&log.stderr));
    let printed = text(&log.stdout);
    let line = printed
        .lines()
        .find(|line| line.contains("the command failed"))
        .unwrap_or_else(|| panic!("no line for the failed command:\n{printed}"));
    assert!(line.starts_with("cli["), "{line}");
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("command=\"feedback\""), "{line}");
    assert!(line.contains("no feedback 999"), "{line}");

    let folder = handoff(data.path(), &["log", "--path"]);
    assert_eq!(
        text(&folder.stdout).trim(),
        data.path().join("logs").display().to_string()
    );
}

#[test]
fn a_database_that_will_not_open_is_in_the_log_and_the_log_still_reads() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join(handoff::store::DATABASE_FILE_NAME),
        b"this is not a database at all, only text long enough to look like a file",
    )
    .unwrap();
    let refused = handoff(data.path(), &["feedback", "list"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("hint: move the file away"),
        "{}",
        text(&refused.stderr)
    );

    let log = handoff(data.path(), &["log"]);
    assert!(log.status.success(), "{}", text(&log.stderr));
    assert!(
        text(&log.stdout).contains("the database could not be opened"),
        "{}",
        text(&log.stdout)
    );
}

#[test]
fn follow_prints_the_lines_written_after_it_started() {
    let data = tempfile::tempdir().unwrap();
    handoff(data.path(), &["feedback", "show", "1"]);
    let mut follower = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(["log", "--follow", "--lines", "0"])
        .env("HANDOFF_DATA_DIR", data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It says when it follows: from then on, what is written reaches it.
    let mut told = String::new();
    BufReader::new(follower.stderr.take().unwrap())
        .read_line(&mut told)
        .unwrap();
    assert!(told.starts_with("following the log in "), "{told}");
    let (lines_sender, lines) = std::sync::mpsc::channel();
    let stdout = follower.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_sender.send(line).is_err() {
                return;
            }
        }
    });
    handoff(data.path(), &["feedback", "show", "2"]);

    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
            if seen.iter().any(|line| line.contains("no feedback 2")) {
                break;
            }
        }
    }
    follower.kill().unwrap();
    follower.wait().unwrap();
    assert!(
        seen.iter().any(|line| line.contains("no feedback 2")),
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|line| line.contains("no feedback 1")),
        "--lines 0 printed an older line: {seen:?}"
    );
}

#[test]
fn the_level_is_a_setting_and_the_environment_overrides_it() {
    let data = tempfile::tempdir().unwrap();
    let wrong = handoff(data.path(), &["config", "set", "log.level", "loud"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains("error, warn, info, debug, trace"),
        "{}",
        text(&wrong.stderr)
    );

    handoff(data.path(), &["repo", "list"]);
    let log = handoff(data.path(), &["log"]);
    assert!(
        !text(&log.stdout).contains("command started"),
        "info hides debug lines"
    );

    let set = handoff(data.path(), &["config", "set", "log.level", "debug"]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    handoff(data.path(), &["repo", "list"]);
    let log = handoff(data.path(), &["log"]);
    assert!(
        text(&log.stdout).contains("command started command=\"repo\""),
        "{}",
        text(&log.stdout)
    );

    // The environment wins over the setting.
    let quiet = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(["feedback", "show", "7"])
        .env("HANDOFF_DATA_DIR", data.path())
        .env("HANDOFF_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(quiet.status.code(), Some(1));
    let log = handoff(data.path(), &["log"]);
    assert!(
        !text(&log.stdout).contains("no feedback 7"),
        "a warning at level error"
    );
}

#[test]
fn options_with_fixed_choices_list_them_and_a_wrong_one_names_them() {
    let data = tempfile::tempdir().unwrap();
    for (arguments, choices) in [
        (
            vec!["run", "--help"],
            "[possible values: docker, e2b, local]",
        ),
        (
            vec!["repo", "set", "--help"],
            "[possible values: opencode, claude, aider, codex, custom]",
        ),
        (
            vec!["pr", "list", "--help"],
            "[possible values: success, failure, pending, none]",
        ),
        (
            vec!["comment", "show", "--help"],
            "[possible values: review, plan, results, followups]",
        ),
        (vec!["config", "get", "--help"], "log.level"),
        (vec!["agent-image", "build", "--help"], "base"),
    ] {
        let help = handoff(data.path(), &arguments);
        assert!(help.status.success(), "{arguments:?}");
        let printed = text(&help.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            printed.contains(choices),
            "{arguments:?} lists no {choices}:\n{printed}"
        );
    }
    let wrong = handoff(data.path(), &["feedback", "list", "--status", "done"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr)
            .contains("[possible values: new, coding, waiting-for-review, failed, merged]"),
        "{}",
        text(&wrong.stderr)
    );
    let stored_word = handoff(
        data.path(),
        &["feedback", "list", "--status", "WAITING_FOR_REVIEW"],
    );
    assert!(
        stored_word.status.success(),
        "{}",
        text(&stored_word.stderr)
    );
    let stage = handoff(data.path(), &["qa", "deploy", "octocat/hello-world", "1"]);
    assert_eq!(stage.status.code(), Some(2));
    assert!(
        text(&stage.stderr).contains("review, plan, test, fix, auto"),
        "{}",
        text(&stage.stderr)
    );
}
