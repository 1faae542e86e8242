//! Keeping the agent's API key out of the sandbox.
//!
//! The agent reaches its provider through a forwarding endpoint outside its sandbox:
//! on this machine's loopback for the local backend, and in the repository's egress
//! gate for Docker (see [`super::docker_gate`]). Inside the sandbox the key's variable
//! holds a placeholder made for that run, and the provider's base-address variables
//! (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`…) name the endpoint. The endpoint takes only
//! requests that carry a current run's placeholder in the provider's key header and go
//! to one of the provider's model endpoints (`POST /v1/messages`…), puts the key there
//! instead and passes the request to the provider, and to nothing else: the agent
//! cannot choose where the key goes, and the endpoint follows no redirect. So the key
//! is in no variable, file or process of the sandbox, and a placeholder that leaks is
//! worth nothing once its run has ended.
//!
//! E2B's sandboxes are not on this machine; there the sandbox's egress rules set the
//! key header on requests to the provider's host (see [`super::e2b`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};

use super::call_ledger::CallLedger;
use super::model_request::ModelRequest;
use super::plan_token_rules::PlanTokenRules;
use super::provider_answer::ModelApi;
use super::request_memory::{RequestMemory, RequestRefusal};
use super::run_meter::{provider_error, RunMeter, SpendLimit};
use crate::GateActivity;
use handoff_domain::model_prices::PriceTable;
use handoff_domain::secret::Secret;

/// Headers that belong to one connection, never passed on.
const CONNECTION_HEADERS: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// A request the endpoint passes on: a method and a path (without its query).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelEndpoint {
    pub method: String,
    pub path: String,
}

impl ModelEndpoint {
    /// Endpoints from `(method, path)` pairs.
    pub fn list(pairs: &[(&str, &str)]) -> Vec<ModelEndpoint> {
        pairs
            .iter()
            .map(|(method, path)| ModelEndpoint {
                method: (*method).to_owned(),
                path: (*path).to_owned(),
            })
            .collect()
    }
}

/// The agent's key and how its provider takes it, for one run.
#[derive(Debug, Clone)]
pub struct ForwardedKey {
    /// The variable the agent reads its key from.
    pub variable: String,
    /// The variables the agent reads the provider's base address from.
    pub base_address_variables: Vec<String>,
    /// What follows the host in that base address (`/v1`, or nothing).
    pub base_path: String,
    /// The header the provider reads the key from (lower case).
    pub header: String,
    /// What precedes the key in that header (`Bearer `, or nothing).
    pub header_prefix: String,
    /// The provider's API host, as E2B's egress rules name it.
    pub api_host: String,
    /// Where the endpoint sends requests: `https://{api_host}`, or a stand-in in tests.
    pub upstream: String,
    /// The only requests passed on: the provider's model endpoints.
    pub endpoints: Vec<ModelEndpoint>,
    pub secret: Secret,
    /// What the sandbox holds instead of the key: random, one per run.
    pub placeholder: String,
    /// What the job's model calls spent, and its budget.
    pub meter: Arc<RunMeter>,
    /// When the key is a Claude plan's token: the program that alone may use it, and
    /// what its calls must carry.
    pub plan_token: Option<PlanTokenRules>,
}

