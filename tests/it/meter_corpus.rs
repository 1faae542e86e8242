//! The meter's hostile-request corpus: requests an agent in a sandbox may send its key
//! forwarder to spend without being counted, each sent to a real forwarder in front of
//! a stand-in provider. Every request is metered (a step, with the usage the provider
//! reported or, when that cannot be read, its whole reservation) or refused before it
//! reaches the provider.
//!
//! The cases: a Chat Completions stream that does not ask for its usage; Responses and
//! Messages streams the agent hangs up on before their usage; twenty calls at once
//! against a budget that holds three; a compressed answer; an answer with no usage; a
//! Messages stream the provider cuts off before its last usage;
//! a body that is not JSON; bodies past the providers' size, declared and chunked, and
//! six large ones at once; a path that is no model call; two requests pipelined on one
//! connection.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use futures::channel::mpsc;
use futures::{SinkExt as _, StreamExt as _};
use handoff::domain::budgets::SpendLimit;
use handoff::domain::model_prices::PriceTable;
use handoff::sandbox::key_forwarding::{ForwardedKey, KeyForwarder, ModelEndpoint};
use handoff::secrets::Secret;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{Notify, Semaphore};

/// The stand-in provider: what it answers is picked by the `x-scenario` header.
struct Provider {
    /// Requests that reached it.
    reached: AtomicUsize,
    /// Lets a stream held before its usage go on.
    resume: Notify,
    /// Lets held answers begin.
    release: Semaphore,
    /// Whether each Chat Completions request asked for its usage.
    asked_usage: std::sync::Mutex<Vec<bool>>,
}

type Events = mpsc::Sender<Result<String, Infallible>>;

async fn send(events: &mut Events, data: serde_json::Value) {
    let event = format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap_or("chunk")
    );
    events.send(Ok(event)).await.unwrap_or(());
}

fn stream_of(write: impl FnOnce(Events) -> futures::future::BoxFuture<'static, ()>) -> Response {
    let (events, body) = mpsc::channel(16);
    tokio::spawn(write(events));
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

async fn provide(State(provider): State<Arc<Provider>>, request: Request) -> Response {
    use futures::FutureExt as _;
    provider.reached.fetch_add(1, Ordering::SeqCst);
    let scenario = request
        .headers()
        .get("x-scenario")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("plain")
        .to_owned();
    let body = axum::body::to_bytes(request.into_body(), 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let model = body["model"]
        .as_str()
        .unwrap_or("claude-sonnet-4-5")
        .to_owned();
    let json = |value: serde_json::Value| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(value.to_string()))
            .unwrap()
    };
    match scenario.as_str() {
        "anthropic-cut-off" => stream_of(move |mut events| {
            async move {
                // The provider's side ends before the figures of what was written.
                send(&mut events, serde_json::json!({"type": "message_start", "message": {"model": model, "usage": {"input_tokens": 100_000, "output_tokens": 1}}})).await;
                send(&mut events, serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})).await;
                send(&mut events, serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}})).await;
            }
            .boxed()
        }),
        "anthropic-hang-up" | "held" => {
            if scenario == "held" {
                provider.release.acquire().await.unwrap().forget();
            }
            let provider = provider.clone();
            stream_of(move |mut events| {
                async move {
                    send(&mut events, serde_json::json!({"type": "message_start", "message": {"model": model, "usage": {"input_tokens": 100_000, "output_tokens": 1}}})).await;
                    send(&mut events, serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})).await;
                    send(&mut events, serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}})).await;
                    send(&mut events, serde_json::json!({"type": "content_block_stop", "index": 0})).await;
                    if scenario == "anthropic-hang-up" {
                        provider.resume.notified().await;
                    }
                    send(&mut events, serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 200_000}})).await;
                    send(&mut events, serde_json::json!({"type": "message_stop"})).await;
                }
                .boxed()
            })
        }
        "responses-hang-up" => {
            let provider = provider.clone();
            stream_of(move |mut events| {
                async move {
                    send(&mut events, serde_json::json!({"type": "response.created", "response": {"model": model}})).await;
                    send(&mut events, serde_json::json!({"type": "response.output_item.done", "item": {"type": "message", "content": [{"type": "output_text", "text": "Done."}]}})).await;
                    provider.resume.notified().await;
                    send(&mut events, serde_json::json!({"type": "response.completed", "response": {"model": model, "output": [], "usage": {"input_tokens": 100_000, "output_tokens": 50_000, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}})).await;
                }
                .boxed()
            })
        }
        "chat" => {
            let asked = body["stream_options"]["include_usage"].as_bool() == Some(true);
            provider.asked_usage.lock().unwrap().push(asked);
            stream_of(move |mut events| {
                async move {
                    for _ in 0..10 {
                        send(&mut events, serde_json::json!({"model": model, "choices": [{"index": 0, "delta": {"content": "step "}}]})).await;
                    }
                    if asked {
                        send(&mut events, serde_json::json!({"model": model, "choices": [], "usage": {"prompt_tokens": 100_000, "completion_tokens": 10_000}})).await;
                    }
                }
                .boxed()
            })
        }
        "gzip" => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder
                .write_all(serde_json::json!({"model": model, "content": [], "usage": {"input_tokens": 10, "output_tokens": 10}}).to_string().as_bytes())
                .unwrap();
            Response::builder()
                .header("content-type", "application/json")
                .header("content-encoding", "gzip")
                .body(Body::from(encoder.finish().unwrap()))
                .unwrap()
        }
        "no-usage" => {
            json(serde_json::json!({"model": model, "content": [{"type": "text", "text": "hi"}]}))
        }
        _ => json(
            serde_json::json!({"model": model, "content": [{"type": "text", "text": "hi"}], "usage": {"input_tokens": 1000, "output_tokens": 100}}),
        ),
    }
}

