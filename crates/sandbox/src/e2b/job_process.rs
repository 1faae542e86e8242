//! A job in a cloud sandbox: the workspace uploaded as one archive, the job run as a
//! streamed process (Connect framing, keepalives proving it is alive, its life bounded),
//! its output passed to the run's log, and `out/` downloaded back within the caps.

use crate::connect_stream::{encode_envelope, EnvelopeDecoder};
use crate::tar_transfer::{pack_dir, unpack_into};
use crate::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;

use super::*;

/// One event of a process stream (proto3 JSON of `process.StartResponse`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct StartResponse {
    #[serde(default)]
    pub(super) event: Option<ProcessEvent>,
}

/// One event of the process stream. Its `start` and `keepalive` events carry nothing
/// Handoff reads: their frames only prove the stream alive, which reading them does.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ProcessEvent {
    #[serde(default)]
    pub(super) data: Option<DataEvent>,
    #[serde(default)]
    pub(super) end: Option<EndEvent>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct DataEvent {
    #[serde(default)]
    pub(super) stdout: Option<String>,
    #[serde(default)]
    pub(super) stderr: Option<String>,
    #[serde(default)]
    pub(super) pty: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EndEvent {
    /// proto3 JSON leaves out a zero exit code.
    #[serde(default)]
    pub(super) exit_code: i64,
    #[serde(default)]
    pub(super) error: Option<String>,
}

impl E2bSandbox {
    pub(super) async fn run_in(
        &self,
        sandbox: &LiveSandbox,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let name = format!("handoff-run-{}", job.run_id);
        self.upload_workspace(sandbox, job, &name).await?;
        self.set_timeout(sandbox, job.timeout.as_secs() + 120)
            .await?;
        let response = self.start_job(sandbox, job, &name).await?;
        let reporter = control.clone();
        let end = tokio::select! {
            end = self.follow(response, &reporter) => end?,
            _ = tokio::time::sleep(job.timeout) => return Ok(SandboxEnd::TimedOut),
            _ = control.cancelled() => return Ok(SandboxEnd::Cancelled),
        };
        self.download_output(sandbox, job, &name).await?;
        Ok(end)
    }

    /// Packs the job's workspace and uploads it into the sandbox as `{name}.tar.gz`.
    async fn upload_workspace(
        &self,
        sandbox: &LiveSandbox,
        job: &SandboxJob,
        name: &str,
    ) -> Result<(), SandboxError> {
        let archive = pack_dir(&job.workspace, ".", true).map_err(|error| {
            SandboxError::Transfer(format!("cannot pack the workspace: {error}"))
        })?;
        let upload = self
            .envd_request(
                sandbox,
                reqwest::Method::POST,
                &format!("/files?path={name}.tar.gz"),
            )
            .header("Content-Type", "application/octet-stream")
            .body(archive)
            .send()
            .await
            .map_err(|error| {
                SandboxError::Transfer(format!(
                    "cannot upload the workspace: {}",
                    self.describe(error)
                ))
            })?;
        if !upload.status().is_success() {
            return Err(SandboxError::Transfer(format!(
                "the sandbox refused the upload ({})",
                upload.status()
            )));
        }
        Ok(())
    }

    /// Starts the job in the sandbox and returns the stream of its events.
    async fn start_job(
        &self,
        sandbox: &LiveSandbox,
        job: &SandboxJob,
        name: &str,
    ) -> Result<reqwest::Response, SandboxError> {
        // Unpack, run the job, pack out/ — all inside the sandbox, relative to $HOME.
        let script = format!(
            "W=\"$HOME/{name}\"; mkdir -p \"$W\" && tar -xzf \"$HOME/{name}.tar.gz\" -C \"$W\" || exit 96; \
             export HANDOFF_WORKSPACE=\"$W\"; cd \"$W\" && sh \"$W/handoff/job.sh\"; code=$?; \
             tar -czf \"$HOME/{name}-out.tar.gz\" -C \"$W\" out; exit $code"
        );
        // The key's variable holds the placeholder; the sandbox's egress rule adds the
        // key on the way to the provider.
        let environment: HashMap<String, String> = job
            .agent_key
            .iter()
            .flat_map(|key| key.sandbox_environment(None))
            .collect();
        let request = json!({
            "process": { "cmd": "/bin/bash", "args": ["-l", "-c", script], "envs": environment },
            "stdin": false,
        });
        let timeout_ms = job.timeout.as_millis().to_string();
        let response = self
            .envd_request(sandbox, reqwest::Method::POST, "/process.Process/Start")
            .header("Content-Type", "application/connect+json")
            .header("Connect-Protocol-Version", "1")
            .header("Connect-Timeout-Ms", &timeout_ms)
            .body(encode_envelope(request.to_string().as_bytes()))
            .send()
            .await
            .map_err(|error| failed(format!("cannot start the job: {}", self.describe(error))))?;
        if !response.status().is_success() {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            return Err(failed(format!(
                "the sandbox refused to start the job ({status}): {}",
                self.excerpt(&body)
            )));
        }
        Ok(response)
    }

    /// Downloads what the job left in out/ (`{name}-out.tar.gz`; none is no error) and
    /// unpacks it into the workspace, within the job's output limits.
    async fn download_output(
        &self,
        sandbox: &LiveSandbox,
        job: &SandboxJob,
        name: &str,
    ) -> Result<(), SandboxError> {
        let download = self
            .envd_request(
                sandbox,
                reqwest::Method::GET,
                &format!("/files?path={name}-out.tar.gz"),
            )
            .send()
            .await
            .map_err(|error| {
                SandboxError::Transfer(format!("cannot download out/: {}", self.describe(error)))
            })?;
        if download.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        if !download.status().is_success() {
            return Err(SandboxError::Transfer(format!(
                "the sandbox refused the download ({})",
                download.status()
            )));
        }
        // Compressed, out/ is small; a download past the cap is a bomb or a flood.
        let cap = job.limits.output.archive_bytes();
        let mut download = download;
        let mut bytes = Vec::new();
        while let Some(chunk) = download.chunk().await.map_err(|error| {
            SandboxError::Transfer(format!("cannot download out/: {}", self.describe(error)))
        })? {
            if (bytes.len() + chunk.len()) as u64 > cap {
                return Err(SandboxError::Transfer(format!(
                    "cannot download out/: it is over the cap of {} bytes",
                    job.limits.output.total_bytes
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        unpack_into(&bytes, &job.workspace, 0, true, &job.limits.output)
            .map_err(|error| SandboxError::Transfer(format!("cannot unpack out/: {error}")))
    }

    /// Reads the process stream to its end; a silence longer than the keepalive timeout
    /// counts as a hung stream.
    pub(super) async fn follow(
        &self,
        mut response: reqwest::Response,
        control: &JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let mut decoder = EnvelopeDecoder::default();
        let mut exit = None;
        loop {
            let chunk = tokio::time::timeout(self.settings.keepalive_timeout, response.chunk())
                .await
                .map_err(|_| {
                    failed(format!(
                        "the sandbox sent nothing, not even a keepalive, for {} s: the stream is hung",
                        self.settings.keepalive_timeout.as_secs()
                    ))
                })?
                .map_err(|error| failed(format!("the process stream broke: {}", self.describe(error))))?;
            let Some(chunk) = chunk else {
                decoder
                    .finish()
                    .map_err(|error| failed(format!("the process stream broke: {error}")))?;
                break;
            };
            decoder.push(&chunk);
            while let Some(envelope) = decoder
                .next_envelope()
                .map_err(|error| failed(format!("the process stream is malformed: {error}")))?
            {
                if envelope.end_stream {
                    let trailer: serde_json::Value = match serde_json::from_slice(&envelope.payload)
                    {
                        Ok(trailer) => trailer,
                        Err(error) => {
                            tracing::warn!(%error, "E2B's end of stream is not JSON; read as no error");
                            serde_json::Value::Null
                        }
                    };
                    if let Some(error) = trailer.get("error") {
                        return Err(failed(format!(
                            "the process stream ended with an error: {}",
                            self.excerpt(&error.to_string())
                        )));
                    }
                    return exit.ok_or_else(|| {
                        failed("the process stream ended without the process's end")
                    });
                }
                let message: StartResponse = serde_json::from_slice(&envelope.payload)
                    .map_err(|error| failed(format!("a process event is malformed: {error}")))?;
                let Some(event) = message.event else { continue };
                if let Some(data) = event.data {
                    for (stream, text) in [
                        (OutputStream::Stdout, data.stdout.or(data.pty)),
                        (OutputStream::Stderr, data.stderr),
                    ] {
                        if let Some(text) = text {
                            let bytes = base64::engine::general_purpose::STANDARD
                                .decode(text)
                                .map_err(|error| {
                                    failed(format!("process output is not base64: {error}"))
                                })?;
                            control.report(SandboxEvent::Output { stream, bytes });
                        }
                    }
                }
                if let Some(end) = event.end {
                    if let Some(error) = end.error.filter(|e| !e.is_empty()) {
                        control.report(SandboxEvent::Output {
                            stream: OutputStream::Stderr,
                            bytes: format!("sandbox: {error}\n").into_bytes(),
                        });
                    }
                    exit = Some(SandboxEnd::Exited(end.exit_code));
                }
            }
        }
        exit.ok_or_else(|| failed("the process stream ended without the process's end"))
    }
}
