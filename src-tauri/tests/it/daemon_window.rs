//! The window says when a daemon (`handoff serve`) serves its data folder: a word in
//! the toolbar appears while one runs, says which process and what it does, and goes
//! when it stops.

use handoff_test_support as support;

use std::time::Duration;

use handoff::Store;
use support::cli_process::{text, Cli};
use support::secret_service::SecretService;
use support::window::AppSession;

const CHIP: &str = "const c = document.getElementById('daemon-chip'); \
                    return c.hidden ? null : [c.textContent, c.title].join(' | ');";

#[tokio::test(flavor = "multi_thread")]
async fn the_toolbar_says_while_a_daemon_serves_the_data_folder() {
    let keyring = SecretService::start();
    let data_dir = tempfile::tempdir().unwrap();
    Store::open_in(data_dir.path()).await.unwrap().close().await;
    let app = AppSession::start_with_env(
        data_dir.path(),
        &[("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address())],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");
    assert_eq!(
        app.client.execute(CHIP, vec![]).await.unwrap(),
        serde_json::Value::Null,
        "no daemon, no word"
    );
    let cli = Cli {
        data_dir: data_dir.path(),
        keyring: &keyring,
    };
    let daemon = cli.command(&["serve"]).spawn().unwrap();
    let pid = daemon.id().unwrap();

    let said = app
        .eventually_within(Duration::from_secs(30), CHIP, |value| {
            value
                .as_str()
                .is_some_and(|text| text.starts_with("Daemon on"))
        })
        .await;
    let said = said.as_str().unwrap().to_owned();
    assert!(
        said.contains(&format!("handoff serve (process {pid})")),
        "{said}"
    );
    assert!(said.contains("while this window is closed"), "{said}");
    // Wide enough for its word; narrower, only its dot shows.
    app.resize_on_the_display(1500, 800).await;
    app.eventually(
        "return getComputedStyle(document.getElementById('daemon-word')).position;",
        |value| value == "static",
    )
    .await;
    app.screenshot("daemon-chip").await;

    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let ended = tokio::time::timeout(Duration::from_secs(30), daemon.wait_with_output())
        .await
        .expect("an idle daemon stops at once")
        .unwrap();
    assert!(ended.status.success(), "{}", text(&ended));
    let gone = app
        .eventually_within(Duration::from_secs(30), CHIP, |value| value.is_null())
        .await;
    assert!(gone.is_null(), "the word stayed: {gone}");
}