impl ForwardedKey {
    /// A key for one run, with a placeholder of its own.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        variable: &str,
        base_address_variables: &[&str],
        base_path: &str,
        header: &str,
        header_prefix: &str,
        api_host: &str,
        upstream: &str,
        endpoints: Vec<ModelEndpoint>,
        secret: Secret,
    ) -> Self {
        ForwardedKey {
            variable: variable.to_owned(),
            base_address_variables: base_address_variables
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            base_path: base_path.to_owned(),
            header: header.to_ascii_lowercase(),
            header_prefix: header_prefix.to_owned(),
            api_host: api_host.to_owned(),
            upstream: upstream.trim_end_matches('/').to_owned(),
            endpoints,
            secret,
            placeholder: new_placeholder(),
            meter: RunMeter::unlimited(),
            plan_token: None,
        }
    }

    /// The same key, kept to the rules of a plan's token.
    pub fn with_plan_rules(self, rules: PlanTokenRules) -> Self {
        ForwardedKey {
            plan_token: Some(rules),
            ..self
        }
    }

    /// Whether the key is a Claude plan's token (so its calls draw on the plan's credit).
    pub fn is_plan_token(&self) -> bool {
        self.plan_token.is_some()
    }

    /// The same key with a new placeholder, for a job that may spend `limit` priced by
    /// `prices`, each call reserved in `ledger` too.
    pub fn renewed_with(
        &self,
        limit: SpendLimit,
        prices: PriceTable,
        ledger: Option<Arc<dyn CallLedger>>,
    ) -> Self {
        ForwardedKey {
            placeholder: new_placeholder(),
            meter: RunMeter::with_ledger(limit, prices, ledger),
            ..self.clone()
        }
    }

    /// The header value the provider needs, key included (sent only to the provider).
    pub fn header_value(&self) -> String {
        format!("{}{}", self.header_prefix, self.secret.expose())
    }

    /// The variables the sandbox gets: the placeholder as the key, and, when the
    /// endpoint can be reached from the sandbox, `endpoint` (`http://host:port`) as the
    /// provider's base address.
    pub fn sandbox_environment(&self, endpoint: Option<&str>) -> Vec<(String, String)> {
        let mut environment = vec![(self.variable.clone(), self.placeholder.clone())];
        if let Some(endpoint) = endpoint {
            let address = format!("{}{}", endpoint.trim_end_matches('/'), self.base_path);
            for variable in &self.base_address_variables {
                environment.push((variable.clone(), address.clone()));
            }
        }
        environment
    }

    /// Whether `headers` carry this run's placeholder in the provider's key header.
    fn carries_placeholder(&self, headers: &HeaderMap) -> bool {
        let expected = format!("{}{}", self.header_prefix, self.placeholder);
        headers
            .get(self.header.as_str())
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim() == expected)
    }

    /// Whether `method` and `path` are one of the provider's model endpoints, as seen
    /// after the upstream's own path.
    fn is_model_endpoint(&self, method: &axum::http::Method, path: &str) -> bool {
        self.endpoints.iter().any(|endpoint| {
            endpoint.method.eq_ignore_ascii_case(method.as_str()) && endpoint.path == path
        })
    }
}

fn new_placeholder() -> String {
    format!(
        "handoff-placeholder-{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    )
}

/// The keys an endpoint forwards for, one per current job, found by the placeholder
/// a request carries.
#[derive(Debug, Default)]
pub struct ForwardingTable {
    keys: RwLock<Vec<(ForwardedKey, Option<Instant>)>>,
}

impl ForwardingTable {
    /// Forwards for `key` until it is removed.
    pub fn add(&self, key: ForwardedKey) {
        self.add_until(key, None);
    }

    /// Forwards for `key` until it is removed or `until` passes (a run that ended
    /// without giving its key back, in a crash, loses it all the same).
    pub fn add_until(&self, key: ForwardedKey, until: Option<Instant>) {
        let mut keys = self
            .keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        keys.retain(|(held, _)| held.placeholder != key.placeholder);
        keys.push((key, until));
    }

    /// Forgets the key of the job with `placeholder`; the key, if it was there.
    pub fn remove(&self, placeholder: &str) -> Option<ForwardedKey> {
        let mut keys = self
            .keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let at = keys
            .iter()
            .position(|(held, _)| held.placeholder == placeholder)?;
        Some(keys.remove(at).0)
    }

    /// Forgets the keys whose time has passed; how many.
    pub fn forget_expired(&self) -> usize {
        let now = Instant::now();
        let mut keys = self
            .keys
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let before = keys.len();
        keys.retain(|(_, until)| until.is_none_or(|until| until > now));
        before - keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_empty()
    }

    /// The key whose placeholder `headers` carry, if any and still current.
    fn key_for(&self, headers: &HeaderMap) -> Option<ForwardedKey> {
        let now = Instant::now();
        self.keys
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .find(|(key, until)| {
                until.is_none_or(|until| until > now) && key.carries_placeholder(headers)
            })
            .map(|(key, _)| key.clone())
    }
}

/// A run's forwarding endpoint on this machine (the local backend); it stops taking
/// connections when dropped.
#[derive(Debug)]
pub struct KeyForwarder {
    address: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for KeyForwarder {
    fn drop(&mut self) {
        self.server.abort();
    }
}

#[derive(Debug)]
struct Forwarding {
    table: Arc<ForwardingTable>,
    http: reqwest::Client,
    activity: GateActivity,
    memory: RequestMemory,
}

impl KeyForwarder {
    /// Listens on `bind` (a port of its own) and forwards `key`'s requests.
    pub async fn start(bind: IpAddr, key: &ForwardedKey) -> std::io::Result<KeyForwarder> {
        let listener = tokio::net::TcpListener::bind((bind, 0)).await?;
        let address = listener.local_addr()?;
        let table = Arc::new(ForwardingTable::default());
        table.add(key.clone());
        let router = forwarding_router(table, GateActivity::default())?;
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, router).await {
                tracing::warn!(%error, "the agent's key forwarder stopped");
            }
        });
        tracing::debug!(%address, "the agent's key forwarder listens");
        Ok(KeyForwarder { address, server })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

/// The endpoint as a router, forwarding for the keys of `table`.
pub fn forwarding_router(
    table: Arc<ForwardingTable>,
    activity: GateActivity,
) -> std::io::Result<axum::Router> {
    // A provider's answer may stream for minutes; only silence is cut short. No
    // redirect is followed: the key goes to the provider's address and nowhere else.
    let http = crate::http_client::client_builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(600))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(std::io::Error::other)?;
    let state = Arc::new(Forwarding {
        table,
        http,
        activity,
        memory: RequestMemory::default(),
    });
    Ok(axum::Router::new().fallback(forward).with_state(state))
}

