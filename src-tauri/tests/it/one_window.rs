//! End to end: one running window per data folder, in the place the owner left it. A
//! second launch on the same data brings the running window to the front and exits; the
//! window's size comes back at the next launch.

use handoff_test_support as support;

use std::time::Duration;

use handoff::Store;
use serde_json::Value;
use support::eventually::eventually_true;
use support::secret_service::SecretService;
use support::window::AppSession;

#[tokio::test(flavor = "multi_thread")]
async fn a_second_launch_brings_the_running_window_to_the_front() {
    // The instance lock lives on the session bus: a private one for this test.
    let bus = SecretService::start();
    let data_dir = tempfile::tempdir().unwrap();
    let config_home = tempfile::tempdir().unwrap();
    Store::open_in(data_dir.path()).await.unwrap().close().await;
    let config = config_home.path().display().to_string();
    let app = AppSession::start_with_env(
        data_dir.path(),
        &[
            ("DBUS_SESSION_BUS_ADDRESS", bus.bus_address()),
            ("XDG_CONFIG_HOME", &config),
        ],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let mut second = tokio::process::Command::new(env!("CARGO_BIN_EXE_handoff-desktop"))
        .env("DISPLAY", &app.display)
        .env("HANDOFF_DATA_DIR", data_dir.path())
        .env("DBUS_SESSION_BUS_ADDRESS", bus.bus_address())
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("WAYLAND_DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(20), second.wait())
        .await
        .expect("the second launch kept running: it opened a window of its own")
        .unwrap();
    assert!(exit.success(), "the second launch ended with {exit}");
    let told = app
        .eventually(
            "return [...document.querySelectorAll('.toast')].map(t => t.textContent).join(' | ');",
            |value| {
                value
                    .as_str()
                    .is_some_and(|text| text.contains("Handoff is already open"))
            },
        )
        .await;
    assert!(
        told.as_str().unwrap().contains("Handoff is already open"),
        "{told}"
    );
    app.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_keeps_its_size_between_launches() {
    let data_dir = tempfile::tempdir().unwrap();
    let config_home = tempfile::tempdir().unwrap();
    Store::open_in(data_dir.path()).await.unwrap().close().await;
    let config = config_home.path().display().to_string();
    let environment = [("XDG_CONFIG_HOME", config.as_str())];

    let first = AppSession::start_with_env(data_dir.path(), &environment).await;
    assert_eq!(first.wait_until_loaded().await, "true");
    first.resize_on_the_display(1040, 700).await;
    let state_file = config_home
        .path()
        .join("dev.handoff.desktop/.window-state.json");
    // The size is kept once the window has stopped changing; the second launch reads
    // what the first one wrote.
    eventually_true("the window's new size is kept", || async {
        std::fs::read_to_string(&state_file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|kept| kept["main"]["width"] == 1040 && kept["main"]["height"] == 700)
    })
    .await;
    first.close().await;

    let second = AppSession::start_with_env(data_dir.path(), &environment).await;
    assert_eq!(second.wait_until_loaded().await, "true");
    assert_eq!(second.size_on_the_display().await, (1040, 700));
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap()).unwrap();
    assert_eq!(kept["main"]["width"], 1040, "{kept}");
    second.close().await;
}
