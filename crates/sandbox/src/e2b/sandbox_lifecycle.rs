//! A cloud sandbox's life through E2B's control-plane API: created (secure, with the
//! egress rules a network policy makes, the agent's key set by a rule outside the
//! sandbox), its timeout set, killed; and the requests to its in-sandbox API.

use crate::key_forwarding::ForwardedKey;
use crate::{SandboxError, SandboxJob};
use handoff_domain::{NetworkMode, NetworkPolicy};
use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreatedSandbox {
    #[serde(rename = "sandboxID")]
    pub(super) sandbox_id: String,
    #[serde(default)]
    pub(super) envd_access_token: Option<String>,
    #[serde(default)]
    pub(super) domain: Option<String>,
}

/// A sandbox that exists, with how to reach its envd (a secured sandbox's envd takes
/// only calls carrying its access token, so that knowing its id is not enough).
pub(super) struct LiveSandbox {
    pub(super) id: String,
    pub(super) envd: String,
    pub(super) access_token: String,
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
pub(super) fn creation_request(
    template: &str,
    timeout_seconds: u64,
    run_id: handoff_domain::RunId,
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
    pub(super) async fn create(&self, job: &SandboxJob) -> Result<LiveSandbox, SandboxError> {
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

    pub(super) fn envd_request(
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

    pub(super) async fn set_timeout(
        &self,
        sandbox: &LiveSandbox,
        seconds: u64,
    ) -> Result<(), SandboxError> {
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

    pub(super) async fn kill(&self, sandbox_id: &str) {
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
                error = %handoff_domain::secret::redact(&error.to_string(), key),
                "E2B could not be asked to kill the sandbox"
            ),
        }
    }
}
