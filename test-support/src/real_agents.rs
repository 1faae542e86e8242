//! The real agent programs the tests run: Claude Code, the Codex CLI and aider,
//! installed from PyPI by `scripts/install-agents.sh` (which `scripts/test.sh` runs) into
//! `$HANDOFF_AGENTS_DIR`, by default `~/.cache/handoff/agents`. A test puts one on the
//! `PATH` of the run under the preset's command name.

use std::path::{Path, PathBuf};

/// A real agent program at the version the install script pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealAgent {
    Claude,
    Codex,
    Aider,
}

impl RealAgent {
    /// The preset's name, which is also the command's.
    pub fn name(self) -> &'static str {
        match self {
            RealAgent::Claude => "claude",
            RealAgent::Codex => "codex",
            RealAgent::Aider => "aider",
        }
    }

    /// The version `scripts/install-agents.sh` installs.
    pub fn version(self) -> &'static str {
        match self {
            RealAgent::Claude => "2.1.332",
            RealAgent::Codex => "0.163.0",
            RealAgent::Aider => "0.86.1",
        }
    }

    /// The program; a test fails plainly when it is not installed.
    pub fn program(self) -> PathBuf {
        let folder = std::env::var_os("HANDOFF_AGENTS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                    .join(".cache/handoff/agents")
            });
        let program = folder
            .join(format!("{}-{}", self.name(), self.version()))
            .join(self.name());
        assert!(
            program.exists(),
            "{} is not installed: run scripts/install-agents.sh",
            program.display()
        );
        program
    }

    /// A `PATH` whose first folder holds this agent under its command name.
    pub fn path_with_agent(self, bin: &Path) -> String {
        let link = bin.join(self.name());
        if !link.exists() {
            std::os::unix::fs::symlink(self.program(), &link).expect("the agent is linked");
        }
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// What the program's `--help` (or a subcommand's) prints.
    pub fn help(self, subcommand: &[&str]) -> String {
        let output = std::process::Command::new(self.program())
            .args(subcommand)
            .arg("--help")
            .env("HOME", std::env::temp_dir())
            .output()
            .expect("the agent runs");
        assert!(output.status.success(), "{} --help failed", self.name());
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}
