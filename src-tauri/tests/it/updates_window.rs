//! Signed updates, end to end: the AppImage that `scripts/package.sh` builds runs under
//! WebDriver, says which key it trusts (the test build's: the development key), asks an
//! update feed on this machine for a newer version from Settings → Updates, refuses a
//! package whose signature is of other bytes or by another key (the file stays as it
//! was), and installs one signed with its own key (the AppImage on disk becomes the new
//! package). The app as the .deb installs it refuses both the same way, and dpkg is
//! never asked.

use handoff_test_support as support;

use std::path::{Path, PathBuf};

use handoff::store::SettingKey;
use handoff::Store;
use support::update_feed::{signature_by_another_key, signature_of, UpdateFeed};
use support::window::AppSession;

/// The newest package with `extension` the packaging script made.
fn built_package(extension: &str) -> PathBuf {
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
        .filter(|path| path.extension().is_some_and(|found| found == extension))
        .max_by_key(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| {
            panic!(
                "no .{extension} in {}: run scripts/package.sh",
                folder.display()
            )
        })
}

/// What dpkg says of the `handoff` package on this machine.
fn dpkg_status() -> String {
    let output = std::process::Command::new("dpkg-query")
        .args(["-W", "-f=${Status} ${Version}", "handoff"])
        .output()
        .expect("dpkg-query runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
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
    assert!(
        settings.contains("signed with the development key (79E33A81F764EF85)"),
        "the test build says plainly which key it trusts: {settings}"
    );
    app.click(".check-for-update").await;
    let found = app
        .text_eventually_containing(RESULT, "Version 99.0.0 is available")
        .await;
    assert!(found.contains("this is 0.1.0"), "{found}");
}

/// Checks Settings → Updates again for version 99.0.0 and presses Install; returns
/// what the page says once the install ended with a line containing `ending`.
async fn install_the_offered_update(app: &AppSession, ending: &str) -> String {
    app.click("#settings-dialog .tab[data-tab=\"updates\"]")
        .await;
    app.click(".check-for-update").await;
    app.text_eventually_containing(RESULT, "Version 99.0.0 is available")
        .await;
    app.click(".install-update").await;
    app.text_eventually_containing(RESULT, ending).await
}

/// Whether the page's refusal names the signature or its key.
fn names_the_signature(refused: &str) -> bool {
    let refused = refused.to_lowercase();
    refused.contains("signature") || refused.contains("key")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_update_is_installed_only_with_the_apps_signature() {
    let folder = tempfile::tempdir().unwrap();
    let installed = folder.path().join("Handoff.AppImage");
    std::fs::copy(built_package("AppImage"), &installed).unwrap();
    let before = std::fs::read(&installed).unwrap();
    // The new version: the same AppImage with bytes of its own at the end, which an
    // AppImage ignores.
    let mut newer = before.clone();
    newer.extend_from_slice(b"\nHandoff 99.0.0, as served by the test's update feed\n");

    let feed = UpdateFeed::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    store
        .settings()
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

    // Then a good signature of the right bytes, by another key: refused just the same.
    feed.offer(
        "99.0.0",
        newer.clone(),
        signature_by_another_key(&newer, "99.0.0"),
        "**Faster** boards.",
    );
    let refused = install_the_offered_update(&app, "was not installed").await;
    assert!(names_the_signature(&refused), "{refused}");
    assert_eq!(feed.downloads(), 2);
    assert!(
        std::fs::read(&installed).unwrap() == before,
        "an update signed by another key changed the AppImage"
    );

    // Then with the app's own signature: the AppImage on disk becomes the new package.
    feed.offer(
        "99.0.0",
        newer.clone(),
        signature_of(&newer, "99.0.0"),
        "**Faster** boards.",
    );
    let installed_text =
        install_the_offered_update(&app, "is installed: it runs after a restart").await;
    assert!(installed_text.contains("99.0.0"), "{installed_text}");
    assert!(
        std::fs::read(&installed).unwrap() == newer,
        "the AppImage was not replaced by the update"
    );
    app.screenshot("update-installed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deb_installation_installs_no_update_not_signed_with_its_key() {
    // The app as the .deb installs it (its program says it came as a .deb), run from the
    // package's files.
    let unpacked = tempfile::tempdir().unwrap();
    let extracted = std::process::Command::new("dpkg-deb")
        .arg("-x")
        .arg(built_package("deb"))
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(extracted.success());
    let program = unpacked.path().join("usr/bin/handoff-desktop");
    let dpkg_before = dpkg_status();

    let feed = UpdateFeed::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(data_dir.path()).await.unwrap();
    store
        .settings()
        .set_setting(SettingKey::UpdateFeed, &feed.manifest_address())
        .await
        .unwrap();
    drop(store);
    let newer = std::fs::read(built_package("deb")).unwrap();
    let app = AppSession::start_program(&program, data_dir.path(), &[]).await;
    assert_eq!(app.wait_until_loaded().await, "true");
    app.click("#open-settings").await;
    app.click("#settings-dialog .tab[data-tab=\"updates\"]")
        .await;
    let settings = app
        .text_eventually_containing(
            "return document.getElementById('updates-panel').textContent;",
            "installed as the .deb package",
        )
        .await;
    assert!(settings.contains("development key"), "{settings}");

    for (what, signature) in [
        (
            "a signature of other bytes",
            signature_of(b"another package", "99.0.0"),
        ),
        (
            "another key's signature",
            signature_by_another_key(&newer, "99.0.0"),
        ),
    ] {
        feed.offer("99.0.0", newer.clone(), signature, "A new .deb.");
        let refused = install_the_offered_update(&app, "was not installed").await;
        assert!(names_the_signature(&refused), "{what}: {refused}");
    }
    assert_eq!(feed.downloads(), 2, "each was downloaded and refused");
    assert_eq!(dpkg_status(), dpkg_before, "dpkg installed nothing");
    app.screenshot("update-refused-deb").await;
}