fn refusal(status: StatusCode, text: String) -> Response {
    (status, text).into_response()
}

/// Passes one request on to the provider with the key in place of the placeholder.
async fn forward(State(state): State<Arc<Forwarding>>, request: Request) -> Response {
    let _busy = state.activity.connection_began();
    let (parts, body) = request.into_parts();
    let Some(key) = state.table.key_for(&parts.headers) else {
        tracing::warn!(
            path = parts.uri.path(),
            "the key forwarder refused a request without a current run's placeholder"
        );
        return refusal(
            StatusCode::FORBIDDEN,
            "this endpoint forwards only the requests of the runs it belongs to".to_owned(),
        );
    };
    let api = ModelApi::of_path(parts.uri.path());
    if let Err(refused) = check_what_is_asked(&key, &parts, api) {
        return *refused;
    }
    let declared_length = parts
        .headers
        .get("content-length")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    let read = match state.memory.read(body, declared_length).await {
        Ok(read) => read,
        Err(refusal) => return unread_request(api, refusal),
    };
    let (body, metered) = match reserve_for_call(&key, api, &read.body).await {
        Ok(reserved) => reserved,
        Err(refused) => return *refused,
    };
    let headers = match headers_to_send(&key, &parts.headers) {
        Ok(headers) => headers,
        Err(refused) => return *refused,
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let began = (Instant::now(), chrono::Utc::now());
    let answer = state
        .http
        .request(parts.method, format!("{}{path}", key.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await;
    // The request's share of memory is given back once it has been sent.
    drop(read);
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            if let Some((request, reservation)) = &metered {
                // A call that never reached the provider costs nothing; one that broke
                // off once sent may have been served, and counts all it reserved.
                key.meter.settle(
                    *reservation,
                    unanswered_step(request, began.1, !error.is_connect()),
                );
            }
            // Neither the address nor the headers are in the text.
            tracing::warn!(error = %error.without_url(), host = %key.api_host, "the key forwarder cannot reach the provider");
            return refusal(
                StatusCode::BAD_GATEWAY,
                "the provider cannot be reached".to_owned(),
            );
        }
    };
    answer_passed_on(&key, answer, metered.as_ref(), began)
}

/// Refuses what the run's key must not be used for: an endpoint that is not one of the
/// provider's model calls, or a plan's token sent by a program it is not for.
fn check_what_is_asked(
    key: &ForwardedKey,
    parts: &axum::http::request::Parts,
    api: Option<ModelApi>,
) -> Result<(), Box<Response>> {
    if !key.is_model_endpoint(&parts.method, parts.uri.path()) {
        tracing::warn!(
            method = %parts.method,
            path = parts.uri.path(),
            host = %key.api_host,
            "the key forwarder refused a request to an endpoint that is not a model endpoint"
        );
        let listed: Vec<String> = key
            .endpoints
            .iter()
            .map(|endpoint| format!("{} {}", endpoint.method, endpoint.path))
            .collect();
        return Err(Box::new(refusal(
            StatusCode::FORBIDDEN,
            format!(
                "this endpoint forwards only the provider's model calls ({}), not {} {}",
                listed.join(", "),
                parts.method,
                parts.uri.path()
            ),
        )));
    }
    if let Some(refused) = key
        .plan_token
        .as_ref()
        .and_then(|rules| rules.refusal(&parts.headers))
    {
        tracing::warn!(%refused, "the key forwarder refused a plan's token to a program");
        return Err(Box::new(provider_error(
            api,
            StatusCode::FORBIDDEN,
            "permission_error",
            &format!("Handoff: {refused}"),
        )));
    }
    Ok(())
}

/// The provider's kind of error for a request that was not read whole.
fn unread_request(api: Option<ModelApi>, refusal: RequestRefusal) -> Response {
    tracing::warn!(%refusal, "the key forwarder did not read a request");
    let (status, code) = match refusal {
        RequestRefusal::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "request_too_large"),
        RequestRefusal::Overloaded => (StatusCode::SERVICE_UNAVAILABLE, "overloaded"),
        RequestRefusal::BrokeOff(_) => (StatusCode::BAD_REQUEST, "request_broke_off"),
    };
    provider_error(api, status, code, &format!("Handoff: {refusal}"))
}

