//! `handoff queue` as a person uses it: `queue add` queues several items and drives
//! them as slots come free, `queue list` shows who runs and who waits at which place,
//! `queue cancel` takes a waiting run out, and `config set queue.slots` refuses what is
//! not a slot count.

use handoff_test_support as support;

use std::time::Duration;

use support::cli_process::{ok_text, text, Cli};
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
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let listed = loop {
        let listed = ok_text(&cli.run(&["queue", "list"]).await);
        if listed.contains("running") && listed.contains("queued #2") {
            break listed;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never two waiting:\n{listed}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
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
