//! Agent images the tests build: a name of their own (so tests running side by side never
//! share one), the stand-in agent the recipe installs in place of a real agent, and
//! removal when the test ends, whatever its outcome.

use std::path::{Path, PathBuf};

/// An image name no other test uses.
pub fn unique_image(purpose: &str) -> String {
    format!(
        "handoff-test-built-{purpose}-{}:{}",
        std::process::id(),
        rand_suffix()
    )
}

fn rand_suffix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("t{nanos}")
}

/// A hold on the engine's images, shared by the test processes through a lock file.
///
/// A build may take any image's layers from the engine's build cache, and removing an
/// image removes its untagged parents with it: a removal during a build can take away
/// the layer the build stands on ("unknown parent image ID"). So builds hold the lock
/// shared while they run, and a removal holds it alone.
pub struct EngineImagesHold(#[allow(dead_code)] std::fs::File);

impl EngineImagesHold {
    fn lock_file() -> std::fs::File {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("handoff-test-engine-images.lock"))
            .expect("the images' lock file opens")
    }

    /// Held while an image builds: no image is removed meanwhile.
    pub fn building() -> EngineImagesHold {
        let file = Self::lock_file();
        file.lock_shared().expect("the images' lock is taken");
        EngineImagesHold(file)
    }

    /// Held while an image is removed: no image builds meanwhile.
    pub fn removing() -> EngineImagesHold {
        let file = Self::lock_file();
        file.lock().expect("the images' lock is taken");
        EngineImagesHold(file)
    }
}

/// Removes the image named when dropped.
pub struct ImageRemovedOnDrop(pub String);

impl Drop for ImageRemovedOnDrop {
    fn drop(&mut self) {
        let _alone = EngineImagesHold::removing();
        let removed = std::process::Command::new("docker")
            .args(["image", "rm", "--force", &self.0])
            .output();
        if let Ok(output) = removed {
            if !output.status.success() {
                eprintln!(
                    "could not remove the test image {}: {}",
                    self.0,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}

/// Removes, when dropped, every environment image an installation built (a test's
/// installation is its own, so no other test's image goes with them).
pub struct EnvironmentImagesRemovedOnDrop(pub String);

impl Drop for EnvironmentImagesRemovedOnDrop {
    fn drop(&mut self) {
        let _alone = EngineImagesHold::removing();
        let listed = std::process::Command::new("docker")
            .args([
                "image",
                "ls",
                "--quiet",
                "--filter",
                &format!("label=dev.handoff.installation={}", self.0),
                "--filter",
                "label=dev.handoff.environment-repo",
            ])
            .output();
        let Ok(listed) = listed else { return };
        let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if ids.is_empty() {
            return;
        }
        let removed = std::process::Command::new("docker")
            .args(["image", "rm", "--force"])
            .args(&ids)
            .output();
        if let Ok(output) = removed {
            if !output.status.success() {
                eprintln!(
                    "could not remove the test's environment images: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}

/// A word no other test's files hold: written into a repository's recipe, it gives
/// the environment a key of its own, so that no image of an earlier test run is ready.
pub fn unique_word() -> String {
    format!("{}-{}", std::process::id(), rand_suffix())
}

/// The base every test-built agent image starts from: the Debian image the test setup
/// builds from Debian's packages (no registry is reachable).
pub const LOCAL_BASE: &str = "handoff-test-agent:bookworm";

/// Writes the stand-in that the recipe installs as a preset's command: it runs the
/// scripted agent of the working copy (the prompt comes on standard input, which the
/// scripted agent does not need: it reads `$HANDOFF_PROMPT_FILE`). Each one is marked
/// as its own, so that no test's build takes another's from the engine's build cache
/// and every build runs the recipe's steps.
pub fn write_stand_in(folder: &Path) -> PathBuf {
    let path = folder.join("stand-in-agent");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n# stand-in {}-{}\nexec sh .handoff/agent.sh\n",
            std::process::id(),
            rand_suffix()
        ),
    )
    .expect("the stand-in");
    path
}

/// Removes an installation's egress gates (the containers that outlive runs, and their
/// networks) when dropped.
pub struct GatesRemovedOnDrop(pub String);

impl Drop for GatesRemovedOnDrop {
    fn drop(&mut self) {
        remove_gates_of(&self.0);
    }
}

/// What the egress gates of the installation `installation` logged (the gate logs each
/// connection it refuses as "egress refused: …").
pub fn gate_logs_of(installation: &str) -> String {
    let label = format!("label=dev.handoff.installation={installation}");
    let listed = std::process::Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &label,
            "--filter",
            "label=dev.handoff.gate",
        ])
        .output()
        .expect("docker lists the gates");
    let mut logs = String::new();
    for id in String::from_utf8_lossy(&listed.stdout).split_whitespace() {
        let output = std::process::Command::new("docker")
            .args(["logs", id])
            .output()
            .expect("docker gives a gate's log");
        logs.push_str(&String::from_utf8_lossy(&output.stdout));
        logs.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    logs
}

/// Removes the egress gates, and their networks, of the installation `installation`.
/// Kills the running egress gates of `installation`, as a crash would stop them.
pub fn kill_gates_of(installation: &str) {
    let label = format!("label=dev.handoff.installation={installation}");
    let listed = std::process::Command::new("docker")
        .args([
            "ps",
            "-q",
            "--filter",
            &label,
            "--filter",
            "label=dev.handoff.gate",
        ])
        .output()
        .expect("docker lists the gates");
    let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert!(!ids.is_empty(), "a running gate to stop");
    let killed = std::process::Command::new("docker")
        .arg("kill")
        .args(&ids)
        .status()
        .expect("docker kills the gates");
    assert!(killed.success());
}

pub fn remove_gates_of(installation: &str) {
    let label = format!("label=dev.handoff.installation={installation}");
    // The containers made ahead for items' next runs first: they are on the gates'
    // networks.
    for (kind, remove, of) in [
        ("ps", "rm", "label=dev.handoff.ready-for"),
        ("ps", "rm", "label=dev.handoff.gate"),
        ("network", "rm", "label=dev.handoff.gate"),
    ] {
        let mut listing = std::process::Command::new("docker");
        if kind == "ps" {
            listing.args(["ps", "-aq"]);
        } else {
            listing.args(["network", "ls", "-q"]);
        }
        let listed = listing.args(["--filter", &label, "--filter", of]).output();
        let Ok(listed) = listed else { return };
        let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if ids.is_empty() {
            continue;
        }
        let mut removal = std::process::Command::new("docker");
        if kind == "ps" {
            removal.args([remove, "-f", "-v"]);
        } else {
            removal.args(["network", remove]);
        }
        if let Ok(output) = removal.args(&ids).output() {
            if !output.status.success() {
                eprintln!(
                    "could not remove the test's egress gates: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}
