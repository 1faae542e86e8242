//! An agent's API key as a run hands it over: the variable the agent reads it from, the
//! provider and its API host, the header a request carries it in, and the provider's
//! model endpoints, the only requests the key forwarder adds it to. Both the presets and
//! the Claude plans (whose token travels another way) build on it.

use serde::Serialize;

/// An agent's key: where it reads it from and how a request carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentKey {
    pub variable: &'static str,
    pub provider: &'static str,
    /// The provider's API host: on a sandbox's allow-list whenever the agent runs.
    pub api_host: &'static str,
    /// How a request carries the key: the header, and what precedes the key in it.
    pub header: KeyHeader,
    /// The variables the agent reads the provider's base address from; inside a
    /// sandbox they name Handoff's forwarding endpoint, which adds the key, so that
    /// the key itself never enters the sandbox.
    pub base_address_variables: &'static [&'static str],
    /// What the agent expects after the host in that base address (`/v1` for clients
    /// whose base address includes the API version).
    pub base_path: &'static str,
    /// The provider's model endpoints (method, path): the only requests the key
    /// forwarder passes on with the key.
    pub model_endpoints: &'static [(&'static str, &'static str)],
}

/// The header a provider reads its key from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KeyHeader {
    pub name: &'static str,
    /// Written before the key: `Bearer ` for OpenAI.
    pub prefix: &'static str,
}

/// Anthropic's model endpoints (docs.anthropic.com, "Messages" and "Count tokens").
pub const ANTHROPIC_MODEL_ENDPOINTS: &[(&str, &str)] = &[
    ("POST", "/v1/messages"),
    ("POST", "/v1/messages/count_tokens"),
];
/// OpenAI's model endpoints (platform.openai.com, "Responses", "Chat Completions", and
/// the model list that clients read to pick a model).
pub const OPENAI_MODEL_ENDPOINTS: &[(&str, &str)] = &[
    ("POST", "/v1/responses"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
];

/// Anthropic's `x-api-key: KEY`.
pub const ANTHROPIC_KEY_HEADER: KeyHeader = KeyHeader {
    name: "x-api-key",
    prefix: "",
};
/// OpenAI's `Authorization: Bearer KEY`.
pub const OPENAI_KEY_HEADER: KeyHeader = KeyHeader {
    name: "authorization",
    prefix: "Bearer ",
};
