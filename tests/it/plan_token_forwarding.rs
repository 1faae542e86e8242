//! A Claude plan's token at the key forwarder: sent for Claude Code only, as `Authorization:
//! Bearer` with the OAuth beta, to a stand-in Anthropic that takes the account's plan
//! token and refuses anything else (an API key included).

use std::net::Ipv4Addr;

use handoff::domain::claude_plan::PLAN_KEY;
use handoff::sandbox::key_forwarding::{ForwardedKey, KeyForwarder, ModelEndpoint};
use handoff::sandbox::plan_token_rules::PlanTokenRules;
use handoff::secrets::Secret;
use handoff_test_support::model_server::{ModelServer, ModelTurn};

const TOKEN: &str = "sk-ant-oat01-stand-in-plan-token-0123456789";

fn plan_key(upstream: &str) -> ForwardedKey {
    ForwardedKey::new(
        PLAN_KEY.variable,
        PLAN_KEY.base_address_variables,
        PLAN_KEY.base_path,
        PLAN_KEY.header.name,
        PLAN_KEY.header.prefix,
        PLAN_KEY.api_host,
        upstream,
        ModelEndpoint::list(PLAN_KEY.model_endpoints),
        Secret::new(TOKEN),
    )
    .with_plan_rules(PlanTokenRules::claude_code())
}

/// A Messages call as a program with `user_agent` and `beta` sends it, carrying the
/// placeholder as Claude Code does; the answer's status.
async fn call(
    forwarder: &KeyForwarder,
    key: &ForwardedKey,
    user_agent: &str,
    beta: Option<&str>,
) -> u16 {
    let mut request = handoff::http_client::default_client()
        .post(format!("http://{}/v1/messages", forwarder.address()))
        .header("authorization", format!("Bearer {}", key.placeholder))
        .header("user-agent", user_agent)
        .header("anthropic-version", "2023-06-01")
        .json(&serde_json::json!({
            "model": "claude-sonnet-5-5",
            "max_tokens": 1000,
            "messages": [{"role": "user", "content": "Hello"}],
        }));
    if let Some(beta) = beta {
        request = request.header("anthropic-beta", beta);
    }
    request
        .send()
        .await
        .expect("the forwarder answers")
        .status()
        .as_u16()
}

/// A stand-in Anthropic that takes only the plan's token, and a forwarder holding it.
async fn forwarder_before_a_plan_account() -> (ModelServer, ForwardedKey, KeyForwarder) {
    let model = ModelServer::start(vec![ModelTurn::Text("Hi.".to_owned())]).await;
    model.take_plan_token_only(TOKEN);
    let key = plan_key(&model.api_base());
    let forwarder = KeyForwarder::start(Ipv4Addr::LOCALHOST.into(), &key)
        .await
        .unwrap();
    (model, key, forwarder)
}

#[tokio::test]
async fn a_plans_token_reaches_the_provider_for_claude_code_with_the_oauth_beta() {
    let (model, key, forwarder) = forwarder_before_a_plan_account().await;

    let with_beta = call(
        &forwarder,
        &key,
        "claude-cli/2.1.332 (external, sdk-cli)",
        Some("claude-code-20250219,oauth-2025-04-20"),
    )
    .await;
    let without_beta = call(&forwarder, &key, "claude-cli/2.1.332 (external, cli)", None).await;

    assert_eq!((with_beta, without_beta), (200, 200));
    let received = model.received();
    assert_eq!(received.len(), 2);
    for request in &received {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert_eq!(request.x_api_key, None);
        assert!(!request.refused_credential, "{request:?}");
        assert!(
            request
                .anthropic_beta
                .as_deref()
                .is_some_and(|betas| betas.split(',').any(|beta| beta == "oauth-2025-04-20")),
            "{request:?}"
        );
    }
}

#[tokio::test]
async fn a_plans_token_is_never_sent_for_another_program() {
    let (model, key, forwarder) = forwarder_before_a_plan_account().await;

    let curl = call(&forwarder, &key, "curl/8.5.0", Some("oauth-2025-04-20")).await;
    let python = call(&forwarder, &key, "python-requests/2.32.3", None).await;

    assert_eq!((curl, python), (403, 403));
    assert!(model.received().is_empty(), "nothing reached the provider");
    assert_eq!(key.meter.spend().calls, 0, "and nothing was charged");
}

#[tokio::test]
async fn the_stand_in_refuses_an_api_key_where_the_account_pays_with_a_plan() {
    let model = ModelServer::start(vec![ModelTurn::Text("Hi.".to_owned())]).await;
    model.take_plan_token_only(TOKEN);
    let client = handoff::http_client::default_client();
    let messages = format!("{}/v1/messages", model.api_base());
    let body = serde_json::json!({"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": []});

    let api_key = client
        .post(&messages)
        .header("x-api-key", "sk-ant-api03-an-api-key")
        .json(&body)
        .send()
        .await
        .unwrap();
    let no_beta = client
        .post(&messages)
        .header("authorization", format!("Bearer {TOKEN}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let plan = client
        .post(&messages)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("anthropic-beta", "oauth-2025-04-20")
        .json(&body)
        .send()
        .await
        .unwrap();

    assert_eq!(api_key.status().as_u16(), 401);
    let refused: serde_json::Value = api_key.json().await.unwrap();
    assert_eq!(refused["error"]["type"], "authentication_error");
    assert_eq!(refused["error"]["message"], "invalid x-api-key");
    assert_eq!(no_beta.status().as_u16(), 401);
    assert_eq!(plan.status().as_u16(), 200);
    let refused: Vec<bool> = model
        .received()
        .iter()
        .map(|request| request.refused_credential)
        .collect();
    assert_eq!(refused, [true, true, false]);
}
