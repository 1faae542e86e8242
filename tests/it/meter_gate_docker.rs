//! The key forwarder in the real egress gate container (256 MB, on the Docker engine)
//! under requests meant to stop it: bodies larger than a model call, six at once, and
//! six large ones it may serve. It keeps serving and metering through the link it holds
//! the run's key on, and the engine never kills it for its memory.

use handoff_test_support as support;

use std::time::Duration;

use bollard::Docker;
use handoff::domain::budgets::SpendLimit;
use handoff::domain::model_prices::PriceTable;
use handoff::egress::gate_control::KeyForTheGate;
use handoff::sandbox::docker_gate;
use handoff::sandbox::key_forwarding::{ForwardedKey, ModelEndpoint};
use handoff::secrets::Secret;
use support::model_server::ModelServer;

use crate::meter_corpus::chunked_request;
use crate::sandbox_network_docker::test_gate;

#[tokio::test(flavor = "multi_thread")]
async fn six_huge_bodies_at_once_leave_the_real_gate_serving_and_metering() {
    let docker = Docker::connect_with_defaults().unwrap();
    let (gate, _removed, proxy) = test_gate("meter").await;
    let gate_address = proxy.ip();
    let model = ModelServer::start(Vec::new()).await;
    let key = ForwardedKey::new(
        "ANTHROPIC_API_KEY",
        &["ANTHROPIC_BASE_URL"],
        "",
        "x-api-key",
        "",
        "api.anthropic.com",
        &model.api_base(),
        ModelEndpoint::list(&[("POST", "/v1/messages")]),
        Secret::new("sk-ant-gate-memory"),
    )
    .renewed_with(SpendLimit::none(), PriceTable::default(), None);
    let held = gate
        .hold_key(
            KeyForTheGate::of(
                &key,
                &docker_gate::upstream_seen_from_the_gate(&key.upstream),
                Duration::from_secs(300),
            ),
            key.meter.clone(),
        )
        .await
        .unwrap();
    let url = format!(
        "http://{gate_address}:{}/v1/messages",
        handoff::egress::FORWARDER_PORT
    );
    let http = handoff::http_client::default_client();
    let call = |body: reqwest::Body| {
        http.post(&url)
            .header("x-api-key", &key.placeholder)
            .body(body)
            .send()
    };

    // Six bodies of 66 MB at once, in chunks: each is refused at 32 MB.
    let huge =
        futures::future::join_all((0..6).map(|_| call(chunked_request(66 * 1024 * 1024)))).await;
    for answer in huge {
        match answer {
            Ok(answer) => assert_eq!(answer.status(), 413),
            // The gate may answer and close while the body is still being sent.
            Err(error) => assert!(error.is_request(), "{error}"),
        }
    }
    // Six of 30 MB at once: read in turn, each served or refused as overloaded.
    let large =
        futures::future::join_all((0..6).map(|_| call(chunked_request(30 * 1024 * 1024)))).await;
    let mut served = 0;
    for answer in large {
        let answer = answer.unwrap();
        assert!(
            [200, 503].contains(&answer.status().as_u16()),
            "{}",
            answer.status()
        );
        served += usize::from(answer.status() == 200);
        answer.bytes().await.unwrap();
    }
    assert!(served >= 1);
    // Still serving, and every call it served is metered here, through the link.
    let small = call(reqwest::Body::from(
        serde_json::json!({"model": "claude-haiku-4-5", "max_tokens": 10, "messages": []})
            .to_string(),
    ))
    .await
    .unwrap();
    assert_eq!(small.status(), 200);
    small.bytes().await.unwrap();
    key.meter.wait_until_settled(served as u64 + 1).await;
    assert_eq!(key.meter.spend().calls, served as u64 + 1);
    assert_eq!(
        model.received().len(),
        served + 1,
        "nothing refused reached the provider"
    );

    let state = docker
        .inspect_container(gate.container_id(), None)
        .await
        .unwrap()
        .state
        .unwrap();
    assert_eq!(
        state.oom_killed,
        Some(false),
        "the engine never killed the gate"
    );
    assert_eq!(state.running, Some(true));
    held.release().await;
}
