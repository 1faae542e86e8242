//! `handoff run`, `handoff iterate` and `handoff runs logs|cancel` as a person uses them:
//! separate processes, the token and the E2B key in a real Secret Service, the fake
//! GitHub and the fake E2B, the scripted agent.

use handoff_test_support as support;

use std::time::Duration;

use support::cli_process::{ok_text, process_alive, scripted_agent_as_claude, text, Cli};
use support::eventually::{eventually, eventually_asking_every, eventually_true};
use support::fake_e2b::FakeE2b;
use support::fake_github::FakeGithub;
use support::fake_provider::{self, FakeProvider};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

/// Signed in to the fake GitHub, with the repository connected to run the scripted
/// agent on `backend`.
async fn set_up(fake: &FakeGithub, cli: &Cli<'_>, backend: &str) {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(fake, backend, &[]).await;
}

/// The repository connected on E2B, at the fake E2B with its key. The key is kept for
/// the E2B address in use, so the address comes first.
async fn set_up_on_e2b(fake: &FakeGithub, cli: &Cli<'_>, e2b: &FakeE2b) {
    set_up(fake, cli, "e2b").await;
    ok_text(
        &cli.run(&["config", "set", "e2b.api_base", &e2b.api_base()])
            .await,
    );
    ok_text(
        &cli.run(&["config", "set", "e2b.envd_url", &e2b.envd_url_template()])
            .await,
    );
    ok_text(
        &cli.run_with_input(&["secrets", "set", "e2b"], "e2b_key_for_tests_42")
            .await,
    );
}

/// The id of the first active run, once there is one.
async fn first_active_run(cli: &Cli<'_>) -> String {
    eventually("a run is active", || async {
        let listed = ok_text(&cli.run(&["runs", "list", "--active", "--json"]).await);
        let runs: serde_json::Value = serde_json::from_str(&listed).unwrap();
        runs.as_array()
            .unwrap()
            .first()
            .map(|run| run["id"].to_string())
    })
    .await
}

