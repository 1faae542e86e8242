//! `handoff serve`, the daemon, as an owner runs it with no window: it takes over what a
//! killed command left in the queue and opens the PRs by itself, `handoff status` says
//! what it does, SIGTERM lets the run under way end and leaves the queued one for the
//! next start, which takes it over at once; a second daemon on the same data folder is
//! refused; the owner's `@handoff` comment on a labelled issue becomes a PR with the
//! daemon alone; and `--install` writes and starts a systemd user unit.

use handoff_test_support as support;

use std::time::Duration;

use support::cli_process::{ok_text, text, Cli};
use support::eventually::{eventually, eventually_true};
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

fn json_of(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&ok_text(output)).unwrap()
}

/// Asks `handoff status --json` until `accept` likes it.
async fn status_until(
    cli: &Cli<'_>,
    what: &str,
    accept: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    eventually(&format!("the status says {what}"), || async {
        let status = json_of(&cli.run(&["status", "--json"]).await);
        accept(&status).then_some(status)
    })
    .await
}

async fn run_of(cli: &Cli<'_>, item: &str) -> serde_json::Value {
    json_of(&cli.run(&["feedback", "show", item, "--json"]).await)["runs"][0].clone()
}

fn sigterm(pid: u32) {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_drives_the_queue_alone_and_a_sigterm_loses_nothing() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;
    ok_text(&cli.run(&["config", "set", "queue.slots", "1"]).await);
    let killed_item = cli
        .add_feedback("Killed with its command\n@@sleep 107\n@@write late.txt late")
        .await;
    // The second works a while: the daemon is told to stop while it does.
    let second = cli
        .add_feedback("Second\n@@sleep 4\n@@write second.txt ok")
        .await;
    let third = cli.add_feedback("Third\n@@write third.txt ok").await;

    // A command queues all three and dies while the first runs.
    let mut adding = cli
        .command(&["queue", "add", "--all-new", REPO])
        .spawn()
        .unwrap();
    eventually_true("the first run's agent starts", || async {
        let run = run_of(&cli, &killed_item).await;
        run["status"] == "running"
            && ok_text(&cli.run(&["runs", "logs", &run["id"].to_string()]).await)
                .contains("the agent starts")
    })
    .await;
    adding.start_kill().unwrap();
    adding.wait().await.unwrap();
    let none = ok_text(&cli.run(&["status"]).await);
    assert!(
        none.contains("daemon: none serves this data folder"),
        "{none}"
    );

    let daemon = cli
        .command(&["serve", "--sync-seconds", "3600", "--grace-seconds", "60"])
        .spawn()
        .unwrap();
    let daemon_pid = daemon.id().unwrap();
    // It takes over the second run and drives it.
    let second_run = run_of(&cli, &second).await["id"].as_i64().unwrap();
    let serving = status_until(&cli, "driving the second run", |status| {
        status["daemon"]["driving"]
            .as_array()
            .is_some_and(|runs| runs.contains(&serde_json::json!(second_run)))
    })
    .await;
    assert_eq!(serving["daemon"]["pid"], daemon_pid, "{serving}");
    let said = ok_text(&cli.run(&["status"]).await);
    assert!(said.contains(&format!("(process {daemon_pid})")), "{said}");
    assert!(
        said.contains(&format!("driving: run {second_run}")),
        "{said}"
    );
    let refused = cli.run(&["serve"]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains(&format!(
            "a daemon already serves this data folder (process {daemon_pid})"
        )),
        "{}",
        text(&refused)
    );
    let killed = run_of(&cli, &killed_item).await;
    assert_eq!(killed["status"], "failed", "{killed}");
    assert_eq!(killed["failure_code"], "abandoned", "{killed}");

    // SIGTERM while the second run works: it ends with its PR, the third stays queued.
    eventually_true("the second run's agent starts", || async {
        ok_text(&cli.run(&["runs", "logs", &second_run.to_string()]).await)
            .contains("the agent starts")
    })
    .await;
    sigterm(daemon_pid);
    let stopped = tokio::time::timeout(Duration::from_secs(90), daemon.wait_with_output())
        .await
        .expect("the daemon stops once its run has ended")
        .unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped));
    assert!(
        text(&stopped).contains("handoff serve: stopped"),
        "{}",
        text(&stopped)
    );
    assert_eq!(run_of(&cli, &second).await["status"], "succeeded");
    assert_eq!(
        run_of(&cli, &third).await["status"],
        "queued",
        "nothing new started"
    );
    assert_eq!(fake.pulls(REPO).len(), 1);

    // The next start takes the third over at once and opens its PR.
    let restarted = cli
        .command(&["serve", "--sync-seconds", "3600"])
        .spawn()
        .unwrap();
    eventually_true("the third run succeeds", || async {
        run_of(&cli, &third).await["status"] == "succeeded"
    })
    .await;
    sigterm(restarted.id().unwrap());
    let stopped = tokio::time::timeout(Duration::from_secs(30), restarted.wait_with_output())
        .await
        .expect("an idle daemon stops at once")
        .unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped));
    assert_eq!(fake.pulls(REPO).len(), 2);
    for item in [&second, &third] {
        let shown = json_of(&cli.run(&["feedback", "show", item, "--json"]).await);
        assert_eq!(shown["feedback"]["status"], "WAITING_FOR_REVIEW", "{shown}");
    }
    let log = ok_text(&cli.run(&["log", "--lines", "400"]).await);
    assert!(log.contains("the daemon serves this data folder"), "{log}");
    assert!(log.contains("the daemon stopped"), "{log}");
    let gone = ok_text(&cli.run(&["status"]).await);
    assert!(
        gone.contains("daemon: none serves this data folder"),
        "{gone}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_alone_turns_the_owners_handoff_comment_on_a_labelled_issue_into_a_pr() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;
    let daemon = cli
        .command(&["serve", "--sync-seconds", "1"])
        .spawn()
        .unwrap();
    // No window and no command line from here: the owner is on GitHub (on a phone).
    let issue = fake.create_issue(
        REPO,
        OWNER,
        "Greeting",
        "Say hello on the front page.",
        &["feedback"],
    );
    let command = fake.add_comment(
        REPO,
        issue,
        OWNER,
        "@handoff Start with a greeting file.\n@@write hello.txt hello",
    );
    let answer = eventually("the daemon answers the command", || async {
        fake.comments(REPO, issue)
            .into_iter()
            .map(|(_, _, body)| body)
            .find(|body| body.starts_with("<!-- handoff:answer "))
    })
    .await;
    assert!(answer.contains("succeeded: PR #"), "{answer}");
    let pulls = fake.pulls(REPO);
    assert_eq!(pulls.len(), 1, "the daemon opened the PR");
    assert_eq!(
        fake.reactions_on(command),
        vec![(OWNER.to_owned(), "eyes".to_owned())]
    );
    let shown = ok_text(&cli.run(&["feedback", "list", "--json"]).await);
    assert!(shown.contains("WAITING_FOR_REVIEW"), "{shown}");

    sigterm(daemon.id().unwrap());
    let stopped = tokio::time::timeout(Duration::from_secs(30), daemon.wait_with_output())
        .await
        .expect("an idle daemon stops at once")
        .unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped));
    let log = ok_text(&cli.run(&["log", "--lines", "400"]).await);
    assert!(log.contains("the owner gave a @handoff command"), "{log}");
    assert!(log.contains("a @handoff command began a run"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn install_writes_a_user_unit_and_asks_systemd_to_start_it() {
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let config = tempfile::tempdir().unwrap();
    // A systemctl of our own records what it was asked; the machine's systemd is left alone.
    let bin = tempfile::tempdir().unwrap();
    let asked = bin.path().join("asked.txt");
    let systemctl = bin.path().join("systemctl");
    std::fs::write(
        &systemctl,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\n", asked.display()),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", systemctl.to_str().unwrap()])
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let config_home = config.path().display().to_string();

    let installed = cli
        .run_with(
            &["serve", "--install", "--sync-seconds", "120"],
            None,
            &[("PATH", &path), ("XDG_CONFIG_HOME", &config_home)],
        )
        .await;

    let printed = ok_text(&installed);
    assert!(
        printed.contains("enabled and started handoff.service"),
        "{printed}"
    );
    let unit = std::fs::read_to_string(config.path().join("systemd/user/handoff.service")).unwrap();
    assert!(
        unit.contains(&format!(
            "ExecStart={} --data-dir {} serve --sync-seconds 120\n",
            support::cargo_binary("handoff").display(),
            dir.path().display()
        )),
        "{unit}"
    );
    assert_eq!(
        std::fs::read_to_string(&asked).unwrap(),
        "--user daemon-reload\n--user enable --now handoff.service\n"
    );
}
