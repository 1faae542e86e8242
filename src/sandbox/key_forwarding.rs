//! Keeping the agent's API key out of the sandbox.
//!
//! The agent reaches its provider through a forwarding endpoint that Handoff runs on
//! this machine for the length of one run. Inside the sandbox the key's variable holds
//! a placeholder made for that run, and the provider's base-address variables
//! (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`…) name the endpoint. The endpoint takes only
//! requests that carry the run's placeholder in the provider's key header, puts the key
//! there instead and passes the request to the provider, and to nothing else: the agent
//! cannot choose where the key goes. So the key is in no variable, file or process of
//! the sandbox, and a placeholder that leaks is worth nothing once its run has ended.
//!
//! E2B's sandboxes are not on this machine; there the sandbox's egress rules set the
//! key header on requests to the provider's host (see [`super::e2b`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};

use crate::secrets::Secret;

/// The largest request the endpoint passes on (a prompt with its files).
const LARGEST_REQUEST_BYTES: usize = 64 * 1024 * 1024;

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
    pub secret: Secret,
    /// What the sandbox holds instead of the key: random, one per run.
    pub placeholder: String,
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
            secret,
            placeholder: new_placeholder(),
        }
    }

    /// The same key with a new placeholder, for another job.
    pub fn renewed(&self) -> Self {
        ForwardedKey {
            placeholder: new_placeholder(),
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
}

fn new_placeholder() -> String {
    format!(
        "handoff-placeholder-{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    )
}

/// The run's forwarding endpoint; it stops taking connections when dropped.
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
    key: ForwardedKey,
    http: reqwest::Client,
}

impl KeyForwarder {
    /// Listens on `bind` (a port of its own) and forwards `key`'s requests.
    pub async fn start(bind: IpAddr, key: &ForwardedKey) -> std::io::Result<KeyForwarder> {
        let listener = tokio::net::TcpListener::bind((bind, 0)).await?;
        let address = listener.local_addr()?;
        // A provider's answer may stream for minutes; only silence is cut short.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(Duration::from_secs(600))
            .build()
            .map_err(std::io::Error::other)?;
        let state = Arc::new(Forwarding {
            key: key.clone(),
            http,
        });
        let router = axum::Router::new().fallback(forward).with_state(state);
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

fn refusal(status: StatusCode, text: &'static str) -> Response {
    (status, text).into_response()
}

/// Passes one request on to the provider with the key in place of the placeholder.
async fn forward(State(state): State<Arc<Forwarding>>, request: Request) -> Response {
    let key = &state.key;
    let (parts, body) = request.into_parts();
    if !key.carries_placeholder(&parts.headers) {
        tracing::warn!(
            path = parts.uri.path(),
            "the key forwarder refused a request without the run's placeholder"
        );
        return refusal(
            StatusCode::FORBIDDEN,
            "this endpoint forwards only the requests of the run it belongs to",
        );
    }
    let body = match axum::body::to_bytes(body, LARGEST_REQUEST_BYTES).await {
        Ok(body) => body,
        Err(error) => {
            tracing::warn!(%error, "the key forwarder could not read a request");
            return refusal(StatusCode::PAYLOAD_TOO_LARGE, "the request is too large");
        }
    };
    let mut headers = parts.headers.clone();
    for name in CONNECTION_HEADERS {
        headers.remove(*name);
    }
    let Ok(mut value) = HeaderValue::from_str(&key.header_value()) else {
        return refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the stored key cannot be sent in a header",
        );
    };
    value.set_sensitive(true);
    let Ok(header) = HeaderName::from_bytes(key.header.as_bytes()) else {
        return refusal(StatusCode::INTERNAL_SERVER_ERROR, "no key header");
    };
    headers.insert(header, value);
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let answer = state
        .http
        .request(parts.method, format!("{}{path}", key.upstream))
        .headers(headers)
        .body(body)
        .send()
        .await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            // Neither the address nor the headers are in the text.
            tracing::warn!(error = %error.without_url(), host = %key.api_host, "the key forwarder cannot reach the provider");
            return refusal(StatusCode::BAD_GATEWAY, "the provider cannot be reached");
        }
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !CONNECTION_HEADERS.contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap_or_else(|error| {
            tracing::warn!(%error, "the key forwarder could not pass the provider's answer on");
            refusal(
                StatusCode::BAD_GATEWAY,
                "the provider's answer was unreadable",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai_key() -> ForwardedKey {
        ForwardedKey::new(
            "OPENAI_API_KEY",
            &["OPENAI_BASE_URL", "OPENAI_API_BASE"],
            "/v1",
            "Authorization",
            "Bearer ",
            "api.openai.com",
            "https://api.openai.com/",
            Secret::new("sk-real-key"),
        )
    }

    #[test]
    fn the_sandbox_gets_the_placeholder_and_the_endpoint_never_the_key() {
        let key = openai_key();
        let environment = key.sandbox_environment(Some("http://172.17.0.1:4000"));
        assert_eq!(
            environment,
            vec![
                ("OPENAI_API_KEY".to_owned(), key.placeholder.clone()),
                (
                    "OPENAI_BASE_URL".to_owned(),
                    "http://172.17.0.1:4000/v1".to_owned()
                ),
                (
                    "OPENAI_API_BASE".to_owned(),
                    "http://172.17.0.1:4000/v1".to_owned()
                ),
            ]
        );
        assert!(environment
            .iter()
            .all(|(_, value)| !value.contains("sk-real-key")));
        assert_eq!(key.upstream, "https://api.openai.com");
        assert_eq!(key.header, "authorization");
        assert_eq!(key.header_value(), "Bearer sk-real-key");
    }

    #[test]
    fn each_run_has_a_placeholder_of_its_own() {
        assert_ne!(openai_key().placeholder, openai_key().placeholder);
    }

    #[test]
    fn only_the_runs_placeholder_in_the_key_header_is_accepted() {
        let key = openai_key();
        let mut headers = HeaderMap::new();
        assert!(!key.carries_placeholder(&headers));
        headers.insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {}", key.placeholder)).unwrap(),
        );
        assert!(key.carries_placeholder(&headers));
        headers.insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {}", openai_key().placeholder)).unwrap(),
        );
        assert!(
            !key.carries_placeholder(&headers),
            "another run's placeholder"
        );
        headers.insert(
            "authorization",
            HeaderValue::from_static("Bearer sk-real-key"),
        );
        assert!(!key.carries_placeholder(&headers));
    }
}
