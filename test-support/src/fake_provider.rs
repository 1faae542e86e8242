//! A stand-in for an agent's provider (Anthropic's or OpenAI's API) on this machine: it
//! keeps the key header of every request it gets and answers with a short message, so
//! that a test sees which key arrived while nothing leaves the machine.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::HeaderMap;

/// One request the stand-in got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRequest {
    pub method: String,
    pub path: String,
    /// Anthropic's key header.
    pub x_api_key: Option<String>,
    /// OpenAI's key header.
    pub authorization: Option<String>,
}

/// What the stand-in answers to every request.
pub const ANSWER: &str =
    r#"{"type":"message","content":[{"type":"text","text":"hello from the stand-in provider"}]}"#;

pub struct FakeProvider {
    address: SocketAddr,
    received: Arc<Mutex<Vec<ProviderRequest>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

async fn answer(
    State(received): State<Arc<Mutex<Vec<ProviderRequest>>>>,
    request: Request,
) -> ([(&'static str, &'static str); 1], &'static str) {
    received.lock().expect("received").push(ProviderRequest {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        x_api_key: header(request.headers(), "x-api-key"),
        authorization: header(request.headers(), "authorization"),
    });
    ([("content-type", "application/json")], ANSWER)
}

impl FakeProvider {
    /// Listens on every address of this machine, so that an egress gate reaches it
    /// through the engine's host gateway; its address for settings is the loopback one.
    pub async fn start() -> FakeProvider {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:0")
            .await
            .expect("the stand-in provider listens");
        let address = listener.local_addr().expect("its address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(received.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, router)
                .await
                .expect("the stand-in provider serves");
        });
        FakeProvider {
            address,
            received,
            server,
        }
    }

    /// `http://127.0.0.1:PORT`, for a provider's `api_base` setting.
    pub fn api_base(&self) -> String {
        format!("http://127.0.0.1:{}", self.address.port())
    }

    pub fn received(&self) -> Vec<ProviderRequest> {
        self.received.lock().expect("received").clone()
    }
}
