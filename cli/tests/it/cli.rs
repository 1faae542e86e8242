//! The `handoff` command line against a real data folder: what it prints, the exit codes
//! that tell usage errors (2) from failures (1), and that bad input changes nothing.

use handoff_test_support as support;

use std::path::Path;
use std::process::{Command, Output};

use handoff::store::FeedbackFilter;
use handoff::Store;
use serde_json::Value;
use support::eventually::eventually;
use support::seed;

fn handoff(data_dir: &Path, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args(arguments)
        .env("HANDOFF_DATA_DIR", data_dir)
        .env_remove("EDITOR")
        .output()
        .expect("handoff runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "failed: {}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

/// The whole data folder's database, as bytes of its tables (not the file: WAL moves it).
async fn snapshot(data_dir: &Path) -> String {
    let store = Store::open_in(data_dir).await.unwrap();
    let mut text = String::new();
    for table in [
        "repos",
        "feedback",
        "followups",
        "runs",
        "status_changes",
        "quota_uses",
    ] {
        let count: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                .fetch_one(store.pool())
                .await
                .unwrap();
        text.push_str(&format!("{table}={count};"));
    }
    let statuses: Vec<String> = sqlx::query_scalar("SELECT status FROM feedback ORDER BY id")
        .fetch_all(store.pool())
        .await
        .unwrap();
    text.push_str(&statuses.join(","));
    store.close().await;
    text
}

#[test]
fn help_explains_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let help = handoff(dir.path(), &["--help"]);
    assert!(help.status.success());
    let text = stdout(&help);
    for word in [
        "repo",
        "feedback",
        "followup",
        "runs",
        "HANDOFF_DATA_DIR",
        "Exit codes",
    ] {
        assert!(text.contains(word), "--help lacks {word}:\n{text}");
    }
    for group in ["repo", "feedback", "followup", "runs"] {
        let help = handoff(dir.path(), &[group, "--help"]);
        assert!(help.status.success(), "{group} --help");
        assert!(stdout(&help).contains("list"), "{group} --help names list");
    }
    let add_help = stdout(&handoff(dir.path(), &["feedback", "add", "--help"]));
    assert!(
        add_help.contains("--repo") && add_help.contains("standard input"),
        "{add_help}"
    );
}

#[test]
fn repo_add_then_list_as_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let added = handoff(
        dir.path(),
        &[
            "repo",
            "add",
            "https://github.com/octocat/hello-world",
            "--base",
            "develop",
            "--quota",
            "30",
        ],
    );
    assert!(added.status.success(), "{}", stderr(&added));
    assert!(stdout(&added).contains("connected octocat/hello-world (base develop"));

    let list = handoff(dir.path(), &["repo", "list"]);
    assert!(
        stdout(&list).contains("octocat/hello-world  develop"),
        "{}",
        stdout(&list)
    );

    let repos = json(&handoff(dir.path(), &["repo", "list", "--json"]));
    assert_eq!(repos[0]["name"]["owner"], "octocat");
    assert_eq!(repos[0]["default_branch"], "develop");
    assert_eq!(repos[0]["monthly_run_quota"], 30);

    let shown = json(&handoff(
        dir.path(),
        &["repo", "show", "octocat/hello-world", "--json"],
    ));
    assert_eq!(shown["quota_this_month"]["left"], 30);
}

#[tokio::test]
async fn a_bad_repository_name_is_a_usage_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);
    let before = snapshot(dir.path()).await;

    for bad in [
        "octocat",
        "a/b/c",
        "bad-/y",
        "octocat/hello world",
        "octocat/..",
    ] {
        let output = handoff(dir.path(), &["repo", "add", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}: {}", stderr(&output));
        let message = stderr(&output);
        assert!(message.contains("bad repository"), "{bad}: {message}");
    }

    assert_eq!(snapshot(dir.path()).await, before);
}

#[tokio::test]
async fn feedback_add_list_and_show() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);

    let added = json(&handoff(
        dir.path(),
        &[
            "feedback",
            "add",
            "--repo",
            "octocat/hello-world",
            "--json",
            "The signup button is too small\n\nOn phones.",
        ],
    ));
    assert_eq!(added["title"], "The signup button is too small");
    assert_eq!(added["status"], "NEW");
    let branch = added["head_branch"].as_str().unwrap();
    assert!(branch.starts_with("feedback/f2c-fb-"), "{branch}");
    let id = added["id"].as_i64().unwrap().to_string();

    let listed = handoff(dir.path(), &["feedback", "list"]);
    let text = stdout(&listed);
    assert!(text.contains("New (1)"), "{text}");
    assert!(text.contains("The signup button is too small"), "{text}");

    let dashboard = json(&handoff(dir.path(), &["feedback", "list", "--json"]));
    assert_eq!(dashboard["total"], 1);
    assert_eq!(dashboard["groups"][0]["status"], "NEW");

    handoff(
        dir.path(),
        &["followup", "add", &id, "-m", "Make it 44px high"],
    );
    let shown = json(&handoff(dir.path(), &["feedback", "show", &id, "--json"]));
    assert_eq!(shown["follow_ups"][0]["body"], "Make it 44px high");
    assert_eq!(shown["follow_ups"][0]["source"], "owner");
    assert_eq!(shown["status_history"][0]["to"], "NEW");

    let text = stdout(&handoff(dir.path(), &["feedback", "show", &id]));
    assert!(
        text.contains("Make it 44px high") && text.contains("history:"),
        "{text}"
    );
}

