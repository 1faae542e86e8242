//! End to end: the .deb that `scripts/package.sh` builds installs into a clean Debian
//! (a container from the Debian image the tests build from Debian's packages), and the
//! installed app opens its window there, under Xvfb.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest .deb the packaging script made.
fn built_package() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let folder = target.join("release/bundle/deb");
    let mut packages: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap_or_else(|error| {
            panic!(
                "no package in {}: run scripts/package.sh first ({error})",
                folder.display()
            )
        })
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "deb"))
        .collect();
    packages.sort_by_key(|path| {
        std::fs::metadata(path)
            .and_then(|metadata| metadata.modified())
            .ok()
    });
    packages.pop().unwrap_or_else(|| {
        panic!(
            "no .deb in {}: run scripts/package.sh first",
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
mkdir -p /root/handoff-data
export HANDOFF_DATA_DIR=/root/handoff-data
xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
  handoff-desktop >/out/app.log 2>&1 &
  app=$!
  for _ in $(seq 1 90); do
    if xwininfo -root -tree | grep -q "\"Handoff\""; then break; fi
    sleep 1
  done
  sleep 4
  xwininfo -root -tree | grep "\"Handoff\"" > /out/windows.txt || true
  import -window root /out/installed.png
  kill $app
'
"#;

#[test]
fn the_package_installs_on_a_clean_debian_and_its_window_opens() {
    let package = built_package();
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
        .arg(format!("{}:/out", out.path().display()))
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
    let shot = std::fs::read(out.path().join("installed.png")).expect("a screenshot");
    let screenshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
    std::fs::create_dir_all(&screenshots).unwrap();
    std::fs::write(screenshots.join("installed-package.png"), shot).unwrap();
}
