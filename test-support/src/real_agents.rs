//! The real agent programs the tests run: Claude Code, the Codex CLI and aider,
//! installed from PyPI by `scripts/install-agents.sh` (which `scripts/test.sh` runs) into
//! `$HANDOFF_AGENTS_DIR`, by default `~/.cache/handoff/agents`. A test puts one on the
//! `PATH` of the run under the preset's command name, or builds the agent's Docker image
//! from Handoff's recipe.

use std::path::{Path, PathBuf};

use crate::cli_process::{ok_text, Cli};
use crate::docker_images::LOCAL_BASE;

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
            #[cfg(unix)]
            std::os::unix::fs::symlink(self.program(), &link).expect("the agent is linked");
            #[cfg(not(unix))]
            std::fs::copy(self.program(), &link).expect("the agent is copied");
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let folders = std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path));
        std::env::join_paths(folders)
            .expect("no folder of PATH holds its separator")
            .to_string_lossy()
            .into_owned()
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

    /// The image of this agent built through the engine from Handoff's recipe (the program
    /// from its PyPI wheel) on the local Debian base, named after the recipe's hash: the
    /// tests share it, and a second run finds it built.
    pub async fn image_built_by(self, cli: &Cli<'_>) -> String {
        let tag = format!(
            "handoff-test-real-{}:{}",
            self.name(),
            &handoff::agent_image::recipe_hash()[..12]
        );
        let present = std::process::Command::new("docker")
            .args(["image", "inspect", &tag])
            .output()
            .is_ok_and(|output| output.status.success());
        if !present {
            // The images of older recipes go: each is most of a gigabyte.
            let repository = format!("handoff-test-real-{}", self.name());
            let listed = std::process::Command::new("docker")
                .args([
                    "images",
                    "--format",
                    "{{.Repository}}:{{.Tag}}",
                    &repository,
                ])
                .output()
                .expect("docker lists images");
            let listed = String::from_utf8_lossy(&listed.stdout);
            // Another test may have just built this recipe's image: it stays.
            let alone = crate::docker_images::EngineImagesHold::removing();
            for old in listed.split_whitespace().filter(|old| *old != tag) {
                let removed = std::process::Command::new("docker")
                    .args(["image", "rm", "--force", old])
                    .output();
                assert!(
                    removed.is_ok_and(|output| output.status.success()),
                    "{old} stays"
                );
            }
            drop(alone);
            let _building = crate::docker_images::EngineImagesHold::building();
            ok_text(
                &cli.run(&[
                    "agent-image",
                    "build",
                    "--preset",
                    self.name(),
                    "--base",
                    LOCAL_BASE,
                    "--tag",
                    &tag,
                ])
                .await,
            );
        }
        tag
    }
}