#[tokio::test]
async fn feedback_body_can_come_from_stdin_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);
    let file = dir.path().join("body.md");
    std::fs::write(&file, "From a file\nwith two lines").unwrap();

    let from_file = json(&handoff(
        dir.path(),
        &[
            "feedback",
            "add",
            "--repo",
            "octocat/hello-world",
            "--file",
            file.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(from_file["body"], "From a file\nwith two lines");

    let mut child = Command::new(env!("CARGO_BIN_EXE_handoff"))
        .args([
            "feedback",
            "add",
            "--repo",
            "octocat/hello-world",
            "--json",
            "-",
        ])
        .env("HANDOFF_DATA_DIR", dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"From stdin")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(json(&output)["body"], "From stdin");
}

#[tokio::test]
async fn an_empty_body_is_a_usage_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);
    let before = snapshot(dir.path()).await;

    let output = handoff(
        dir.path(),
        &["feedback", "add", "--repo", "octocat/hello-world", "  "],
    );

    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output).trim(),
        "error: feedback body is empty: write what should change"
    );
    assert_eq!(snapshot(dir.path()).await, before);
}

#[tokio::test]
async fn unknown_ids_are_failures_with_one_line_and_at_most_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);
    let before = snapshot(dir.path()).await;

    for arguments in [
        &["feedback", "show", "404"][..],
        &["followup", "add", "404", "-m", "hello"],
        &["runs", "list", "--feedback", "404"],
        &["feedback", "add", "--repo", "nobody/nothing", "text"],
    ] {
        let output = handoff(dir.path(), arguments);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{arguments:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        let lines: Vec<&str> = message.lines().collect();
        assert!(
            lines[0].starts_with("error: no "),
            "{arguments:?}: {message}"
        );
        // What happened is one line; what to type next, when the command line knows,
        // is one line more.
        assert!(lines.len() <= 2, "{arguments:?}: {message}");
        assert!(
            lines[1..]
                .iter()
                .all(|line| line.starts_with("hint: ") && line.contains("`handoff ")),
            "{arguments:?}: {message}"
        );
    }
    assert_eq!(snapshot(dir.path()).await, before);
}

#[tokio::test]
async fn a_follow_up_on_a_merged_item_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    store.close().await;
    let merged = items
        .iter()
        .find(|item| item.title == seed::MERGED_TITLE)
        .unwrap();
    let before = snapshot(dir.path()).await;

    let output = handoff(
        dir.path(),
        &[
            "followup",
            "add",
            &merged.id.to_string(),
            "-m",
            "one more thing",
        ],
    );

    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).trim(),
        format!(
            "error: feedback {} is MERGED: submit new feedback",
            merged.id
        )
    );
    assert_eq!(snapshot(dir.path()).await, before);
}

