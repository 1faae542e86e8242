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

/// Removes the image named when dropped.
pub struct ImageRemovedOnDrop(pub String);

impl Drop for ImageRemovedOnDrop {
    fn drop(&mut self) {
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

/// The base every test-built agent image starts from: the Debian image the test setup
/// builds from Debian's packages (no registry is reachable).
pub const LOCAL_BASE: &str = "handoff-test-agent:bookworm";

/// Writes the stand-in that the recipe installs as a preset's command: it runs the
/// scripted agent of the working copy (the prompt comes on standard input, which the
/// scripted agent does not need: it reads `$HANDOFF_PROMPT_FILE`).
pub fn write_stand_in(folder: &Path) -> PathBuf {
    let path = folder.join("stand-in-agent");
    std::fs::write(&path, "#!/bin/sh\nexec sh .handoff/agent.sh\n").expect("the stand-in");
    path
}
