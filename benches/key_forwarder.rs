//! What the key forwarder adds to a model call, now that it also meters it and reserves
//! it in the spend ledger: the time to the answer's first byte and to its last, through
//! the forwarder and straight to the provider, in one run; and where two runs at once
//! end against one monthly budget.
//!
//! The provider is a stand-in on loopback that streams an Anthropic Messages answer
//! (`message_start`, twenty text deltas, `message_delta` with the usage, `message_stop`,
//! one event each millisecond), so the figures are the forwarder's own cost: receiving
//! the request, reading its worst case and reserving it in the ledger (a SQLite database
//! in a temporary folder, as the app's), swapping the key, passing each piece on while
//! reading the usage, and settling the call. Each figure is the median (p50) and the
//! 99th percentile of 500 calls after 50 to warm up, direct and forwarded calls taking
//! turns.
//!
//! Then two runs of one repository, each with a forwarder of its own and two calls at a
//! time, spend against a $0.10 monthly budget until their calls are refused: where they
//! end, within one call's reservation of the budget.
//!
//! Run: `cargo bench --bench key_forwarder`. Figures: benches/results/key_forwarder.md.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt as _;
use handoff::domain::budgets::SpendLimit;
use handoff::domain::call_reservation::CallBudgets;
use handoff::domain::model_prices::PriceTable;
use handoff::pipeline::spend_ledger::StoreLedger;
use handoff::sandbox::key_forwarding::{ForwardedKey, KeyForwarder, ModelEndpoint};
use handoff::secrets::Secret;
use handoff::store::spend_ledger::LedgerRun;
use handoff::Store;
use handoff_test_support::seed;

/// The month the two runs share.
const MONTH_BUDGET_USD: f64 = 0.10;

/// A run of the seeded repository, and its key with the ledger behind its meter.
async fn ledgered_key(
    store: &Store,
    key: &ForwardedKey,
    title: &str,
    month: Option<f64>,
) -> ForwardedKey {
    let feedback = seed::add_feedback(store, seed::DEMO_REPO, title, "spend").await;
    seed::start_run(store, &feedback).await;
    let run = seed::active_run(store, &feedback).await;
    let ledger = StoreLedger::for_run(
        store.clone(),
        LedgerRun {
            run_id: run.id,
            repo_id: run.repo_id,
            own_chain: None,
            budgets: CallBudgets {
                run: SpendLimit::none(),
                repo: seed::DEMO_REPO.to_owned(),
                repo_month_usd: month,
                day_usd: None,
                plan_credit: None,
            },
        },
    );
    key.renewed_with(SpendLimit::none(), PriceTable::default(), Some(ledger))
}

const CALLS: usize = 500;
/// Each call's request: a prompt of 3,700 bytes, whose 1,200 tokens the stand-in reports
/// (the forwarder counts it, on the safe side, as 1,250 or so).
static CALL_BODY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        r#"{{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[{{"role":"user","content":"{}"}}]}}"#,
        "x".repeat(3700)
    )
});
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
        .body(CALL_BODY.as_str())
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
    let folder = tempfile::tempdir().expect("a temporary folder");
    let store = Store::open_in(folder.path())
        .await
        .expect("the store opens");
    seed::add_repo(&store, seed::DEMO_REPO).await;
    let key = ledgered_key(&store, &key, "timed", None).await;
    let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &key)
        .await
        .expect("the forwarder starts");
    let http = handoff::http_client::default_client();
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
    key.meter.settled().await;
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
    two_runs_against_one_month(&store, &key, &http).await;
}

/// Two runs at once, two calls at a time each, until the month refuses them.
async fn two_runs_against_one_month(store: &Store, key: &ForwardedKey, http: &reqwest::Client) {
    let repo = store
        .repositories()
        .repos()
        .await
        .expect("repositories")
        .into_iter()
        .next()
        .expect("the seeded repository");
    store
        .spend()
        .set_monthly_budget(repo.id, Some(MONTH_BUDGET_USD))
        .await
        .expect("the budget is set");
    let before = store
        .spend()
        .spent_so_far(repo.id, chrono::Utc::now())
        .await
        .expect("the month")
        .repo_month_usd;
    let mut runs = Vec::new();
    for title in ["first run", "second run"] {
        let key = ledgered_key(store, key, title, Some(before + MONTH_BUDGET_USD)).await;
        let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &key)
            .await
            .expect("the forwarder starts");
        runs.push((key, forwarder));
    }
    let slots = runs.iter().flat_map(|(key, forwarder)| {
        let url = format!("http://{}/v1/messages", forwarder.address());
        (0..2).map(move |_| {
            let (url, placeholder) = (url.clone(), key.placeholder.clone());
            async move {
                let mut calls = 0;
                while refused_or_answered(http, &url, &placeholder).await {
                    calls += 1;
                }
                calls
            }
        })
    });
    let calls: usize = futures::future::join_all(slots).await.into_iter().sum();
    for (key, _) in &runs {
        key.meter.settled().await;
    }
    let month = store
        .spend()
        .spent_so_far(repo.id, chrono::Utc::now())
        .await
        .expect("the month")
        .repo_month_usd
        - before;
    let one_call = one_reservation();
    println!(
        "\ntwo runs, two calls at a time each, against a ${MONTH_BUDGET_USD:.2} month: {calls} calls \
         answered, ${month:.4} charged (${:+.4} against the budget; one call's reservation is ${one_call:.4})",
        month - MONTH_BUDGET_USD
    );
    assert!(
        (month - MONTH_BUDGET_USD).abs() <= one_call,
        "the runs ended more than one reservation from the budget: ${month}"
    );
}

/// The benchmark call's reservation, as the forwarder reads it.
fn one_reservation() -> f64 {
    let request = handoff::sandbox::model_request::ModelRequest::read(
        handoff::sandbox::provider_answer::ModelApi::AnthropicMessages,
        CALL_BODY.as_bytes(),
    )
    .expect("the benchmark's request reads");
    request.ask(&PriceTable::default()).usd
}

/// Makes one call; whether it was answered (not refused).
async fn refused_or_answered(http: &reqwest::Client, url: &str, key: &str) -> bool {
    let answer = http
        .post(url)
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(CALL_BODY.as_str())
        .send()
        .await
        .expect("the call is answered");
    let answered = answer.status().is_success();
    answer.bytes().await.expect("the answer is read");
    answered
}
