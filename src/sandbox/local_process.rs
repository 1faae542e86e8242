//! The `local` backend: the job as a plain process in the host workspace. No isolation
//! at all — for development and tests only. The process gets a clean environment (the
//! PATH, HOME and locale, Handoff's variables and the agent's own), runs in its own
//! process group, and the whole group is killed on timeout or cancel.

use std::process::Stdio;

use tokio::io::AsyncReadExt as _;

use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use crate::domain::SandboxBackend;

#[derive(Debug, Clone, Default)]
pub struct LocalSandbox;

fn unavailable(detail: String) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::Local,
        detail,
    }
}

/// Kills every process of group `pid`.
async fn kill_group(pid: u32) {
    let killed = tokio::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    match killed {
        // `kill` fails when the group is gone already: the usual case after an exit.
        Ok(status) if !status.success() => tracing::trace!(pid, "no process group left to kill"),
        Ok(_) => {}
        Err(error) => tracing::warn!(pid, %error, "cannot run `kill` on the job's process group"),
    }
}

/// Waits for the killed job so that it leaves no zombie.
async fn reap(child: &mut tokio::process::Child) {
    if let Err(error) = child.wait().await {
        tracing::warn!(%error, "waiting for the killed job");
    }
}

/// Forwards a pipe to the job's events until it closes.
fn pump<R>(mut pipe: R, stream: OutputStream, control: JobControl) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buffer).await {
                Ok(0) => return,
                Err(error) => {
                    tracing::warn!(?stream, %error, "reading the job's output stopped");
                    return;
                }
                Ok(read) => control.report(SandboxEvent::Output {
                    stream,
                    bytes: buffer[..read].to_vec(),
                }),
            }
        }
    })
}

impl LocalSandbox {
    pub async fn preflight(&self) -> Result<(), SandboxError> {
        for program in ["sh", "git"] {
            let found = tokio::process::Command::new(program)
                .arg("--version")
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await;
            if program == "git" && found.is_err() {
                return Err(unavailable("git is not installed".to_owned()));
            }
        }
        Ok(())
    }

    pub async fn run(
        &self,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let mut command = tokio::process::Command::new("sh");
        command
            .arg(job.workspace.join("handoff").join("job.sh"))
            .current_dir(job.workspace.join("repo"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .env("HANDOFF_WORKSPACE", &job.workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for (name, value) in &job.environment {
            command.env(name, value.expose());
        }
        let mut child = command
            .spawn()
            .map_err(|error| unavailable(format!("cannot start sh: {error}")))?;
        let pid = child.id().unwrap_or_default();
        control.report(SandboxEvent::Started {
            sandbox_id: format!("pid:{pid}"),
        });
        let stdout = pump(
            child.stdout.take().expect("piped"),
            OutputStream::Stdout,
            control.clone(),
        );
        let stderr = pump(
            child.stderr.take().expect("piped"),
            OutputStream::Stderr,
            control.clone(),
        );

        let end = tokio::select! {
            status = child.wait() => {
                let status = status.map_err(|error| SandboxError::Failed {
                    backend: SandboxBackend::Local,
                    detail: error.to_string(),
                })?;
                // Anything the job left running in its group goes too.
                kill_group(pid).await;
                SandboxEnd::Exited(status.code().map(i64::from).unwrap_or(-1))
            }
            _ = tokio::time::sleep(job.timeout) => {
                kill_group(pid).await;
                reap(&mut child).await;
                SandboxEnd::TimedOut
            }
            _ = control.cancelled() => {
                kill_group(pid).await;
                reap(&mut child).await;
                SandboxEnd::Cancelled
            }
        };
        let drain = std::time::Duration::from_secs(5);
        for (name, pipe) in [("stdout", stdout), ("stderr", stderr)] {
            if tokio::time::timeout(drain, pipe).await.is_err() {
                // A process the job started keeps the pipe open; the group was killed.
                tracing::warn!(pipe = name, "the job's output did not close within 5 s");
            }
        }
        Ok(end)
    }

    /// Kills a job's process group left by a crash (`pid:N`).
    pub async fn remove_leftover(&self, sandbox_id: Option<&str>) -> Result<(), SandboxError> {
        if let Some(pid) = sandbox_id
            .and_then(|id| id.strip_prefix("pid:"))
            .and_then(|pid| pid.parse::<u32>().ok())
            .filter(|pid| *pid > 1)
        {
            kill_group(pid).await;
        }
        Ok(())
    }
}