async fn start_provider() -> (String, Arc<Provider>) {
    let provider = Arc::new(Provider {
        reached: AtomicUsize::new(0),
        resume: Notify::new(),
        release: Semaphore::new(0),
        asked_usage: std::sync::Mutex::default(),
    });
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let router = axum::Router::new()
        .fallback(provide)
        .with_state(provider.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (address, provider)
}

fn key_for(upstream: &str, anthropic: bool, budget_usd: Option<f64>) -> ForwardedKey {
    let key = if anthropic {
        ForwardedKey::new(
            "ANTHROPIC_API_KEY",
            &["ANTHROPIC_BASE_URL"],
            "",
            "x-api-key",
            "",
            "api.anthropic.com",
            upstream,
            ModelEndpoint::list(&[
                ("POST", "/v1/messages"),
                ("POST", "/v1/messages/count_tokens"),
            ]),
            Secret::new("sk-ant-corpus"),
        )
    } else {
        ForwardedKey::new(
            "OPENAI_API_KEY",
            &["OPENAI_BASE_URL"],
            "/v1",
            "Authorization",
            "Bearer ",
            "api.openai.com",
            upstream,
            ModelEndpoint::list(&[("POST", "/v1/responses"), ("POST", "/v1/chat/completions")]),
            Secret::new("sk-corpus"),
        )
    };
    key.renewed_with(
        SpendLimit {
            usd: budget_usd,
            tokens: None,
        },
        PriceTable::default(),
        None,
    )
}

struct Corpus {
    provider: Arc<Provider>,
    anthropic: ForwardedKey,
    anthropic_at: String,
    openai: ForwardedKey,
    openai_at: String,
    _forwarders: Vec<KeyForwarder>,
    http: reqwest::Client,
}

impl Corpus {
    async fn start(anthropic_budget: Option<f64>) -> Corpus {
        let (upstream, provider) = start_provider().await;
        let anthropic = key_for(&upstream, true, anthropic_budget);
        let openai = key_for(&upstream, false, None);
        let anthropic_forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &anthropic)
            .await
            .unwrap();
        let openai_forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &openai)
            .await
            .unwrap();
        Corpus {
            provider,
            anthropic_at: format!("http://{}", anthropic_forwarder.address()),
            openai_at: format!("http://{}", openai_forwarder.address()),
            anthropic,
            openai,
            _forwarders: vec![anthropic_forwarder, openai_forwarder],
            http: handoff::http_client::default_client(),
        }
    }

    fn messages(&self, scenario: &str, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}/v1/messages", self.anthropic_at))
            .header("x-api-key", &self.anthropic.placeholder)
            .header("x-scenario", scenario)
            .body(body)
    }

    fn openai(
        &self,
        path: &str,
        scenario: &str,
        body: serde_json::Value,
    ) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.openai_at))
            .header(
                "authorization",
                format!("Bearer {}", self.openai.placeholder),
            )
            .header("x-scenario", scenario)
            .body(body.to_string())
    }

    fn reached(&self) -> usize {
        self.provider.reached.load(Ordering::SeqCst)
    }
}

/// A Messages request whose one message is `bytes` long, sent in chunks of a megabyte
/// with no length declared.
pub(crate) fn chunked_request(bytes: usize) -> reqwest::Body {
    let body = serde_json::json!({"model": "claude-haiku-4-5", "max_tokens": 10,
                                  "messages": [{"role": "user", "content": "x".repeat(bytes)}]})
    .to_string()
    .into_bytes();
    let chunks: Vec<Result<Vec<u8>, Infallible>> = body
        .chunks(1024 * 1024)
        .map(|chunk| Ok(chunk.to_vec()))
        .collect();
    reqwest::Body::wrap_stream(futures::stream::iter(chunks))
}

