//! The log in the window: a background sync that fails leaves a line in the log file
//! (with its error code, never the token), the settings' Log tab shows that line as
//! text, "Open log folder" hands the folder to the system's file manager, and the level
//! chosen there is stored and applied.

use handoff_test_support as support;

use std::os::unix::fs::PermissionsExt as _;

use handoff::log_file::log_file;
use handoff::store::SettingKey;
use serde_json::Value;
use support::eventually::eventually;
use support::fake_github::{Fault, FaultRule};
use support::window::github_world::{connected_repo, GithubWorld};
use support::window::AppSession;

/// A stand-in for `xdg-open` that writes what it was asked to open into a file.
fn recording_opener(folder: &std::path::Path, record: &std::path::Path) {
    let script = folder.join("xdg-open");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_background_sync_is_in_the_log_and_the_window_shows_and_opens_it() {
    let world = GithubWorld::new().await;
    connected_repo(&world.fake, &world.store, "").await;

    // Signed in through the window, then started again: the timed sync runs at start.
    let app = world.open_signed_in_window().await;
    app.close().await;
    world.fake.inject(FaultRule {
        times: 1000,
        ..FaultRule::new("/repos/", Fault::Status(401))
    });

    let bin = tempfile::tempdir().unwrap();
    let opened = bin.path().join("opened.txt");
    recording_opener(bin.path(), &opened);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let app = AppSession::start_with_env(
        world.data_dir.path(),
        &[
            ("DBUS_SESSION_BUS_ADDRESS", world.keyring.bus_address()),
            ("PATH", &path),
        ],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");

    let log_path = log_file(world.data_dir.path());
    let log = eventually("the failed sync reaches the log", || async {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        log.contains("the timed sync failed").then_some(log)
    })
    .await;
    let failure = log
        .lines()
        .find(|line| line.contains("the timed sync failed"))
        .unwrap_or_else(|| panic!("no line for the failed sync in the log:\n{log}"));
    assert!(failure.starts_with("app["), "{failure}");
    assert!(failure.contains("WARN"), "{failure}");
    assert!(failure.contains("code=github_auth"), "{failure}");
    assert!(
        !log.contains(world.fake.owner_token()),
        "the token is in the log"
    );

    // The Log tab shows the line as text.
    app.click_until(
        "#open-settings",
        "return document.getElementById('settings-dialog').open;",
    )
    .await;
    app.click_until(
        ".tab[data-tab=log]",
        "return document.getElementById('settings-dialog').dataset.tab === 'log';",
    )
    .await;
    let shown = app
        .text_eventually_containing(
            "const p = document.querySelector('#log-panel .log-lines'); return p ? p.textContent : '';",
            "the timed sync failed",
        )
        .await;
    assert!(shown.contains("code=github_auth"), "{shown}");
    let folder = app
        .text_eventually_containing(
            "const c = document.querySelector('#log-panel .log-folder-path'); return c ? c.textContent : '';",
            "logs",
        )
        .await;
    assert_eq!(
        folder,
        world.data_dir.path().join("logs").display().to_string()
    );
    app.screenshot("log").await;

    // "Open log folder" hands the folder to the file manager.
    app.click("#log-panel .open-log-folder").await;
    let asked = eventually("the file manager is asked to open a folder", || async {
        Some(std::fs::read_to_string(&opened).unwrap_or_default()).filter(|asked| !asked.is_empty())
    })
    .await;
    assert_eq!(
        asked.trim(),
        folder,
        "the file manager was asked to open the log folder"
    );

    // The level chosen in the window is stored and the change is logged.
    let chosen = app
        .client
        .execute(
            "const s = document.getElementById('log-level'); s.value = 'debug'; \
             s.dispatchEvent(new Event('change')); return s.value;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(chosen, Value::String("debug".into()));
    let stored = eventually("the level is stored", || async {
        world
            .store
            .settings()
            .setting(SettingKey::LogLevel)
            .await
            .unwrap()
    })
    .await;
    assert_eq!(stored, "debug");
    // The change is stored first and logged right after: wait for the line.
    let log = eventually("the change of level reaches the log", || async {
        let log = std::fs::read_to_string(&log_path).unwrap();
        log.contains("the log level was changed").then_some(log)
    })
    .await;
    assert!(
        log.contains("the log level was changed level=\"debug\""),
        "{log}"
    );
    app.close().await;
}
