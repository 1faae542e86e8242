//! `handoff queue` as a person uses it: `queue add` queues several items and drives
//! them as slots come free, `queue list` shows who runs and who waits at which place,
//! `queue cancel` takes a waiting run out, and `config set queue.slots` refuses what is
//! not a slot count.

use handoff_test_support as support;

use std::time::Duration;

use support::cli_process::{ok_text, process_alive, text, Cli};
use support::eventually::eventually;
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

#[tokio::test(flavor = "multi_thread")]
async fn queue_add_list_and_cancel_from_the_command_line() {
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
    let mut items = Vec::new();
    for index in 0..3 {
        items.push(
            cli.add_feedback(&format!(
                "Item {index}\n@@sleep 2\n@@write item-{index}.txt ok"
            ))
            .await,
        );
    }

    let adding = cli
        .command(&["queue", "add", "--all-new", REPO])
        .spawn()
        .unwrap();
    // Once the first runs, the other two wait at places 1 and 2.
    let listed = eventually("one run going and two waiting", || async {
        let listed = ok_text(&cli.run(&["queue", "list"]).await);
        (listed.contains("running") && listed.contains("queued #2")).then_some(listed)
    })
    .await;
    assert!(listed.contains("queued #1"), "{listed}");
    assert!(listed.contains("1 of 1 slots taken"), "{listed}");
    assert!(listed.contains("code of feedback"), "{listed}");
    let json = ok_text(&cli.run(&["queue", "list", "--json"]).await);
    let entries: serde_json::Value = serde_json::from_str(&json).unwrap();
    let last_waiting = entries
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["place"] == 2)
        .expect("the run at place 2")["run"]["id"]
        .to_string();

    let cancelled = ok_text(&cli.run(&["queue", "cancel", &last_waiting]).await);
    assert!(
        cancelled.contains(&format!("run {last_waiting}")),
        "{cancelled}"
    );

    let added = tokio::time::timeout(Duration::from_secs(120), adding.wait_with_output())
        .await
        .expect("queue add ends when its runs have")
        .unwrap();
    let printed = text(&added);
    assert_eq!(
        added.status.code(),
        Some(1),
        "one run was cancelled:\n{printed}"
    );
    for item in &items {
        assert!(
            printed.contains(&format!("feedback {item}: run")),
            "{printed}"
        );
    }
    assert_eq!(printed.matches(" succeeded").count(), 2, "{printed}");
    assert!(
        printed.contains(&format!("run {last_waiting} cancelled")),
        "{printed}"
    );
    assert!(printed.contains("1 run(s) did not succeed"), "{printed}");
    assert_eq!(fake.pulls(REPO).len(), 2);
    let empty = ok_text(&cli.run(&["queue", "list"]).await);
    assert!(empty.contains("The run queue is empty."), "{empty}");
}

#[tokio::test(flavor = "multi_thread")]
async fn slot_settings_refuse_what_is_not_a_slot_count() {
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    for (key, value) in [
        ("queue.slots", "0"),
        ("queue.slots", "two"),
        ("queue.slots", "none"),
        ("queue.slots.docker", "1.5"),
    ] {
        let refused = cli.run(&["config", "set", key, value]).await;
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{key}={value}: {}",
            text(&refused)
        );
        assert!(text(&refused).contains("at least 1"), "{}", text(&refused));
    }
    ok_text(
        &cli.run(&["config", "set", "queue.slots.docker", "none"])
            .await,
    );
    ok_text(&cli.run(&["config", "set", "queue.slots", "3"]).await);
    let shown = ok_text(&cli.run(&["config", "get", "queue.slots"]).await);
    assert!(shown.contains('3'), "{shown}");
}

fn json_of(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&ok_text(output)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_queue_driver_is_known_gone_at_once_and_queue_run_drives_the_rest() {
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
    ok_text(&cli.run(&["repo", "set", REPO, "--quota", "10"]).await);
    // The first agent works long (for a time no other test uses, to find it by).
    let killed_item = cli
        .add_feedback("Killed mid-run\n@@sleep 113\n@@write late.txt late")
        .await;
    let waiting_items = [
        cli.add_feedback("Second\n@@write second.txt ok").await,
        cli.add_feedback("Third\n@@write third.txt ok").await,
    ];

    let mut adding = cli
        .command(&["queue", "add", "--all-new", REPO])
        .spawn()
        .unwrap();
    let driver_pid = adding.id().unwrap();
    let killed_run = eventually("the first run's agent starts", || async {
        let entries = json_of(&cli.run(&["queue", "list", "--json"]).await);
        let running = entries
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| {
                entry["place"].is_null()
                    && entry["run"]["feedback_id"].as_i64() == killed_item.parse::<i64>().ok()
            })
            .map(|running| running["run"]["id"].to_string())?;
        ok_text(&cli.run(&["runs", "logs", &running]).await)
            .contains("the agent starts")
            .then_some(running)
    })
    .await;

    // While the driver lives, `queue run` takes nothing and says who has the runs.
    let while_alive = ok_text(&cli.run(&["queue", "run"]).await);
    assert!(
        while_alive.contains(&format!("2 queued runs wait for process {driver_pid} on ")),
        "{while_alive}"
    );
    assert!(
        while_alive.contains("which is still going"),
        "{while_alive}"
    );

    // SIGKILL: nothing of the driver gets to say goodbye.
    std::process::Command::new("kill")
        .args(["-KILL", &driver_pid.to_string()])
        .status()
        .unwrap();
    adding.wait().await.unwrap();

    // At once, not after a silence: the dead run gives up its slot, the two waiting
    // runs are taken over and opened their PRs.
    let taken = cli.run(&["queue", "run"]).await;
    let printed = text(&taken);
    assert!(taken.status.success(), "{printed}");
    assert!(
        printed.contains(&format!(
            "run {killed_run} ended: Handoff stopped while this run was going: the process that drove it (process {driver_pid} on "
        )),
        "{printed}"
    );
    assert!(printed.contains("ended without finishing it"), "{printed}");
    assert_eq!(printed.matches(": taken over").count(), 2, "{printed}");
    assert_eq!(printed.matches(" succeeded").count(), 2, "{printed}");
    assert_eq!(fake.pulls(REPO).len(), 2);
    assert!(
        !process_alive("sleep 113"),
        "the killed run's agent was stopped"
    );

    let killed = json_of(&cli.run(&["feedback", "show", &killed_item, "--json"]).await);
    assert_eq!(killed["feedback"]["status"], "FAILED", "{killed}");
    assert_eq!(killed["runs"][0]["status"], "failed", "{killed}");
    assert_eq!(killed["runs"][0]["failure_code"], "abandoned", "{killed}");
    for item in &waiting_items {
        let shown = json_of(&cli.run(&["feedback", "show", item, "--json"]).await);
        assert_eq!(shown["feedback"]["status"], "WAITING_FOR_REVIEW", "{shown}");
    }
    // One run for the one that started and died, one each for the two that ran.
    let repo = json_of(&cli.run(&["repo", "show", REPO, "--json"]).await);
    assert_eq!(repo["quota_this_month"]["used"], 3, "{repo}");
    let empty = ok_text(&cli.run(&["queue", "list"]).await);
    assert!(empty.contains("The run queue is empty."), "{empty}");
}
