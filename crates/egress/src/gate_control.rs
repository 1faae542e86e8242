//! What Handoff tells a running gate: the rules of its proxy, and the keys of the runs
//! it forwards for. One JSON object per line on the gate's control socket, one answer
//! per line back.
//!
//! A key travels here in clear, which is why the socket is reachable only from inside
//! the gate's own container (Handoff runs `handoff-egress configure` there through the
//! engine) and a command is never written to a log.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::call_ledger::{CallLedger, LedgerEntry, LedgerRefusal};
use crate::key_forwarding::{ForwardedKey, ModelEndpoint};
use crate::run_meter::{RunMeter, SpendLimit};
use handoff_domain::agent_step::AgentStep;
use handoff_domain::call_reservation::CallAsk;
use handoff_domain::model_prices::PriceTable;
use handoff_domain::network_policy::{parse_allowed_hosts, NetworkPolicy};
use handoff_domain::secret::Secret;
use handoff_domain::NetworkMode;

/// One command to the gate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum GateCommand {
    /// The proxy's rules from now on: the mode's word (`allowlist`, `open`, `none`),
    /// the list's entries, and the addresses of the machine the sandboxes run on.
    SetRules {
        mode: String,
        allowed: Vec<String>,
        this_machine: Vec<IpAddr>,
    },
    /// Forward for the job holding this key's placeholder.
    AddKey { key: KeyForTheGate },
    /// Forward for the job holding this key's placeholder while this connection stays
    /// open, reserving each of its model calls through it (see [`LinkMessage`]): the
    /// run's ledger stays with the Handoff that runs it, and the key goes when the
    /// connection does.
    HoldKey { key: KeyForTheGate },
    /// Stop forwarding for the job holding `placeholder`; the answer carries what its
    /// model calls spent.
    RemoveKey { placeholder: String },
}

/// What the gate says on a held key's connection, after its first answer: one per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case")]
pub enum LinkMessage {
    /// A model call asks to be let through; [`LinkReply`] answers with the same `ask_id`.
    Reserve { ask_id: u64, ask: CallAsk },
    /// A call let through (as reservation `entry`) ended, read as `step`.
    Settle { entry: LedgerEntry, step: AgentStep },
}

/// Handoff's answer to a [`LinkMessage::Reserve`]: the reservation, or why not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LinkReply {
    pub ask_id: u64,
    pub reservation: Result<LedgerEntry, LedgerRefusal>,
}

/// What a job's model calls spent, as the gate's meter recorded them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeterReport {
    pub steps: Vec<AgentStep>,
    pub refused_calls: u64,
}

/// The gate's answer to one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateAnswer {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter: Option<MeterReport>,
}

impl GateAnswer {
    pub fn done() -> Self {
        GateAnswer {
            ok: true,
            error: None,
            meter: None,
        }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        GateAnswer {
            ok: false,
            error: Some(error.into()),
            meter: None,
        }
    }
}

/// A run's key as the gate needs it. Its `Debug` leaves the key out.
#[derive(Clone, Serialize, Deserialize)]
pub struct KeyForTheGate {
    pub placeholder: String,
    pub header: String,
    pub header_prefix: String,
    pub api_host: String,
    pub upstream: String,
    pub endpoints: Vec<ModelEndpoint>,
    /// How long the gate may hold the key at most (the run's time limit and a margin).
    pub valid_for_seconds: u64,
    pub key: String,
    /// What the job may spend, and the prices it is measured by.
    #[serde(default)]
    pub limit: SpendLimit,
    #[serde(default)]
    pub prices: Option<PriceTable>,
    /// The rules of a Claude plan's token, when the key is one.
    #[serde(default)]
    pub plan_token: Option<crate::plan_token_rules::PlanTokenRules>,
}

impl std::fmt::Debug for KeyForTheGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyForTheGate")
            .field("api_host", &self.api_host)
            .field("upstream", &self.upstream)
            .field("key", &"[redacted]")
            .finish_non_exhaustive()
    }
}

