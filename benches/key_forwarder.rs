//! What the key forwarder adds to a model call, now that it also meters it: the time to
//! the answer's first byte and to its last, through the forwarder and straight to the
//! provider, in one run.
//!
//! The provider is a stand-in on loopback that streams an Anthropic Messages answer
//! (`message_start`, twenty text deltas, `message_delta` with the usage, `message_stop`,
//! one event each millisecond), so the figures are the forwarder's own cost: receiving
//! the request, swapping the key, passing each piece on while reading the usage, and
//! recording the step. Each figure is the median (p50) and the 99th percentile of 500
//! calls after 50 to warm up, direct and forwarded calls taking turns.
//!
//! Run: `cargo bench --bench key_forwarder`. Figures: benches/results/key_forwarder.md.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt as _;
use handoff::sandbox::key_forwarding::{ForwardedKey, KeyForwarder, ModelEndpoint};
use handoff::secrets::Secret;

const CALLS: usize = 500;
const WARM_UP: usize = 50;

/// An Anthropic streaming answer, one event a millisecond.
async fn streamed_answer() -> Response {
    let mut events = vec![
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":1200,\"output_tokens\":1}}}\n\n".to_owned(),
    ];
    for piece in 0..20 {
        events.push(format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word {piece} \"}}}}\n\n"
        ));
    }
    events.push("event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":80}}\n\n".to_owned());
    events.push("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned());
    let stream = futures::stream::iter(events).then(|event| async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<_, std::io::Error>(event)
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("an answer")
}

/// Time to the first byte and to the last of one call.
async fn call(http: &reqwest::Client, url: &str, key: &str) -> (Duration, Duration) {
    let started = Instant::now();
    let answer = http
        .post(url)
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(r#"{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[]}"#)
        .send()
        .await
        .expect("the call is answered");
    assert!(answer.status().is_success());
    let mut body = answer.bytes_stream();
    let mut first = None;
    while let Some(piece) = body.next().await {
        piece.expect("the answer streams");
        first.get_or_insert_with(|| started.elapsed());
    }
    (first.expect("a first byte"), started.elapsed())
}

fn percentile(times: &mut [Duration], share: f64) -> Duration {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * share).round() as usize;
    times[at]
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let provider = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a port");
    let provider_address = provider.local_addr().expect("its address");
    tokio::spawn(async move {
        let router =
            axum::Router::new().route("/v1/messages", axum::routing::post(streamed_answer));
        axum::serve(provider, router)
            .await
            .expect("the stand-in serves");
    });
    let key = ForwardedKey::new(
        "ANTHROPIC_API_KEY",
        &["ANTHROPIC_BASE_URL"],
        "",
        "x-api-key",
        "",
        "api.anthropic.com",
        &format!("http://{provider_address}"),
        ModelEndpoint::list(&[("POST", "/v1/messages")]),
        Secret::new("sk-ant-bench"),
    );
    let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &key)
        .await
        .expect("the forwarder starts");
    let http = reqwest::Client::new();
    let direct_url = format!("http://{provider_address}/v1/messages");
    let forwarded_url = format!("http://{}/v1/messages", forwarder.address());

    let (mut direct_first, mut direct_last) = (Vec::new(), Vec::new());
    let (mut forwarded_first, mut forwarded_last) = (Vec::new(), Vec::new());
    for round in 0..WARM_UP + CALLS {
        let direct = call(&http, &direct_url, "sk-ant-bench").await;
        let forwarded = call(&http, &forwarded_url, &key.placeholder).await;
        if round >= WARM_UP {
            direct_first.push(direct.0);
            direct_last.push(direct.1);
            forwarded_first.push(forwarded.0);
            forwarded_last.push(forwarded.1);
        }
    }
    let spend = key.meter.spend();
    assert_eq!(
        spend.calls as usize,
        WARM_UP + CALLS,
        "every call was metered"
    );
    assert_eq!(spend.usage.input, 1200 * (WARM_UP + CALLS) as u64);

    println!("{CALLS} streamed calls each way (after {WARM_UP} to warm up), one answer event a millisecond\n");
    println!(
        "| | direct p50 | forwarded p50 | added p50 | direct p99 | forwarded p99 | added p99 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, direct, forwarded) in [
        ("first byte", &mut direct_first, &mut forwarded_first),
        ("whole answer", &mut direct_last, &mut forwarded_last),
    ] {
        let (d50, f50) = (percentile(direct, 0.5), percentile(forwarded, 0.5));
        let (d99, f99) = (percentile(direct, 0.99), percentile(forwarded, 0.99));
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            ms(d50),
            ms(f50),
            ms(f50.saturating_sub(d50)),
            ms(d99),
            ms(f99),
            ms(f99.saturating_sub(d99)),
        );
    }
    println!(
        "\nmetered: {} calls, {} tokens in, {} out, ${:.4}",
        spend.calls,
        spend.usage.all_input(),
        spend.usage.output,
        spend.cost_usd
    );
}