#[test]
fn unknown_commands_and_options_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(handoff(dir.path(), &["fly"]).status.code(), Some(2));
    assert_eq!(
        handoff(dir.path(), &["runs", "list", "--colour"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        handoff(dir.path(), &["feedback", "list", "--status", "DONE"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        handoff(dir.path(), &["feedback", "show", "twelve"])
            .status
            .code(),
        Some(2)
    );
}

#[tokio::test]
async fn every_listing_speaks_json() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let items = seed::seed_dashboard(&store).await;
    store.close().await;
    let waiting = items
        .iter()
        .find(|item| item.title == seed::WAITING_TITLE)
        .unwrap();

    let runs = json(&handoff(dir.path(), &["runs", "list", "--json"]));
    assert_eq!(runs.as_array().unwrap().len(), 4);
    let active = json(&handoff(
        dir.path(),
        &["runs", "list", "--active", "--json"],
    ));
    assert_eq!(active.as_array().unwrap().len(), 1);
    assert_eq!(active[0]["status"], "queued");

    let thread = json(&handoff(
        dir.path(),
        &["followup", "list", &waiting.id.to_string(), "--json"],
    ));
    assert_eq!(thread[1]["source"], "visitor");
    assert_eq!(thread[1]["included_in_prompts"], false);

    let filtered = json(&handoff(
        dir.path(),
        &["feedback", "list", "--status", "failed", "--json"],
    ));
    assert_eq!(filtered["total"], 1);

    let info = json(&handoff(dir.path(), &["info", "--json"]));
    assert_eq!(info["data_dir"], dir.path().to_str().unwrap());

    let text = stdout(&handoff(dir.path(), &["runs", "list"]));
    assert!(text.starts_with("RUN"), "{text}");
}

#[tokio::test]
async fn the_cli_and_the_library_see_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    handoff(dir.path(), &["repo", "add", "octocat/hello-world"]);
    handoff(
        dir.path(),
        &[
            "feedback",
            "add",
            "--repo",
            "octocat/hello-world",
            "From the CLI",
        ],
    );

    let store = Store::open_in(dir.path()).await.unwrap();
    let dashboard = store
        .feedback()
        .dashboard(&FeedbackFilter::default())
        .await
        .unwrap();
    assert_eq!(dashboard.groups[0].cards[0].title, "From the CLI");
    assert_eq!(
        dashboard.groups[0].cards[0].source,
        handoff::domain::FeedbackSource::Cli
    );
}

#[tokio::test]
async fn runs_show_tells_how_a_run_ended() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;
    let failed = store
        .runs()
        .runs(&handoff::store::RunFilter::default())
        .await
        .unwrap()
        .into_iter()
        .find(|run| run.status == handoff::domain::RunStatus::Failed)
        .unwrap();
    store
        .runs()
        .add_run_note(failed.id, "plan comment not found: test planned anew")
        .await
        .unwrap();
    store.close().await;

    let text = stdout(&handoff(
        dir.path(),
        &["runs", "show", &failed.id.to_string()],
    ));
    assert!(text.contains("code · failed on docker"), "{text}");
    assert!(
        text.contains("failure:  the agent produced no changes (agent_failed)"),
        "{text}"
    );
    assert!(
        text.contains("note:     plan comment not found: test planned anew"),
        "{text}"
    );

    let json = json(&handoff(
        dir.path(),
        &["runs", "show", &failed.id.to_string(), "--json"],
    ));
    assert_eq!(json["run"]["status"], "failed");
    assert_eq!(json["output"], serde_json::Value::Null);
    let none = handoff(
        dir.path(),
        &["runs", "show", &failed.id.to_string(), "--output"],
    );
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(
        handoff(dir.path(), &["runs", "show", "999"]).status.code(),
        Some(1)
    );
}