/// A model call is read before it leaves: its worst case is reserved, and the body may
/// change so that its answer reports its usage. The body to send, with the call and its
/// reservation when it is a model call.
async fn reserve_for_call(
    key: &ForwardedKey,
    api: Option<ModelApi>,
    read: &bytes::Bytes,
) -> Result<(bytes::Bytes, Option<(ModelRequest, u64)>), Box<Response>> {
    let Some(api) = api else {
        return Ok((read.clone(), None));
    };
    let request = match ModelRequest::read(api, read) {
        Ok(request) => request,
        Err(unreadable) => {
            tracing::warn!(%unreadable, "the key forwarder refused a model call it cannot read");
            return Err(Box::new(provider_error(
                Some(api),
                StatusCode::BAD_REQUEST,
                "unreadable_request",
                &format!("Handoff: {unreadable}"),
            )));
        }
    };
    let ask = request.ask(key.meter.prices());
    let reservation = match key.meter.reserve(ask).await {
        Ok(reservation) => reservation,
        Err(refusal) => return Err(Box::new(key.meter.refusal(Some(api), &refusal))),
    };
    let body = match &request.body_to_send {
        Some(changed) => bytes::Bytes::from(changed.clone()),
        None => read.clone(),
    };
    Ok((body, Some((request, reservation))))
}

/// The request's headers as they go to the provider: without those of this connection,
/// asking for an uncompressed answer (for the meter to read its usage on the way), with
/// the real key in place of the placeholder.
fn headers_to_send(key: &ForwardedKey, asked: &HeaderMap) -> Result<HeaderMap, Box<Response>> {
    let mut headers = asked.clone();
    for name in CONNECTION_HEADERS {
        headers.remove(*name);
    }
    headers.remove("accept-encoding");
    if let Some(rules) = &key.plan_token {
        rules.prepare(&mut headers);
    }
    let Ok(mut value) = HeaderValue::from_str(&key.header_value()) else {
        return Err(Box::new(refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the stored key cannot be sent in a header".to_owned(),
        )));
    };
    value.set_sensitive(true);
    let Ok(header) = HeaderName::from_bytes(key.header.as_bytes()) else {
        return Err(Box::new(refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no key header".to_owned(),
        )));
    };
    headers.insert(header, value);
    Ok(headers)
}

/// The provider's answer passed on to the program, metered on the way when it answers a
/// model call.
fn answer_passed_on(
    key: &ForwardedKey,
    answer: reqwest::Response,
    metered: Option<&(ModelRequest, u64)>,
    began: (Instant, chrono::DateTime<chrono::Utc>),
) -> Response {
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !CONNECTION_HEADERS.contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    let body = match metered {
        Some((request, reservation)) => {
            let status = answer.status().as_u16();
            let content_type = answer
                .headers()
                .get("content-type")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            key.meter.metered_body(
                *reservation,
                request,
                status,
                content_type.as_deref(),
                began,
                answer.bytes_stream(),
            )
        }
        None => Body::from_stream(answer.bytes_stream()),
    };
    response.body(body).unwrap_or_else(|error| {
        tracing::warn!(%error, "the key forwarder could not pass the provider's answer on");
        refusal(
            StatusCode::BAD_GATEWAY,
            "the provider's answer was unreadable".to_owned(),
        )
    })
}

/// The step of a call the provider never answered: charged nothing when it never left,
/// or all it reserved when it may have been served (`maybe_served`).
fn unanswered_step(
    request: &ModelRequest,
    began_at: chrono::DateTime<chrono::Utc>,
    maybe_served: bool,
) -> handoff_domain::agent_step::AgentStep {
    handoff_domain::agent_step::AgentStep {
        model: request
            .model
            .clone()
            .unwrap_or_else(|| "unknown".to_owned()),
        began_at,
        duration_ms: 0,
        status: 502,
        usage: handoff_domain::model_prices::TokenUsage::default(),
        cost_usd: None,
        tool_calls: Vec::new(),
        text: String::new(),
        details_left_out: false,
        usage_unread: maybe_served,
    }
}

#[cfg(test)]
#[path = "key_forwarding_tests.rs"]
mod tests;
