//! The `e2b` backend: a cloud sandbox. E2B's control-plane REST API creates it,
//! sets its timeout and kills it; its in-sandbox API (envd) takes the workspace as one
//! uploaded archive, runs the job as a streamed process (Connect framing, with
//! `Connect-Timeout-Ms` bounding its life and keepalives proving it is alive) and hands
//! `out/` back as a downloaded archive. Both bases are configurable, so the same code
//! talks to E2B's cloud or to a fake in tests.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

use super::connect_stream::{encode_envelope, EnvelopeDecoder};
use super::key_forwarding::ForwardedKey;
use super::tar_transfer::{pack_dir, unpack_into};
use super::{JobControl, OutputStream, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use crate::domain::{NetworkMode, NetworkPolicy, SandboxBackend};
use crate::secrets::{redact, Secret};
use crate::service_address::check_secret_address;

pub const DEFAULT_API_BASE: &str = "https://api.e2b.app";
/// envd's address; `{sandbox_id}`, `{port}` and `{domain}` are filled in.
pub const DEFAULT_ENVD_URL: &str = "https://{port}-{sandbox_id}.{domain}";
pub const DEFAULT_DOMAIN: &str = "e2b.app";
pub const ENVD_PORT: u16 = 49983;
pub const DEFAULT_TEMPLATE: &str = "base";

/// Where E2B is and how it is used.
#[derive(Debug, Clone)]
pub struct E2bSettings {
    pub api_base: String,
    pub envd_url_template: String,
    pub template: String,
    /// With no frame (output or keepalive) for this long, the stream counts as hung.
    pub keepalive_timeout: Duration,
}

impl E2bSettings {
    /// The host (and port) of the control-plane API, which names the keyring entry of
    /// its key.
    pub fn api_host(&self) -> String {
        self.api_base
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    }

    /// Checks both addresses before anything is sent: https, or http to this machine.
    pub fn check_addresses(&self) -> Result<(), String> {
        check_secret_address(&self.api_base)
            .map_err(|refusal| format!("e2b.api_base: {refusal}"))?;
        let example = self
            .envd_url_template
            .replace("{sandbox_id}", "sandbox")
            .replace("{port}", &ENVD_PORT.to_string())
            .replace("{domain}", DEFAULT_DOMAIN);
        check_secret_address(&example).map_err(|refusal| format!("e2b.envd_url: {refusal}"))
    }
}

impl Default for E2bSettings {
    fn default() -> Self {
        E2bSettings {
            api_base: DEFAULT_API_BASE.to_owned(),
            envd_url_template: DEFAULT_ENVD_URL.to_owned(),
            template: DEFAULT_TEMPLATE.to_owned(),
            keepalive_timeout: Duration::from_secs(90),
        }
    }
}

#[derive(Debug, Clone)]
pub struct E2bSandbox {
    http: reqwest::Client,
    settings: E2bSettings,
    api_key: Option<Secret>,
    network: NetworkPolicy,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedSandbox {
    #[serde(rename = "sandboxID")]
    sandbox_id: String,
    #[serde(default)]
    envd_access_token: Option<String>,
    #[serde(default)]
    domain: Option<String>,
}

/// A sandbox that exists, with how to reach its envd (a secured sandbox's envd takes
/// only calls carrying its access token, so that knowing its id is not enough).
struct LiveSandbox {
    id: String,
    envd: String,
    access_token: String,
}

fn unavailable(detail: impl Into<String>) -> SandboxError {
    SandboxError::Unavailable {
        backend: SandboxBackend::E2b,
        detail: detail.into(),
    }
}

fn failed(detail: impl Into<String>) -> SandboxError {
    SandboxError::Failed {
        backend: SandboxBackend::E2b,
        detail: detail.into(),
    }
}

/// One event of a process stream (proto3 JSON of `process.StartResponse`).
#[derive(Debug, Default, Deserialize)]
struct StartResponse {
    #[serde(default)]
    event: Option<ProcessEvent>,
}

#[derive(Debug, Default, Deserialize)]
struct ProcessEvent {
    #[serde(default)]
    start: Option<serde_json::Value>,
    #[serde(default)]
    data: Option<DataEvent>,
    #[serde(default)]
    end: Option<EndEvent>,
    #[serde(default)]
    keepalive: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
struct DataEvent {
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    stderr: Option<String>,
    #[serde(default)]
    pty: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndEvent {
    /// proto3 JSON leaves out a zero exit code.
    #[serde(default)]
    exit_code: i64,
    #[serde(default)]
    error: Option<String>,
}

/// What E2B's egress settings make of a network policy. E2B's allow entries are host
/// names (ports are not part of them) and take precedence over its deny entries, which
/// are address ranges: "everything but the list" is the list allowed and every IPv4
/// address denied. The link-local range, where clouds serve instance metadata, is
/// denied in every mode.
///
/// The agent's key never enters the sandbox: its variable holds a placeholder, and an
/// egress rule of the sandbox sets the provider's key header on every request to the
/// provider's host (E2B resolves the rule outside the sandbox).
pub fn network_settings(
    policy: &NetworkPolicy,
    agent_key: Option<&ForwardedKey>,
) -> serde_json::Value {
    const EVERYWHERE: &str = "0.0.0.0/0";
    const LINK_LOCAL: &str = "169.254.0.0/16";
    let mut settings = match policy.mode {
        NetworkMode::None => return json!({ "denyOut": [EVERYWHERE] }),
        NetworkMode::Allowlist => {
            let mut hosts: Vec<String> = policy
                .allowed
                .iter()
                .map(|entry| entry.host.clone())
                .collect();
            hosts.sort();
            hosts.dedup();
            json!({ "allowOut": hosts, "denyOut": [EVERYWHERE] })
        }
        NetworkMode::Open => json!({ "denyOut": [LINK_LOCAL] }),
    };
    if let Some(key) = agent_key {
        settings["rules"] = json!({
            key.api_host.as_str(): [
                { "transform": { "headers": { key.header.as_str(): key.header_value() } } }
            ]
        });
    }
    settings
}

/// The body that creates a sandbox for run `run_id`.
fn creation_request(
    template: &str,
    timeout_seconds: u64,
    run_id: crate::domain::RunId,
    network: &NetworkPolicy,
    agent_key: Option<&ForwardedKey>,
) -> serde_json::Value {
    let mut request = json!({
        "templateID": template,
        "secure": true,
        "timeout": timeout_seconds,
        "metadata": { "handoff_run": run_id.to_string() },
        "network": network_settings(network, agent_key),
    });
    if network.mode == NetworkMode::None {
        request["allow_internet_access"] = json!(false);
    }
    request
}

impl E2bSandbox {
    pub fn new(settings: E2bSettings, api_key: Option<Secret>) -> Self {
        // No request may hang: connecting gives up after 30 s, and an answer that sends
        // nothing for two minutes is dropped (the process stream's keepalives come more
        // often than that).
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(120))
            .build()
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "the HTTP client for E2B could not be set up with its time limits; using the defaults");
                reqwest::Client::new()
            });
        E2bSandbox {
            http,
            settings,
            api_key,
            network: NetworkPolicy::default(),
        }
    }

    /// The E2B key, if one is stored for this API host.
    /// The sandbox with `network` as what its jobs may reach.
    pub fn with_network(mut self, network: NetworkPolicy) -> Self {
        self.network = network;
        self
    }

    pub fn api_key(&self) -> Option<&Secret> {
        self.api_key.as_ref()
    }

    fn key(&self) -> Result<&Secret, SandboxError> {
        self.settings.check_addresses().map_err(unavailable)?;
        self.api_key.as_ref().ok_or_else(|| {
            unavailable(format!(
                "no E2B API key is stored for {}",
                self.settings.api_host()
            ))
        })
    }

    /// Turns a transport error into text without any secret in it.
    fn describe(&self, error: reqwest::Error) -> String {
        let text = error.without_url().to_string();
        match &self.api_key {
            Some(key) => redact(&text, key),
            None => text,
        }
    }

    /// At most the first 2,000 characters of an answer E2B sent, scrubbed of the E2B
    /// key (the run scrubs its other secrets from whatever it keeps).
    fn excerpt(&self, body: &str) -> String {
        const LONGEST: usize = 2000;
        let trimmed = body.trim();
        let mut cut: String = trimmed.chars().take(LONGEST).collect();
        if cut.len() < trimmed.len() {
            cut.push_str(" [cut]");
        }
        match &self.api_key {
            Some(key) => redact(&cut, key),
            None => cut,
        }
    }

    /// One cheap authenticated call (listing at most one running sandbox): does E2B
    /// accept the key?
    pub async fn check_key(&self) -> Result<(), SandboxError> {
        let response = self
            .http
            .get(format!("{}/v2/sandboxes?limit=1", self.settings.api_base))
            .header("X-API-Key", self.key()?.expose())
            .send()
            .await
            .map_err(|error| unavailable(format!("cannot reach E2B: {}", self.describe(error))))?;
        match response.status() {
            status if status.is_success() => Ok(()),
            reqwest::StatusCode::UNAUTHORIZED | reqwest::StatusCode::FORBIDDEN => Err(unavailable(
                format!("E2B refuses the key ({})", response.status()),
            )),
            status => Err(unavailable(format!("E2B answered {status}"))),
        }
    }

    pub async fn preflight(&self) -> Result<(), SandboxError> {
        self.key()?;
        Ok(())
    }

    fn envd_base(&self, id: &str, domain: Option<&str>) -> String {
        self.settings
            .envd_url_template
            .replace("{sandbox_id}", id)
            .replace("{port}", &ENVD_PORT.to_string())
            .replace("{domain}", domain.unwrap_or(DEFAULT_DOMAIN))
            .trim_end_matches('/')
            .to_owned()
    }

    async fn create(&self, job: &SandboxJob) -> Result<LiveSandbox, SandboxError> {
        let response = self
            .http
            .post(format!("{}/sandboxes", self.settings.api_base))
            .header("X-API-Key", self.key()?.expose())
            .json(&creation_request(
                &self.settings.template,
                job.timeout.as_secs() + 120,
                job.run_id,
                &self.network,
                job.agent_key.as_ref(),
            ))
            .send()
            .await
            .map_err(|error| unavailable(format!("cannot reach E2B: {}", self.describe(error))))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            return Err(unavailable(format!(
                "E2B refused to create a sandbox ({status}): {}",
                self.excerpt(&body)
            )));
        }
        let created: CreatedSandbox = response.json().await.map_err(|error| {
            failed(format!(
                "E2B's answer to create is not what it should be: {}",
                self.describe(error)
            ))
        })?;
        let Some(access_token) = created.envd_access_token else {
            // Asked for secured and not given a token: a sandbox anyone who learns its id
            // could reach. It is not used.
            self.kill(&created.sandbox_id).await;
            return Err(failed(
                "E2B made a sandbox without an access token for its envd, though a secured \
                 one was asked for; it was removed unused",
            ));
        };
        Ok(LiveSandbox {
            envd: self.envd_base(&created.sandbox_id, created.domain.as_deref()),
            id: created.sandbox_id,
            access_token,
        })
    }

    fn envd_request(
        &self,
        sandbox: &LiveSandbox,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", sandbox.envd))
            .header("E2b-Sandbox-Id", &sandbox.id)
            .header("E2b-Sandbox-Port", ENVD_PORT.to_string())
            .header("X-Access-Token", &sandbox.access_token)
    }

    async fn set_timeout(&self, sandbox: &LiveSandbox, seconds: u64) -> Result<(), SandboxError> {
        let response = self
            .http
            .post(format!(
                "{}/sandboxes/{}/timeout",
                self.settings.api_base, sandbox.id
            ))
            .header("X-API-Key", self.key()?.expose())
            .json(&json!({ "timeout": seconds }))
            .send()
            .await
            .map_err(|error| {
                failed(format!(
                    "cannot set the sandbox's timeout: {}",
                    self.describe(error)
                ))
            })?;
        if !response.status().is_success() {
            return Err(failed(format!(
                "E2B refused the timeout ({})",
                response.status()
            )));
        }
        Ok(())
    }

    async fn kill(&self, sandbox_id: &str) {
        let key = match self.key() {
            Ok(key) => key,
            Err(error) => {
                tracing::warn!(sandbox = sandbox_id, %error, "the sandbox cannot be killed without the E2B key");
                return;
            }
        };
        let answer = self
            .http
            .delete(format!("{}/sandboxes/{sandbox_id}", self.settings.api_base))
            .header("X-API-Key", key.expose())
            .send()
            .await;
        match answer {
            Ok(answer) if answer.status().is_success() || answer.status().as_u16() == 404 => {}
            Ok(answer) => {
                tracing::warn!(
                    sandbox = sandbox_id,
                    status = answer.status().as_u16(),
                    "E2B did not kill the sandbox"
                )
            }
            Err(error) => tracing::warn!(
                sandbox = sandbox_id,
                error = %crate::secrets::redact(&error.to_string(), key),
                "E2B could not be asked to kill the sandbox"
            ),
        }
    }

    pub async fn run(
        &self,
        job: &SandboxJob,
        control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let sandbox = self.create(job).await?;
        control.report(SandboxEvent::Started {
            sandbox_id: sandbox.id.clone(),
        });
        let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
            self.run_in(&sandbox, job, control),
        ))
        .await;
        self.kill(&sandbox.id).await;
        match outcome {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    async fn run_in(
        &self,
        sandbox: &LiveSandbox,
        job: &SandboxJob,
        mut control: JobControl,
    ) -> Result<SandboxEnd, SandboxError> {
        let name = format!("handoff-run-{}", job.run_id);
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
        self.set_timeout(sandbox, job.timeout.as_secs() + 120)
            .await?;

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

        let reporter = control.clone();
        let end = tokio::select! {
            end = self.follow(response, &reporter) => end?,
            _ = tokio::time::sleep(job.timeout) => return Ok(SandboxEnd::TimedOut),
            _ = control.cancelled() => return Ok(SandboxEnd::Cancelled),
        };

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
            return Ok(end);
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
            .map_err(|error| SandboxError::Transfer(format!("cannot unpack out/: {error}")))?;
        Ok(end)
    }

    /// Reads the process stream to its end; a silence longer than the keepalive timeout
    /// counts as a hung stream.
    async fn follow(
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
                let _ = (event.start, event.keepalive);
            }
        }
        exit.ok_or_else(|| failed("the process stream ended without the process's end"))
    }

    /// Kills a sandbox left by a crash.
    pub async fn remove_leftover(&self, sandbox_id: Option<&str>) -> Result<(), SandboxError> {
        if let Some(id) = sandbox_id {
            self.kill(id).await;
        }
        Ok(())
    }
}