#[test]
fn the_local_backend_and_the_sandbox_network_are_explicit_choices_per_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = "octocat/hello-world";
    let show = || json(&handoff(dir.path(), &["repo", "show", repo, "--json"]));
    assert!(handoff(dir.path(), &["repo", "add", repo]).status.success());
    assert_eq!(
        show()["network_mode"],
        "allowlist",
        "the allow-list is the default"
    );

    let refused = handoff(dir.path(), &["repo", "set", repo, "--backend", "local"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("no isolation"),
        "{}",
        stderr(&refused)
    );
    assert!(
        stderr(&refused).contains("--confirm-no-isolation"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(show()["sandbox_backend"], "docker", "nothing changed");
    let confirmed = handoff(
        dir.path(),
        &[
            "repo",
            "set",
            repo,
            "--backend",
            "local",
            "--confirm-no-isolation",
        ],
    );
    assert!(confirmed.status.success(), "{}", stderr(&confirmed));
    assert_eq!(show()["sandbox_backend"], "local");

    let metadata = handoff(
        dir.path(),
        &["repo", "set", repo, "--allowed-hosts", "169.254.169.254"],
    );
    assert_eq!(metadata.status.code(), Some(2));
    assert!(
        stderr(&metadata).contains("never allowed"),
        "{}",
        stderr(&metadata)
    );
    let unknown_mode = handoff(dir.path(), &["repo", "set", repo, "--network", "closed"]);
    assert_eq!(unknown_mode.status.code(), Some(2));
    assert!(
        stderr(&unknown_mode).contains("allowlist"),
        "{}",
        stderr(&unknown_mode)
    );
    assert!(
        show()["allowed_hosts"].as_array().unwrap().is_empty(),
        "nothing changed"
    );

    let set = handoff(
        dir.path(),
        &[
            "repo",
            "set",
            repo,
            "--network",
            "none",
            "--allowed-hosts",
            "registry.npmjs.org, *.pypi.org",
        ],
    );
    assert!(set.status.success(), "{}", stderr(&set));
    let shown = show();
    assert_eq!(shown["network_mode"], "none");
    assert_eq!(
        shown["allowed_hosts"],
        serde_json::json!(["registry.npmjs.org", "*.pypi.org"])
    );
    let text = stdout(&handoff(dir.path(), &["repo", "show", repo]));
    assert!(text.contains("network:       none"), "{text}");
    assert!(text.contains("test failures: an issue each"), "{text}");

    let kept = handoff(dir.path(), &["repo", "set", repo, "--test-issues", "false"]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert_eq!(show()["file_test_issues"], false);
    let text = stdout(&handoff(dir.path(), &["repo", "show", repo]));
    assert!(
        text.contains("test failures: in the results comment only"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_locked_by_another_process_is_waited_for_then_refused_clearly_and_nothing_is_lost(
) {
    use sqlx::Connection as _;

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    seed::add_repo(&store, seed::DEMO_REPO).await;
    let item = seed::add_feedback(&store, seed::DEMO_REPO, "Locked", "While locked").await;
    store.close().await;
    let database = dir.path().join(handoff::store::DATABASE_FILE_NAME);
    let mut holder = sqlx::SqliteConnection::connect(&format!("sqlite://{}", database.display()))
        .await
        .unwrap();
    let add = |message: &'static str| {
        let path = dir.path().to_owned();
        let id = item.id.0.to_string();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_handoff"))
                .args(["followup", "add", &id, "-m", message])
                .env("HANDOFF_DATA_DIR", &path)
                .env("HANDOFF_LOG", "debug")
                .output()
                .expect("handoff runs")
        })
    };

    // Another process is writing when the command starts: the command waits for it.
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .unwrap();
    let mut log = handoff::log_file::LogFollower::from_end(dir.path());
    let waiting = add("waited for the lock");
    eventually("the command has started", || {
        let started = log
            .new_lines()
            .unwrap()
            .iter()
            .any(|line| line.contains("command started"));
        std::future::ready(started.then_some(()))
    })
    .await;
    assert!(
        !waiting.is_finished(),
        "the command cannot finish while the other process writes"
    );
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let waited = waiting.await.unwrap();
    assert!(waited.status.success(), "{}", stderr(&waited));

    // It holds the lock past the wait: the command gives up with a clear error.
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut holder)
        .await
        .unwrap();
    let refused = add("sent while locked").await.unwrap();
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("the database is locked by another process"),
        "{}",
        stderr(&refused)
    );
    assert!(
        stderr(&refused).contains("hint: nothing was changed"),
        "{}",
        stderr(&refused)
    );

    // Once free, the same command works; each message is there once.
    let again = add("sent while locked").await.unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let store = Store::open_in(dir.path()).await.unwrap();
    let bodies: Vec<String> = store
        .feedback()
        .follow_ups(item.id)
        .await
        .unwrap()
        .into_iter()
        .map(|follow_up| follow_up.body)
        .collect();
    assert_eq!(bodies, ["waited for the lock", "sent while locked"]);
}

#[test]
fn how_long_kept_copies_stay_is_a_number_of_days() {
    let data = tempfile::tempdir().unwrap();
    let wrong = handoff(
        data.path(),
        &["config", "set", "workspace.kept_copy_days", "a fortnight"],
    );
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).contains("a whole number from 0 (keep no copies) to 3650"),
        "{}",
        stderr(&wrong)
    );
    let unset = handoff(data.path(), &["config", "get", "workspace.kept_copy_days"]);
    assert_eq!(stdout(&unset).trim(), "(default)", "nothing was stored");

    let none = handoff(
        data.path(),
        &["config", "set", "workspace.kept_copy_days", "0"],
    );
    assert!(none.status.success(), "{}", stderr(&none));
    let read = handoff(data.path(), &["config", "get", "workspace.kept_copy_days"]);
    assert_eq!(stdout(&read).trim(), "0");
}

#[test]
fn a_providers_address_is_checked_when_it_is_set() {
    let data = tempfile::tempdir().unwrap();
    for (setting, address) in [
        ("provider.anthropic.api_base", "http://gateway.example.net"),
        ("provider.openai.api_base", "ftp://api.openai.com"),
        ("provider.openai.api_base", "not an address"),
    ] {
        let refused = handoff(data.path(), &["config", "set", setting, address]);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{setting} {address}: {}",
            stderr(&refused)
        );
        assert!(stderr(&refused).contains(setting), "{}", stderr(&refused));
        let unset = handoff(data.path(), &["config", "get", setting]);
        assert_eq!(stdout(&unset).trim(), "(default)", "nothing was stored");
    }
    // https anywhere, or plain http on this machine (a stand-in or a local gateway).
    for address in ["https://gateway.example.net", "http://127.0.0.1:8080"] {
        let set = handoff(
            data.path(),
            &["config", "set", "provider.anthropic.api_base", address],
        );
        assert!(set.status.success(), "{address}: {}", stderr(&set));
    }
}
