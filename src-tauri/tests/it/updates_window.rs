//! Signed updates, end to end: the AppImage that `scripts/package.sh` builds runs under
//! WebDriver, asks an update feed on this machine for a newer version from Settings →
//! Updates, refuses a package whose signature is not the app's key (the file stays as it
//! was), and installs one signed with it (the AppImage on disk becomes the new package).

use handoff_test_support as support;

use std::path::{Path, PathBuf};

use handoff::store::SettingKey;
use handoff::Store;
use support::update_feed::{signature_of, UpdateFeed};
use support::window::AppSession;

/// The newest AppImage the packaging script made.
fn built_appimage() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let folder = target.join("packages");
    std::fs::read_dir(&folder)
        .unwrap_or_else(|error| {
            panic!(
                "no package in {}: run scripts/package.sh ({error})",
                folder.display()
            )
        })
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|found| found == "AppImage"))
        .max_by_key(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| {
            panic!(
                "no AppImage in {}: run scripts/package.sh",
                folder.display()
            )
        })
}

const RESULT: &str = "return document.getElementById('update-result')?.textContent ?? '';";

/// Opens Settings → Updates and checks for an update.
async fn check_for_the_update(app: &AppSession) {
    app.click("#open-settings").await;
    app.click("#settings-dialog .tab[data-tab=\"updates\"]")
        .await;
    let settings = app
        .text_eventually_containing(
            "return document.getElementById('updates-panel').textContent;",
            "Handoff 0.1.0, installed as",
        )
        .await;
    assert!(settings.contains("installed as an AppImage"), "{settings}");
    app.click(".check-for-update").await;
    let found = app
        .text_eventually_containing(RESULT, "Version 99.0.0 is available")
        .await;
    assert!(found.contains("this is 0.1.0"), "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_update_is_installed_only_with_the_apps_signature() {
    let folder = tempfile::tempdir().unwrap();
    let installed = folder.path().join("Handoff.AppImage");
    std::fs::copy(built_appimage(), &installed).unwrap();
    let before = std::fs::read(&installed).unwrap();
    // The new version: the same AppImage with bytes of its own at the end, which an
    // AppImage ignores.
    let mut newer = before.clone();
    newer.extend_from_slice(b"\nHandoff 99.0.0, as served by the test's update feed\n");

    let feed = UpdateFeed::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    store
        .set_setting(SettingKey::UpdateFeed, &feed.manifest_address())
        .await
        .unwrap();
    drop(store);

    // First the feed offers the package with a signature of other bytes.
    feed.offer(
        "99.0.0",
        newer.clone(),
        signature_of(b"some other package", "99.0.0"),
        "**Faster** boards.",
    );
    let app = AppSession::start_program(
        &installed,
        data_dir.path(),
        &[("APPIMAGE_EXTRACT_AND_RUN", "1")],
    )
    .await;
    assert_eq!(app.wait_until_loaded().await, "true");
    check_for_the_update(&app).await;
    let notes = app
        .client
        .execute(
            "return document.querySelector('.update-notes strong')?.textContent ?? null;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(notes, "Faster", "the notes are rendered markdown");
    app.click(".install-update").await;
    let refused = app
        .text_eventually_containing(RESULT, "was not installed")
        .await;
    assert!(refused.to_lowercase().contains("signature"), "{refused}");
    assert_eq!(feed.downloads(), 1);
    assert!(
        std::fs::read(&installed).unwrap() == before,
        "a refused update changed the AppImage"
    );
    app.screenshot("update-refused").await;

    // Then with the app's own signature: the AppImage on disk becomes the new package.
    feed.offer(
        "99.0.0",
        newer.clone(),
        signature_of(&newer, "99.0.0"),
        "**Faster** boards.",
    );
    app.click("#settings-dialog .tab[data-tab=\"updates\"]")
        .await;
    app.click(".check-for-update").await;
    app.text_eventually_containing(RESULT, "Version 99.0.0 is available")
        .await;
    app.click(".install-update").await;
    let installed_text = app
        .text_eventually_containing(RESULT, "is installed: it runs after a restart")
        .await;
    assert!(installed_text.contains("99.0.0"), "{installed_text}");
    assert!(
        std::fs::read(&installed).unwrap() == newer,
        "the AppImage was not replaced by the update"
    );
    app.screenshot("update-installed").await;
}
