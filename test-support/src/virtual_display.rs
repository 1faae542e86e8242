//! A private X display for what opens the real app window (the window tests and the
//! start-up benchmark): Xvfb at 1280×800, the window's default size, on a display
//! number it picks itself. Stopped when dropped.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

pub struct VirtualDisplay {
    process: Child,
    name: String,
}

impl VirtualDisplay {
    pub fn start() -> VirtualDisplay {
        let mut process = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts (scripts/install-test-deps.sh installs it)");
        let mut line = String::new();
        BufReader::new(process.stdout.take().expect("Xvfb's stdout"))
            .read_line(&mut line)
            .expect("Xvfb names its display");
        VirtualDisplay {
            process,
            name: format!(":{}", line.trim()),
        }
    }

    /// The display's name, for `DISPLAY`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for VirtualDisplay {
    fn drop(&mut self) {
        if let Err(error) = self.process.kill() {
            eprintln!("Xvfb could not be stopped: {error}");
        }
        if let Err(error) = self.process.wait() {
            eprintln!("Xvfb could not be waited for: {error}");
        }
    }
}