/// On E2B no forwarder of Handoff's sees the agent's calls: what the agent reports as it
/// runs (Claude Code's stream-json usage) is recorded call by call as it comes, and once
/// it reaches the run's budget the sandbox is ended, whatever the agent was doing.
#[tokio::test(flavor = "multi_thread")]
async fn an_e2b_run_is_ended_once_its_agents_reported_spend_reaches_its_budget() {
    let fake = FakeGithub::start().await;
    let e2b = FakeE2b::start("e2b_key_for_tests_42").await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up_on_e2b(&fake, &cli, &e2b).await;
    ok_text(&cli.run(&["config", "set", "budget.run_usd", "1"]).await);
    // $0.60, then $0.60 more: the second report takes the run to its $1 budget; the
    // agent would then wait ten minutes, and write a file, were it not ended.
    let feedback = cli
        .add_feedback(
            "Spend on E2B\n@@write a.txt begun\n@@report-usage claude-sonnet-4-5 200000 0\n\
             @@report-usage claude-sonnet-4-5 200000 0\n@@sleep 600\n@@write late.txt never",
        )
        .await;

    let run = cli.run(&["run", &feedback]).await;

    assert!(!run.status.success());
    let shown: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "show", "1", "--json"]).await)).unwrap();
    assert_eq!(shown["run"]["failure_code"], "budget_reached", "{shown}");
    let message = shown["run"]["failure_message"].as_str().unwrap();
    assert!(
        message.contains("as the agent reported its spend"),
        "{message}"
    );
    assert!(
        message.contains("this run's budget ($1.00) is spent: $1.20 and 400000 tokens"),
        "{message}"
    );
    assert_eq!(shown["run"]["spend_source"], "reported", "{shown}");
    let cost = shown["run"]["llm_cost_usd"].as_f64().unwrap();
    assert!((cost - 1.2).abs() < 1e-9, "{shown}");
    assert!(e2b.live_sandboxes().is_empty(), "the sandbox was ended");
    assert!(fake.pulls(REPO).is_empty(), "nothing was pushed");
    let logs = ok_text(&cli.run(&["runs", "logs", "1"]).await);
    assert!(
        logs.contains("no forwarder of Handoff's meters a run on E2B"),
        "{logs}"
    );
    assert!(
        logs.contains("budget reached as the agent reported its spend"),
        "{logs}"
    );
    // No forwarder of Handoff's stands there, so the log never claims calls are refused.
    assert!(
        logs.contains("counted as the agent reports it") && !logs.contains("refused once a"),
        "{logs}"
    );
    // The month counts it as the run goes: the next run is refused before it starts.
    ok_text(
        &cli.run(&["repo", "set", REPO, "--monthly-budget", "1"])
            .await,
    );
    let second = cli.add_feedback("Another\n@@write b.txt two").await;
    let refused = cli.run(&["run", &second]).await;
    assert!(!refused.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_journey_on_e2b_from_the_command_line() {
    let fake = FakeGithub::start().await;
    let e2b = FakeE2b::start("e2b_key_for_tests_42").await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up_on_e2b(&fake, &cli, &e2b).await;
    let feedback = cli
        .add_feedback("Button too small\n@@write src/button.css height: 20px\n@@usage 0.12")
        .await;

    let first = ok_text(&cli.run(&["run", &feedback]).await);

    // On E2B no key forwarder of Handoff's stands between the agent and its provider:
    // the run shows what the agent reported, and says so.
    let run = ok_text(&cli.run(&["runs", "show", "1"]).await);
    assert!(
        run.contains("spend:    $0.12 · 1.2k tokens in, 340 out (as reported by the agent)"),
        "{run}"
    );

    assert!(first.contains("first of feedback"), "{first}");
    assert!(
        first.contains("scripted agent:"),
        "the log streamed: {first}"
    );
    assert!(first.contains("PR #1 opened"), "{first}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "src/button.css")
            .as_deref(),
        Some("height: 20px\n")
    );

    fake.push_commit(REPO, &branch, "By hand", &[("HAND.md", "mine\n")]);
    // An environment on the base branch becomes an E2B template: its setup script runs
    // on E2B's base template, and the next run starts from what it made.
    fake.push_commit(
        REPO,
        "main",
        "An environment",
        &[(".handoff/setup.sh", "apt-get install -y jq\n")],
    );
    let second = ok_text(
        &cli.run(&[
            "iterate",
            &feedback,
            "-m",
            "Taller.\n@@write src/button.css height: 44px",
        ])
        .await,
    );
    assert!(second.contains("iterate of feedback"), "{second}");
    assert!(second.contains("PR #1 updated"), "{second}");
    let prefix = handoff::sandbox::e2b::template_recipe::template_prefix(REPO);
    let templates = e2b.templates();
    assert_eq!(templates.len(), 1, "{templates:?}");
    let template = &templates[0];
    assert!(template.name.starts_with(&prefix), "{}", template.name);
    assert!(
        second.contains(&format!(
            "environment: the E2B template {} (.handoff/setup.sh, built for this run)",
            template.name
        )),
        "{second}"
    );
    let start = template.builds[0].start.clone().expect("the build started");
    assert_eq!(start["fromTemplate"], "base");
    assert!(
        start["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|step| step["args"][0] == "/bin/sh -c 'sh .handoff/setup.sh'"),
        "the setup script is a step: {start}"
    );
    assert_eq!(
        e2b.sandboxes()
            .iter()
            .filter(|sandbox| sandbox.template == template.name)
            .count(),
        1,
        "the second run started from the template"
    );
    assert_eq!(fake.pulls(REPO).len(), 1);
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "src/button.css")
            .as_deref(),
        Some("height: 44px\n")
    );
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "HAND.md").as_deref(),
        Some("mine\n")
    );
    assert_eq!(e2b.sandboxes().len(), 2, "one sandbox per run");
    assert!(e2b.live_sandboxes().is_empty(), "every sandbox was killed");
    let shown = ok_text(&cli.run(&["feedback", "show", &feedback]).await);
    assert!(shown.contains("WAITING_FOR_REVIEW"), "{shown}");

    // The next run finds the template ready: nothing is built again.
    let third = ok_text(
        &cli.run(&[
            "iterate",
            &feedback,
            "-m",
            "Wider.\n@@write src/button.css height: 44px; width: 80px",
        ])
        .await,
    );
    assert!(
        third.contains(&format!(
            "environment: the E2B template {} (.handoff/setup.sh, ready, nothing built)",
            template.name
        )),
        "{third}"
    );
    let templates = e2b.templates();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].builds.len(), 1, "built once: {templates:?}");
    assert_eq!(e2b.sandboxes().len(), 3);
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "src/button.css")
            .as_deref(),
        Some("height: 44px; width: 80px\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_can_be_followed_and_a_run_cancelled_from_another_process() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    let feedback = cli
        .add_feedback("Slow one\n@@sleep 30\n@@write slow.txt late")
        .await;

    let running = cli.command(&["run", &feedback, "--quiet"]).spawn().unwrap();
    let run_id = first_active_run(&cli).await;
    let following = cli
        .command(&["runs", "logs", &run_id, "--follow"])
        .spawn()
        .unwrap();
    eventually_true("the agent starts", || async {
        ok_text(&cli.run(&["runs", "logs", &run_id]).await).contains("scripted agent:")
    })
    .await;

    let cancelled = ok_text(&cli.run(&["runs", "cancel", &run_id]).await);
    assert!(
        cancelled.contains(&format!("cancel asked for run {run_id}")),
        "{cancelled}"
    );

    let run_output = tokio::time::timeout(Duration::from_secs(30), running.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run_output.status.code(), Some(1));
    assert!(
        text(&run_output).contains(&format!("run {run_id} was cancelled")),
        "{}",
        text(&run_output)
    );
    let followed = tokio::time::timeout(Duration::from_secs(30), following.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let followed = text(&followed);
    assert!(followed.contains("scripted agent:"), "{followed}");
    assert!(followed.contains("cancelled by the owner"), "{followed}");
    assert!(
        followed.contains(&format!("run {run_id} ended: cancelled")),
        "{followed}"
    );
    let again = ok_text(&cli.run(&["runs", "logs", &run_id]).await);
    assert!(
        again.contains("» starting the local sandbox"),
        "the log is kept: {again}"
    );
    let second_cancel = cli.run(&["runs", "cancel", &run_id]).await;
    assert_eq!(second_cancel.status.code(), Some(1));
    assert!(
        text(&second_cancel).contains("has already finished"),
        "{}",
        text(&second_cancel)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_run_in_the_foreground() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    let feedback = cli
        .add_feedback("Slow one\n@@sleep 30\n@@write slow.txt late")
        .await;

    let mut running = cli.command(&["run", &feedback]).spawn().unwrap();
    let mut stderr = running.stderr.take().unwrap();
    let mut seen = String::new();
    while !seen.contains("the agent starts") {
        let mut buffer = [0u8; 1024];
        let read = tokio::io::AsyncReadExt::read(&mut stderr, &mut buffer)
            .await
            .unwrap();
        assert!(read > 0, "the run ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
    }
    std::process::Command::new("kill")
        .args(["-INT", &running.id().unwrap().to_string()])
        .status()
        .unwrap();
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut rest)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), running.wait())
        .await
        .unwrap()
        .unwrap();

    assert_eq!(status.code(), Some(1));
    assert!(rest.contains("cancelling run"), "{rest}");
    assert!(rest.contains("was cancelled"), "{rest}");
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_come_back_as_one_line_and_exit_1() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    ok_text(&cli.run(&["repo", "set", REPO, "--quota", "1"]).await);
    let feedback = cli.add_feedback("Once\n@@write once.txt 1").await;
    ok_text(&cli.run(&["run", &feedback, "--quiet"]).await);

    let quota = cli.run(&["iterate", &feedback, "-m", "again"]).await;
    assert_eq!(quota.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&quota.stderr).trim(),
        "error: the monthly run quota of octocat/hello-world is used up (1 of 1); it starts again next month\n\
         hint: raise it with `handoff repo set octocat/hello-world --quota N`, or lift it with --no-quota"
    );

    fake.merge_pull(REPO, 1);
    ok_text(&cli.run(&["sync"]).await);
    ok_text(&cli.run(&["repo", "set", REPO, "--no-quota"]).await);
    let merged = cli.run(&["iterate", &feedback, "-m", "more"]).await;
    assert_eq!(merged.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&merged.stderr).trim(),
        format!("error: feedback {feedback} is MERGED: submit new feedback")
    );
    let empty = cli.run(&["iterate", &feedback, "-m", "  "]).await;
    assert_eq!(empty.status.code(), Some(2), "{}", text(&empty));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_e2b_key_goes_only_to_the_e2b_address_it_was_stored_for() {
    let fake = FakeGithub::start().await;
    let e2b = FakeE2b::start("e2b_key_for_tests_42").await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up_on_e2b(&fake, &cli, &e2b).await;
    let feedback = cli.add_feedback("Key\n@@write k.txt k").await;

    // Plain http to another machine is refused as a setting.
    let insecure = cli
        .run(&["config", "set", "e2b.api_base", "http://e2b.example.net"])
        .await;
    assert_eq!(insecure.status.code(), Some(2), "{}", text(&insecure));
    assert!(
        text(&insecure).contains("plain http to another machine"),
        "{}",
        text(&insecure)
    );

    // Another address (as anything that writes the database could set) has no key.
    let store = handoff::Store::open_in(dir.path()).await.unwrap();
    store
        .settings()
        .set_setting(
            handoff::store::SettingKey::E2bApiBase,
            "https://e2b.example.net",
        )
        .await
        .unwrap();
    let refused = cli.run(&["run", &feedback]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains("no API key is stored for e2b.example.net"),
        "{}",
        text(&refused)
    );
    store
        .settings()
        .set_setting(
            handoff::store::SettingKey::E2bApiBase,
            "http://e2b.example.net",
        )
        .await
        .unwrap();
    let refused = cli.run(&["run", &feedback]).await;
    assert!(
        text(&refused).contains("plain http to another machine"),
        "{}",
        text(&refused)
    );
    store.close().await;
    assert!(e2b.sandboxes().is_empty(), "nothing reached E2B");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_holds_a_placeholder_and_its_provider_gets_the_key() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    // The claude preset, with a stand-in `claude` that runs the scripted agent.
    let bin = tempfile::tempdir().unwrap();
    let path = scripted_agent_as_claude(bin.path());
    // A local repository's agent changes only with the owner's confirmation.
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--agent",
            "claude",
            "--confirm-no-isolation",
        ])
        .await,
    );
    let key = "sk-ant-test-0123456789abcdef";
    let provider = FakeProvider::start().await;
    cli.use_anthropic_stand_in(key, &provider.api_base()).await;
    let feedback = cli
        .add_feedback("Scan\n@@scan\n@@provider\n@@noise 2\n@@write s.txt scanned")
        .await;

    let run = cli
        .run_with(&["run", &feedback], None, &[("PATH", &path)])
        .await;

    let shown = ok_text(&run);
    assert!(
        shown.contains("== scan done"),
        "the agent printed its environment: {shown}"
    );
    // The key never reached the agent: its variable held a placeholder, and nothing
    // the agent printed (environment, files, git config, command lines) had to be
    // scrubbed.
    assert!(
        shown.contains("ANTHROPIC_API_KEY=handoff-placeholder-"),
        "{shown}"
    );
    assert!(
        !shown.contains("[redacted]"),
        "the key was in the run: {shown}"
    );
    assert!(!shown.contains(key), "the key was printed: {shown}");
    // Its call to the provider went through the run's forwarder, which added the key.
    assert!(
        shown.contains("provider: HTTP/1.")
            && shown.contains(" 200 OK")
            && shown.contains(fake_provider::ANSWER),
        "the agent reached its provider: {shown}"
    );
    let received = provider.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].path, "/v1/messages");
    assert_eq!(received[0].x_api_key.as_deref(), Some(key));
    let logs = ok_text(&cli.run(&["runs", "logs", "1"]).await);
    assert!(
        logs.contains("ANTHROPIC_API_KEY=handoff-placeholder-"),
        "{logs}"
    );
    assert!(!logs.contains(key));
    // What the agent printed reaches the terminal without its control characters.
    assert!(logs.contains("binary: "), "{logs}");
    assert!(
        !logs
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "a control character reached the terminal"
    );
    let database = std::fs::read(dir.path().join("handoff.sqlite3")).unwrap();
    let wal = std::fs::read(dir.path().join("handoff.sqlite3-wal")).unwrap_or_default();
    for bytes in [&database, &wal] {
        assert!(
            !bytes
                .windows(key.len())
                .any(|window| window == key.as_bytes()),
            "the key is in the database"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_process_is_killed_is_ended_with_its_reason_and_the_next_run_works() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    // The first run sleeps (for a time no other test uses, to find the orphaned job
    // by); the next one does not.
    let feedback = cli
        .add_feedback("Killed\n@@run1:sleep 117\n@@write late.txt late")
        .await;

    let mut running = cli
        .command(&["run", &feedback, "--quiet", "-m", "keep this follow-up"])
        .spawn()
        .unwrap();
    let run_id = first_active_run(&cli).await;
    eventually_true("the agent starts", || async {
        ok_text(&cli.run(&["runs", "logs", &run_id]).await).contains("the agent starts")
    })
    .await;
    assert!(process_alive("sleep 117"), "the agent is at work");

    // SIGKILL: nothing of the process gets to say goodbye.
    std::process::Command::new("kill")
        .args(["-KILL", &running.id().unwrap().to_string()])
        .status()
        .unwrap();
    running.wait().await.unwrap();
    let shown = ok_text(&cli.run(&["runs", "show", &run_id, "--json"]).await);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["run"]["status"], "running", "nobody ended it yet");

    // Handoff is started again. Until the run has been silent for its grace period,
    // the item is still coding; then the next run ends it with its reason and goes.
    // Each ask is a whole `handoff run`: asked every few seconds.
    let next = eventually_asking_every(
        Duration::from_secs(3),
        "the killed run is reconciled and the next one runs",
        || async {
            let attempt = cli.run(&["run", &feedback, "--quiet"]).await;
            assert!(
                attempt.status.success() || text(&attempt).contains("is CODING: one run at a time"),
                "refused for another reason: {}",
                text(&attempt)
            );
            attempt.status.success().then_some(attempt)
        },
    )
    .await;
    let shown = ok_text(&cli.run(&["runs", "show", &run_id, "--json"]).await);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["run"]["status"], "failed");
    assert!(
        shown["run"]["failure_message"]
            .as_str()
            .unwrap_or_default()
            .contains("Handoff stopped while this run was going"),
        "{shown}"
    );
    assert!(
        !process_alive("sleep 117"),
        "the orphaned job was stopped: {shown}"
    );
    let follow_ups = ok_text(&cli.run(&["feedback", "show", &feedback]).await);
    assert!(
        follow_ups.contains("keep this follow-up"),
        "the follow-up is kept: {follow_ups}"
    );
    assert!(
        text(&next).is_empty() || !text(&next).contains("failed"),
        "{}",
        text(&next)
    );
    assert_eq!(fake.pulls(REPO).len(), 1, "one PR");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_providers_key_is_kept_for_one_address_and_a_changed_address_finds_none() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli, "local").await;
    // A local repository's agent changes only with the owner's confirmation.
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--agent",
            "claude",
            "--confirm-no-isolation",
        ])
        .await,
    );
    let provider = FakeProvider::start().await;
    ok_text(
        &cli.run(&[
            "config",
            "set",
            "provider.anthropic.api_base",
            &provider.api_base(),
        ])
        .await,
    );
    let stored = ok_text(
        &cli.run_with_input(&["secrets", "set", "anthropic"], "sk-ant-for-the-stand-in")
            .await,
    );
    let host = provider.api_base().trim_start_matches("http://").to_owned();
    assert!(stored.contains(&format!("for {host} only")), "{stored}");
    assert!(text(&cli.run(&["doctor"]).await).contains(&format!(
        "ok    {REPO}'s agent (claude): the anthropic key is set"
    )));

    // Another address (a gateway someone set): the key is not sent there.
    ok_text(
        &cli.run(&[
            "config",
            "set",
            "provider.anthropic.api_base",
            "https://gateway.example",
        ])
        .await,
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains(&format!(
            "FAIL  {REPO}'s agent (claude): no anthropic API key is stored"
        )),
        "{doctor}"
    );
    let listed = ok_text(&cli.run(&["secrets", "list"]).await);
    assert!(listed.contains("anthropic  -"), "{listed}");

    // A key an older version kept (for every address) counts for the provider's own
    // address only.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address());
    handoff::secrets::SecretStore::os()
        .set(
            &handoff::secrets::SecretName::AgentApiKeyOfOldVersions {
                provider: "anthropic".to_owned(),
            },
            &handoff::secrets::Secret::new("sk-ant-kept-by-an-older-version"),
        )
        .await
        .unwrap();
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains("no anthropic API key is stored"),
        "{doctor}"
    );
    ok_text(
        &cli.run(&["config", "unset", "provider.anthropic.api_base"])
            .await,
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains(&format!(
            "ok    {REPO}'s agent (claude): the anthropic key is set"
        )),
        "{doctor}"
    );
}