impl KeyForTheGate {
    /// `key` for the gate, which reaches the provider at `upstream`, for at most
    /// `valid_for`.
    pub fn of(key: &ForwardedKey, upstream: &str, valid_for: std::time::Duration) -> Self {
        KeyForTheGate {
            placeholder: key.placeholder.clone(),
            header: key.header.clone(),
            header_prefix: key.header_prefix.clone(),
            api_host: key.api_host.clone(),
            upstream: upstream.trim_end_matches('/').to_owned(),
            endpoints: key.endpoints.clone(),
            valid_for_seconds: valid_for.as_secs().max(1),
            key: key.secret.expose().to_owned(),
            limit: key.meter.limit(),
            prices: Some(key.meter.prices().clone()),
            plan_token: key.plan_token.clone(),
        }
    }

    /// The key as the forwarder holds it (the gate needs no variable names), its calls
    /// reserved in `ledger` when it has one.
    pub fn into_forwarded(self, ledger: Option<std::sync::Arc<dyn CallLedger>>) -> ForwardedKey {
        ForwardedKey {
            variable: String::new(),
            base_address_variables: Vec::new(),
            base_path: String::new(),
            header: self.header.to_ascii_lowercase(),
            header_prefix: self.header_prefix,
            api_host: self.api_host,
            upstream: self.upstream,
            endpoints: self.endpoints,
            secret: Secret::new(self.key),
            placeholder: self.placeholder,
            meter: RunMeter::with_ledger(self.limit, self.prices.unwrap_or_default(), ledger),
            plan_token: self.plan_token,
        }
    }
}

/// The rules a `SetRules` command carries, read; an entry or mode that does not read
/// is refused whole, so that a gate never runs on half a list.
pub fn policy_of(mode: &str, allowed: &[String]) -> Result<NetworkPolicy, String> {
    let mode = NetworkMode::parse(mode).ok_or_else(|| format!("no network mode {mode:?}"))?;
    let allowed = parse_allowed_hosts(&allowed.join("\n")).map_err(|error| error.to_string())?;
    Ok(NetworkPolicy { mode, allowed })
}

/// The `SetRules` command for `policy`.
pub fn set_rules(policy: &NetworkPolicy, this_machine: Vec<IpAddr>) -> GateCommand {
    GateCommand::SetRules {
        mode: policy.mode.as_str().to_owned(),
        allowed: policy.allowed.iter().map(ToString::to_string).collect(),
        this_machine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_for_the_gate_never_shows_in_debug_output() {
        let key = ForwardedKey::new(
            "ANTHROPIC_API_KEY",
            &["ANTHROPIC_BASE_URL"],
            "",
            "x-api-key",
            "",
            "api.anthropic.com",
            "https://api.anthropic.com",
            ModelEndpoint::list(&[("POST", "/v1/messages")]),
            Secret::new("sk-ant-never-printed"),
        );
        let for_gate = KeyForTheGate::of(
            &key,
            "https://api.anthropic.com/",
            std::time::Duration::from_secs(60),
        );
        assert!(!format!("{for_gate:?}").contains("sk-ant-never-printed"));
        let command = GateCommand::AddKey { key: for_gate };
        assert!(!format!("{command:?}").contains("sk-ant-never-printed"));
        let wire = serde_json::to_string(&command).unwrap();
        let GateCommand::AddKey { key: back } = serde_json::from_str(&wire).unwrap() else {
            panic!("an add_key command");
        };
        let forwarded = back.into_forwarded(None);
        assert_eq!(forwarded.secret.expose(), "sk-ant-never-printed");
        assert_eq!(forwarded.placeholder, key.placeholder);
        assert_eq!(forwarded.upstream, "https://api.anthropic.com");
    }

    #[test]
    fn rules_that_do_not_read_are_refused_whole() {
        assert!(policy_of("allowlist", &["api.example.org:443".into()]).is_ok());
        assert!(policy_of("sideways", &[]).is_err());
        assert!(policy_of("allowlist", &["ok.example".into(), "127.0.0.1".into()]).is_err());
    }
}