fn sonnet(max_tokens: u64) -> String {
    serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": max_tokens, "stream": true,
                       "messages": [{"role": "user", "content": "go"}]})
    .to_string()
}

/// Reads an event stream until a line holds `marker`, then hangs up.
async fn read_until_then_hang_up(answer: reqwest::Response, marker: &str) {
    let mut answer = answer;
    let mut seen = String::new();
    while let Some(piece) = answer.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&piece));
        if seen.contains(marker) {
            return;
        }
    }
    panic!("the stream ended before {marker}: {seen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_stream_that_does_not_ask_for_its_usage_is_made_to_and_metered() {
    let corpus = Corpus::start(None).await;
    let body = serde_json::json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "go"}]});
    let answer = corpus
        .openai("/v1/chat/completions", "chat", body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let text = answer.text().await.unwrap();
    assert!(
        text.contains("\"usage\""),
        "the agent sees the usage it did not ask for: {text}"
    );
    corpus.openai.meter.wait_until_settled(1).await;
    assert_eq!(*corpus.provider.asked_usage.lock().unwrap(), vec![true]);
    let spend = corpus.openai.meter.spend();
    assert_eq!(spend.usage.all_input(), 100_000);
    assert_eq!(spend.usage.output, 10_000);
    // gpt-4o: $2.50 and $10 a million.
    assert!((spend.cost_usd - 0.35).abs() < 1e-9, "{spend:?}");
    assert_eq!(spend.unread_calls, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_the_agent_hangs_up_on_is_read_to_its_end_for_its_usage() {
    let corpus = Corpus::start(None).await;
    let answer = corpus
        .messages("anthropic-hang-up", sonnet(300_000))
        .send()
        .await
        .unwrap();
    read_until_then_hang_up(answer, "content_block_stop").await;
    corpus.provider.resume.notify_one();
    corpus.anthropic.meter.wait_until_settled(1).await;
    let spend = corpus.anthropic.meter.spend();
    assert_eq!(
        spend.usage.output, 200_000,
        "the output tokens reported after the hang-up"
    );
    // Claude Sonnet 4.5: 100,000 in at $3 and 200,000 out at $15 a million.
    assert!((spend.cost_usd - 3.30).abs() < 1e-9, "{spend:?}");

    let body = serde_json::json!({"model": "gpt-5", "stream": true, "input": "go"});
    let answer = corpus
        .openai("/v1/responses", "responses-hang-up", body)
        .send()
        .await
        .unwrap();
    read_until_then_hang_up(answer, "response.output_item.done").await;
    corpus.provider.resume.notify_one();
    corpus.openai.meter.wait_until_settled(1).await;
    let spend = corpus.openai.meter.spend();
    // gpt-5: 100,000 in at $1.25 and 50,000 out at $10 a million.
    assert!((spend.cost_usd - 0.625).abs() < 1e-9, "{spend:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_calls_at_once_pass_only_while_the_budget_has_something_left() {
    // Each call may write 20,000 tokens at $15 a million: $0.30 and its prompt.
    let corpus = Corpus::start(Some(1.0)).await;
    let mut calls: futures::stream::FuturesUnordered<_> = (0..20)
        .map(|_| corpus.messages("held", sonnet(20_000)).send())
        .collect();
    let mut statuses = Vec::new();
    let mut answers = Vec::new();
    // The held answers begin once every refusal is in: calls go while the $1 has
    // something left, four of them ($1.20 held), the rest are refused.
    while let Some(answer) = calls.next().await {
        let answer = answer.unwrap();
        statuses.push(answer.status().as_u16());
        answers.push(answer);
        if statuses.len() == 16 {
            corpus.provider.release.add_permits(20);
        }
    }
    assert_eq!(
        statuses.iter().filter(|status| **status == 200).count(),
        4,
        "{statuses:?}"
    );
    assert_eq!(
        statuses[..16]
            .iter()
            .filter(|status| **status == 400)
            .count(),
        16,
        "{statuses:?}"
    );
    assert_eq!(corpus.reached(), 4, "no refused call reached the provider");
    for answer in answers {
        answer.bytes().await.unwrap();
    }
    corpus.anthropic.meter.wait_until_settled(4).await;
    let spend = corpus.anthropic.meter.spend();
    assert_eq!(spend.calls, 4);
    assert_eq!(spend.refused_calls, 16);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_the_meter_cannot_read_is_charged_all_it_reserved() {
    let corpus = Corpus::start(None).await;
    let plain = serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 1000,
                                   "messages": [{"role": "user", "content": "go"}]})
    .to_string();
    for scenario in ["gzip", "no-usage", "anthropic-cut-off"] {
        let answer = corpus
            .messages(scenario, plain.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{scenario}");
        answer.bytes().await.unwrap();
    }
    corpus.anthropic.meter.wait_until_settled(3).await;
    let spend = corpus.anthropic.meter.spend();
    assert_eq!(spend.unread_calls, 3, "{spend:?}");
    // At least the 1,000 tokens each may write at $15 a million.
    assert!(spend.charged_usd >= 3.0 * 0.015, "{spend:?}");
    assert!(corpus
        .anthropic
        .meter
        .steps()
        .iter()
        .all(|step| step.usage_unread));
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_that_cannot_be_metered_never_reach_the_provider() {
    let corpus = Corpus::start(None).await;
    // Not JSON.
    let answer = corpus
        .messages("plain", "not json at all")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    assert!(answer.text().await.unwrap().contains("not a JSON object"));
    // Larger than a provider takes, declared and sent in chunks with no length: refused
    // before it is read (the forwarder may answer and close while the body is still
    // being sent, so the client either reads the 413 or finds the connection closed).
    let chunks =
        futures::stream::iter((0..33).map(|_| Ok::<_, Infallible>(vec![b' '; 1024 * 1024])));
    for body in [
        reqwest::Body::from(vec![b' '; 33 * 1024 * 1024]),
        reqwest::Body::wrap_stream(chunks),
    ] {
        match corpus.messages("plain", body).send().await {
            Ok(answer) => assert_eq!(answer.status(), 413),
            Err(error) => assert!(error.is_request(), "{error}"),
        }
    }
    // No model call (on a new connection: the forwarder closed those whose bodies it
    // would not read).
    let answer = handoff::http_client::default_client()
        .post(format!("{}/v1/files", corpus.anthropic_at))
        .header("x-api-key", &corpus.anthropic.placeholder)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
    assert_eq!(corpus.reached(), 0);
    assert_eq!(corpus.anthropic.meter.spend().calls, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn six_large_bodies_at_once_leave_the_forwarder_serving_and_metering() {
    let corpus = Corpus::start(None).await;
    // Six bodies of 30 MB sent in chunks at once: each may hold three times its size
    // while read, so the forwarder's 160 MB holds one; the rest are refused as
    // overloaded, which agents retry, never read whole.
    let sends = (0..6).map(|_| {
        corpus
            .messages("plain", chunked_request(30 * 1024 * 1024))
            .send()
    });
    let answers = futures::future::join_all(sends).await;
    let statuses: Vec<u16> = answers
        .iter()
        .map(|answer| answer.as_ref().unwrap().status().as_u16())
        .collect();
    let served = statuses.iter().filter(|status| **status == 200).count();
    assert!(served >= 1, "{statuses:?}");
    assert!(
        statuses.iter().all(|status| [200, 503].contains(status)),
        "{statuses:?}"
    );
    for answer in answers {
        answer.unwrap().bytes().await.unwrap();
    }
    // Still serving: a small call goes through, and every served call was metered.
    let small = corpus
        .messages(
            "plain",
            serde_json::json!({"model": "claude-haiku-4-5", "max_tokens": 10, "messages": []})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(small.status(), 200);
    small.bytes().await.unwrap();
    corpus
        .anthropic
        .meter
        .wait_until_settled(served as u64 + 1)
        .await;
    assert_eq!(corpus.anthropic.meter.spend().calls, served as u64 + 1);
    assert_eq!(corpus.reached(), served + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_requests_pipelined_on_one_connection_are_each_metered() {
    let corpus = Corpus::start(None).await;
    let address = corpus.anthropic_at.trim_start_matches("http://").to_owned();
    let mut connection = tokio::net::TcpStream::connect(&address).await.unwrap();
    let body = serde_json::json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []})
        .to_string();
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: {address}\r\nx-api-key: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        corpus.anthropic.placeholder,
        body.len()
    );
    connection
        .write_all(format!("{request}{request}").as_bytes())
        .await
        .unwrap();
    corpus.anthropic.meter.wait_until_settled(2).await;
    let mut answers = vec![0_u8; 64 * 1024];
    let mut read = String::new();
    while read.matches("HTTP/1.1 200").count() < 2 {
        let count = connection.read(&mut answers).await.unwrap();
        assert!(count > 0, "the connection closed: {read}");
        read.push_str(&String::from_utf8_lossy(&answers[..count]));
    }
    let spend = corpus.anthropic.meter.spend();
    assert_eq!(spend.calls, 2);
    assert_eq!(spend.usage.all_input(), 2000);
    assert_eq!(corpus.reached(), 2);
}
