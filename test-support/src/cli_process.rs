//! The `handoff` binary run as a person runs it: a process of its own on a data folder,
//! the test keyring's session bus, text on stdin; and reading what it printed.

use std::path::Path;
use std::process::{Output, Stdio};

use tokio::io::AsyncWriteExt as _;

use crate::fake_github::FakeGithub;
use crate::pipeline_world::REPO;
use crate::secret_service::SecretService;

pub struct Cli<'a> {
    pub data_dir: &'a Path,
    pub keyring: &'a SecretService,
}

impl Cli<'_> {
    /// The command, ready to spawn (all three streams piped; killed when dropped).
    pub fn command(&self, arguments: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(crate::cargo_binary("handoff"));
        command
            .args(arguments)
            .env("HANDOFF_DATA_DIR", self.data_dir)
            .env("DBUS_SESSION_BUS_ADDRESS", self.keyring.bus_address())
            .env_remove("HANDOFF_GITHUB_CLIENT_ID")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs to the end with `stdin` as its input and `environment` added.
    pub async fn run_with(
        &self,
        arguments: &[&str],
        stdin: Option<&str>,
        environment: &[(&str, &str)],
    ) -> Output {
        let mut command = self.command(arguments);
        command.envs(environment.iter().copied());
        let mut child = command.spawn().expect("handoff runs");
        let mut input = child.stdin.take().expect("stdin is piped");
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).await.unwrap();
        }
        drop(input);
        child.wait_with_output().await.unwrap()
    }

    pub async fn run_with_input(&self, arguments: &[&str], input: &str) -> Output {
        self.run_with(arguments, Some(input), &[]).await
    }

    pub async fn run(&self, arguments: &[&str]) -> Output {
        self.run_with(arguments, None, &[]).await
    }

    /// Removes the egress gates this data folder's installation left on the Docker
    /// engine (they outlive runs).
    pub async fn remove_egress_gates(&self) {
        crate::docker_images::remove_gates_of(&self.installation_id().await);
    }

    /// Kills the running egress gates of this data folder's installation.
    pub async fn kill_egress_gates(&self) {
        crate::docker_images::kill_gates_of(&self.installation_id().await);
    }

    /// What the egress gates of this data folder's installation logged.
    pub async fn egress_gate_logs(&self) -> String {
        crate::docker_images::gate_logs_of(&self.installation_id().await)
    }

    /// The id of this data folder's installation, which labels its things in Docker.
    async fn installation_id(&self) -> String {
        let store = handoff::Store::open_in(self.data_dir)
            .await
            .expect("the data folder's store");
        let installation = store
            .settings()
            .installation_id()
            .await
            .expect("installation id");
        store.close().await;
        installation
    }

    /// Signs in to `fake` with a pasted token and connects [`REPO`] to run the scripted
    /// agent (already on the fake as `.handoff/agent.sh`) on `backend`, with
    /// `more_repo_options` added to `repo add`.
    pub async fn connect_scripted_repo(
        &self,
        fake: &FakeGithub,
        backend: &str,
        more_repo_options: &[&str],
    ) {
        ok_text(
            &self
                .run_with_input(
                    &[
                        "auth",
                        "login",
                        "--with-token",
                        "--api-base",
                        &fake.api_base(),
                    ],
                    fake.owner_token(),
                )
                .await,
        );
        let mut repo_add = vec![
            "repo",
            "add",
            REPO,
            "--backend",
            backend,
            "--agent",
            "custom",
            "--agent-command",
            "sh .handoff/agent.sh",
            "--no-quota",
        ];
        if backend == "local" {
            repo_add.push("--confirm-no-isolation");
        }
        repo_add.extend_from_slice(more_repo_options);
        ok_text(&self.run(&repo_add).await);
    }
}

impl Cli<'_> {
    /// Adds feedback with `body` to the scripted repository; returns its id as printed.
    pub async fn add_feedback(&self, body: &str) -> String {
        let added = ok_text(
            &self
                .run(&["feedback", "add", "--repo", REPO, "--json", body])
                .await,
        );
        let json: serde_json::Value = serde_json::from_str(&added).expect("the feedback as JSON");
        json["id"].to_string()
    }

    /// Sends Anthropic's requests to the stand-in at `api_base`, with `key` kept for
    /// that address (the address first: a key is kept per API address).
    pub async fn use_anthropic_stand_in(&self, key: &str, api_base: &str) {
        ok_text(
            &self
                .run(&["config", "set", "provider.anthropic.api_base", api_base])
                .await,
        );
        ok_text(
            &self
                .run_with_input(&["secrets", "set", "anthropic"], key)
                .await,
        );
    }
}

/// Puts a `claude` in `bin` that runs the scripted agent (for the claude preset with
/// the scripted agent's directives); returns a `PATH` with `bin` first.
pub fn scripted_agent_as_claude(bin: &Path) -> String {
    let claude = bin.join("claude");
    std::fs::write(&claude, "#!/bin/sh\nexec sh .handoff/agent.sh\n").expect("claude written");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&claude)
        .status()
        .expect("claude made runnable");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Everything it printed: stdout, then stderr.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Its stdout, after checking it succeeded.
pub fn ok_stdout(output: &Output) -> String {
    assert!(output.status.success(), "failed: {}", text(output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Everything it printed, after checking it succeeded.
pub fn ok_text(output: &Output) -> String {
    assert!(output.status.success(), "failed: {}", text(output));
    text(output)
}

/// Whether a process whose command line holds `needle` is alive.
pub fn process_alive(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| {
            String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        })
}
