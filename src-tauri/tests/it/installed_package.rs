//! End to end: the .deb that `scripts/package.sh` builds installs into a clean Debian
//! (a container from the Debian image the tests build from Debian's packages), with the
//! app, the `handoff` command line and the egress gate's program; the installed app opens
//! its window there, under Xvfb; and the AppImage of the same programs starts there too.
//! The container is new each time; the Debian package files apt downloads are kept in
//! `~/.cache/handoff/installed-package-debs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use handoff_test_support::kept_between_runs::debian_package_files_mount;

/// The newest package with `extension` the packaging script made.
fn built_package(extension: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let folder = target.join("packages");
    let mut packages: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| {
            panic!(
                "no package in {}: run scripts/package.sh first ({error})",
                folder.display()
            )
        })
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|found| found == extension))
        .collect();
    packages.sort_by_key(|path| {
        std::fs::metadata(path)
            .and_then(|metadata| metadata.modified())
            .ok()
    });
    packages.pop().unwrap_or_else(|| {
        panic!(
            "no .{extension} in {}: run scripts/package.sh first",
            folder.display()
        )
    })
}

/// Installs and starts the package in a clean container; returns what it printed.
const IN_THE_CONTAINER: &str = r#"
set -eu
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  /tmp/handoff.deb xvfb xauth imagemagick x11-utils >/tmp/apt.log 2>&1 \
  || { tail -n 30 /tmp/apt.log; exit 1; }
dpkg -s handoff | sed -n 's/^Version: /installed version /p'
command -v handoff-desktop
command -v handoff-egress
handoff --version
grep '^ExecStart=' /usr/lib/systemd/user/handoff.service
mkdir -p /root/handoff-data
export HANDOFF_DATA_DIR=/root/handoff-data
xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
  handoff-desktop >/out/app.log 2>&1 &
  app=$!
  # The picture is taken once the app says its page painted the board, not after a
  # guess at how long that takes (asked every fifth of a second, for up to 90 s).
  for _ in $(seq 1 450); do
    if grep -qs "the window painted its first board" /root/handoff-data/logs/handoff.log; then break; fi
    sleep 0.2
  done
  xwininfo -root -tree | grep "\"Handoff\"" > /out/windows.txt || true
  import -window root /out/installed.png
  cp /root/handoff-data/logs/handoff.log /out/handoff.log || true
  kill $app
'
# The AppImage, with no FUSE in a container: its runtime extracts it and runs the app.
cp /tmp/handoff.AppImage /root/Handoff.AppImage
APPIMAGE_EXTRACT_AND_RUN=1 xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
  /root/Handoff.AppImage >/out/appimage.log 2>&1 &
  app=$!
  for _ in $(seq 1 90); do
    if xwininfo -root -tree | grep -q "\"Handoff\""; then break; fi
    sleep 1
  done
  xwininfo -root -tree | grep "\"Handoff\"" > /out/appimage-windows.txt || true
  kill $app
'
"#;

#[test]
fn the_package_installs_on_a_clean_debian_and_its_window_opens() {
    let package = built_package("deb");
    let appimage = built_package("AppImage");
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("docker")
        .args([
            "run",
            "--rm",
            "--label",
            "dev.handoff.run=package-test",
            "-v",
        ])
        .arg(format!("{}:/tmp/handoff.deb:ro", package.display()))
        .arg("-v")
        .arg(format!("{}:/tmp/handoff.AppImage:ro", appimage.display()))
        .arg("-v")
        .arg(format!("{}:/out", out.path().display()))
        // The Debian package files apt downloads are kept for the next run (which still
        // installs every package), as a machine keeps its package cache.
        .arg("-v")
        .arg(debian_package_files_mount("installed-package-debs"))
        .arg("handoff-test-agent:bookworm")
        .args(["sh", "-c", IN_THE_CONTAINER])
        .output()
        .expect("docker runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        run.status.success(),
        "the install or the start failed:\n{printed}"
    );
    assert!(printed.contains("installed version 0.1.0"), "{printed}");
    assert!(printed.contains("/usr/bin/handoff-desktop"), "{printed}");
    let windows = std::fs::read_to_string(out.path().join("windows.txt")).unwrap_or_default();
    assert!(
        windows.contains("\"Handoff\""),
        "no Handoff window opened; the app said:\n{}",
        std::fs::read_to_string(out.path().join("app.log")).unwrap_or_default()
    );
    let log = std::fs::read_to_string(out.path().join("handoff.log")).unwrap_or_default();
    assert!(
        log.contains("the window painted its first board"),
        "the installed app's page never painted its board; its log:\n{log}"
    );
    assert!(printed.contains("/usr/bin/handoff-egress"), "{printed}");
    assert!(
        printed.contains("handoff 0.1.0"),
        "the command line is installed: {printed}"
    );
    assert!(
        printed.contains("ExecStart=/usr/bin/handoff serve"),
        "the daemon's user unit is installed: {printed}"
    );
    let appimage_windows =
        std::fs::read_to_string(out.path().join("appimage-windows.txt")).unwrap_or_default();
    assert!(
        appimage_windows.contains("\"Handoff\""),
        "the AppImage opened no window; it said:\n{}",
        std::fs::read_to_string(out.path().join("appimage.log")).unwrap_or_default()
    );
    let shot = std::fs::read(out.path().join("installed.png")).expect("a screenshot");
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
    std::fs::create_dir_all(&screenshots).unwrap();
    std::fs::write(screenshots.join("installed-package.png"), shot).unwrap();
}

#[test]
fn no_package_trusts_the_development_update_key_unless_told_to() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository.join("target"));
    let development_key = handoff_api::updates::DEVELOPMENT_UPDATE_PUBLIC_KEY;
    let package = |arguments: &[&str], key: Option<&str>| {
        let mut command = Command::new("bash");
        command
            .arg("scripts/package.sh")
            .args(arguments)
            .current_dir(&repository)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("HANDOFF_UPDATE_PUBLIC_KEY");
        if let Some(key) = key {
            command.env("HANDOFF_UPDATE_PUBLIC_KEY", key);
        }
        command.output().expect("the packaging script runs")
    };
    let debug = target.join("debug");
    let debug = debug.to_str().unwrap();
    for (what, output) in [
        (
            "a release build without the release key",
            package(&[], None),
        ),
        (
            "a release build given the development key",
            package(&[], Some(development_key)),
        ),
        (
            "the test build's programs, which trust the development key",
            package(&["--from-build", debug], None),
        ),
    ] {
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{what}: {said}");
        assert!(
            said.contains("refused") && said.contains("development key"),
            "{what}: {said}"
        );
        assert!(
            !String::from_utf8_lossy(&output.stdout).contains("package: /"),
            "{what}: no package was written"
        );
    }
}
