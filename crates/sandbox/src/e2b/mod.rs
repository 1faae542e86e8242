//! The `e2b` backend: a cloud sandbox. E2B's control-plane REST API creates it,
//! sets its timeout and kills it; its in-sandbox API (envd) takes the workspace as one
//! uploaded archive, runs the job as a streamed process (Connect framing, with
//! `Connect-Timeout-Ms` bounding its life and keepalives proving it is alive) and hands
//! `out/` back as a downloaded archive. Both bases are configurable, so the same code
//! talks to E2B's cloud or to a fake in tests.
//!
//! - this file: the settings, [`E2bSandbox`], its key and what leaves it;
//! - [`sandbox_lifecycle`]: creating a sandbox with its network rules, its timeout,
//!   killing it;
//! - [`job_process`]: the job run as a streamed process, the workspace in, `out/` back;
//! - [`template_recipe`]: a repository's environment as a template build, reading an
//!   owner's Dockerfile through [`dockerfile_steps`];
//! - [`template_build`]: building that template through E2B's API, finding it ready,
//!   pruning the older ones.

pub mod dockerfile_steps;
mod job_process;
mod sandbox_lifecycle;
mod template_build;
pub mod template_recipe;
use self::sandbox_lifecycle::LiveSandbox;
pub use sandbox_lifecycle::network_settings;

use std::time::Duration;

use super::{JobControl, SandboxEnd, SandboxError, SandboxEvent, SandboxJob};
use handoff_domain::secret::{redact, Secret};
use handoff_domain::service_address::check_secret_address;
use handoff_domain::{NetworkPolicy, SandboxBackend};

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

impl E2bSandbox {
    pub fn new(settings: E2bSettings, api_key: Option<Secret>) -> Self {
        // No request may hang: connecting gives up after 30 s, and an answer that sends
        // nothing for two minutes is dropped (the process stream's keepalives come more
        // often than that).
        let http = handoff_egress::http_client::client_builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(120))
            .build()
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "the HTTP client for E2B could not be set up with its time limits; using the defaults");
                handoff_egress::http_client::default_client()
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

    /// Kills a sandbox left by a crash.
    pub async fn remove_leftover(&self, sandbox_id: Option<&str>) -> Result<(), SandboxError> {
        if let Some(id) = sandbox_id {
            self.kill(id).await;
        }
        Ok(())
    }
}
