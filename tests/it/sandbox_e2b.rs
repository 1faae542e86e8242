//! The `e2b` backend against the fake E2B: a job runs in a sandbox and its out/ comes
//! back; the sandbox is killed in every outcome; a hung stream is noticed; a bad key is
//! refused before anything runs; and the fake answers as E2B's descriptions say.

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::RunId;
use handoff::sandbox::e2b::{E2bSandbox, E2bSettings};
use handoff::sandbox::key_forwarding::{ForwardedKey, ModelEndpoint};
use handoff::sandbox::{
    JobControl, ResourceLimits, SandboxEnd, SandboxError, SandboxEvent, SandboxJob,
};
use handoff::secrets::Secret;
use support::fake_e2b::FakeE2b;
use support::openapi_schema::{dereference, e2b_description, violations};
use tokio::sync::{mpsc, watch};

const KEY: &str = "e2b_test_key_1234567890";

fn sandbox(fake: &FakeE2b, key: &str, keepalive_timeout: Duration) -> E2bSandbox {
    E2bSandbox::new(
        E2bSettings {
            api_base: fake.api_base(),
            envd_url_template: fake.envd_url_template(),
            template: "base".to_owned(),
            keepalive_timeout,
        },
        Some(Secret::new(key)),
    )
}

/// A workspace whose job script is `script`.
fn workspace(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("repo")).unwrap();
    std::fs::create_dir_all(dir.path().join("handoff")).unwrap();
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("repo/file.txt"), "in the repo\n").unwrap();
    std::fs::write(dir.path().join("handoff/job.sh"), script).unwrap();
    dir
}

/// The agent's key, as the claude preset sends it.
fn agent_key() -> ForwardedKey {
    ForwardedKey::new(
        "AGENT_KEY",
        &["ANTHROPIC_BASE_URL"],
        "",
        "x-api-key",
        "",
        "api.anthropic.com",
        "https://api.anthropic.com",
        ModelEndpoint::list(handoff::domain::agent_presets::ANTHROPIC_MODEL_ENDPOINTS),
        Secret::new("agent-secret"),
    )
}

fn job(dir: &tempfile::TempDir, timeout: Duration) -> SandboxJob {
    SandboxJob {
        run_id: RunId(7),
        workspace: dir.path().to_owned(),
        kept_copy: None,
        agent_key: Some(agent_key()),
        timeout,
        limits: ResourceLimits::default(),
    }
}

fn control() -> (
    JobControl,
    mpsc::UnboundedReceiver<SandboxEvent>,
    watch::Sender<bool>,
) {
    let (events, receiver) = mpsc::unbounded_channel();
    let (cancel_sender, cancel) = watch::channel(false);
    (JobControl { events, cancel }, receiver, cancel_sender)
}

fn output_of(mut receiver: mpsc::UnboundedReceiver<SandboxEvent>) -> String {
    let mut text = String::new();
    while let Ok(event) = receiver.try_recv() {
        if let SandboxEvent::Output { bytes, .. } = event {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    text
}

#[tokio::test]
async fn a_job_runs_in_the_sandbox_and_its_out_folder_comes_back() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace(
        "cat \"$HANDOFF_WORKSPACE/repo/file.txt\"\necho \"key: $AGENT_KEY\" >&2\necho result > \"$HANDOFF_WORKSPACE/out/result.txt\"\nexit 0\n",
    );
    let (control, events, _cancel) = control();

    let end = sandbox(&fake, KEY, Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap();

    assert_eq!(end, SandboxEnd::Exited(0));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/result.txt")).unwrap(),
        "result\n"
    );
    let output = output_of(events);
    assert!(
        output.contains("in the repo") && output.contains("key: handoff-placeholder-"),
        "the sandbox holds a placeholder for the key: {output}"
    );
    assert!(
        !output.contains("agent-secret"),
        "the key entered the sandbox: {output}"
    );

    assert!(fake.live_sandboxes().is_empty(), "the sandbox was killed");
    let start = fake
        .requests()
        .into_iter()
        .find(|request| request.path.ends_with("/process.Process/Start"))
        .unwrap();
    assert_eq!(start.connect_timeout_ms.as_deref(), Some("30000"));
    let created = &fake.sandboxes()[0];
    assert_eq!(created.metadata["handoff_run"], "7");
    assert_eq!(
        created.timeout_seconds, 150,
        "the timeout was set through the API"
    );
}

#[tokio::test]
async fn a_failing_job_reports_its_exit_code_and_the_sandbox_still_goes() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace("echo failing >&2\nexit 5\n");
    let (control, _events, _cancel) = control();

    let end = sandbox(&fake, KEY, Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap();

    assert_eq!(end, SandboxEnd::Exited(5));
    assert!(fake.live_sandboxes().is_empty());
}

#[tokio::test]
async fn a_stream_without_keepalives_is_hung_and_the_sandbox_is_killed() {
    let fake = FakeE2b::start(KEY).await;
    fake.hang_next_process();
    let dir = workspace("sleep 30\n");
    let (control, _events, _cancel) = control();

    let error = sandbox(&fake, KEY, Duration::from_secs(1))
        .run(&job(&dir, Duration::from_secs(60)), control)
        .await
        .unwrap_err();

    assert!(
        error.to_string().contains("not even a keepalive"),
        "{error}"
    );
    assert!(
        fake.live_sandboxes().is_empty(),
        "the hung sandbox was killed"
    );
}

#[tokio::test]
async fn a_cancel_kills_the_sandbox() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace("echo started\nsleep 30\n");
    let (control, mut events, cancel) = control();
    let runner = sandbox(&fake, KEY, Duration::from_secs(10));
    let job = job(&dir, Duration::from_secs(60));
    let running = tokio::spawn(async move { runner.run(&job, control).await });
    // The job is under way once it has said so.
    let mut said = String::new();
    while !said.contains("started") {
        let event = events.recv().await.expect("the job says it started");
        if let SandboxEvent::Output { bytes, .. } = event {
            said.push_str(&String::from_utf8_lossy(&bytes));
        }
    }

    cancel.send(true).unwrap();

    let end = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(end, SandboxEnd::Cancelled);
    assert!(fake.live_sandboxes().is_empty());
}

#[tokio::test]
async fn a_bad_key_is_refused_before_anything_runs() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace("exit 0\n");
    let (control, _events, _cancel) = control();

    let error = sandbox(&fake, "wrong_key_0000000", Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap_err();

    assert!(
        matches!(error, SandboxError::Unavailable { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("E2B refused to create a sandbox (401 Unauthorized)"),
        "{error}"
    );
    assert!(!error.to_string().contains("wrong_key_0000000"));
    assert!(fake.sandboxes().is_empty());
}

#[tokio::test]
async fn the_fakes_answers_follow_e2bs_descriptions() {
    let control_plane = e2b_description("openapi.yml");
    let envd = e2b_description("envd.yaml");
    let fake = FakeE2b::start(KEY).await;
    let post = |path: &str, body: serde_json::Value, key: &str| {
        let base = fake.api_base();
        let path = path.to_owned();
        let key = key.to_owned();
        async move {
            support::raw_http::request(
                &base,
                "POST",
                &path,
                &[("X-API-Key", &key), ("Content-Type", "application/json")],
                Some(body.to_string().as_bytes()),
            )
            .await
        }
    };
    let schema_of = |description: &serde_json::Value, path: &str, method: &str, status: &str| {
        let response = &description["paths"][path][method]["responses"][status];
        let response = dereference(description, response);
        dereference(
            description,
            &response["content"]["application/json"]["schema"],
        )
    };

    let created = post(
        "/sandboxes",
        serde_json::json!({ "templateID": "base", "timeout": 60, "secure": true }),
        KEY,
    )
    .await;
    assert_eq!(created.status, 201);
    let problems = violations(
        &schema_of(&control_plane, "/sandboxes", "post", "201"),
        &created.json(),
    );
    assert!(problems.is_empty(), "{problems:?}");
    let id = created.json()["sandboxID"].as_str().unwrap().to_owned();
    let token = created.json()["envdAccessToken"]
        .as_str()
        .unwrap()
        .to_owned();

    let got = support::raw_http::request(
        &fake.api_base(),
        "GET",
        &format!("/sandboxes/{id}"),
        &[("X-API-Key", KEY)],
        None,
    )
    .await;
    let problems = violations(
        &schema_of(&control_plane, "/sandboxes/{sandboxID}", "get", "200"),
        &got.json(),
    );
    assert!(problems.is_empty(), "{problems:?}");

    let refused = post(
        "/sandboxes",
        serde_json::json!({ "templateID": "base" }),
        "nope",
    )
    .await;
    assert_eq!(refused.status, 401);
    let problems = violations(
        &schema_of(&control_plane, "/sandboxes", "post", "401"),
        &refused.json(),
    );
    assert!(problems.is_empty(), "{problems:?}");

    let timeout = post(
        &format!("/sandboxes/{id}/timeout"),
        serde_json::json!({ "timeout": 90 }),
        KEY,
    )
    .await;
    assert_eq!(timeout.status, 204);

    let upload = support::raw_http::request(
        &fake.api_base(),
        "POST",
        &format!("/envd/{id}/files?path=hello.txt"),
        &[
            ("X-Access-Token", &token),
            ("Content-Type", "application/octet-stream"),
        ],
        Some(b"hi"),
    )
    .await;
    assert_eq!(upload.status, 200);
    let problems = violations(&schema_of(&envd, "/files", "post", "200"), &upload.json());
    assert!(problems.is_empty(), "{problems:?}");
    let missing = support::raw_http::request(
        &fake.api_base(),
        "GET",
        &format!("/envd/{id}/files?path=nothing.txt"),
        &[("X-Access-Token", &token)],
        None,
    )
    .await;
    assert_eq!(missing.status, 404);
    let problems = violations(&schema_of(&envd, "/files", "get", "404"), &missing.json());
    assert!(problems.is_empty(), "{problems:?}");

    let killed = support::raw_http::request(
        &fake.api_base(),
        "DELETE",
        &format!("/sandboxes/{id}"),
        &[("X-API-Key", KEY)],
        None,
    )
    .await;
    assert_eq!(killed.status, 204);
    let again = support::raw_http::request(
        &fake.api_base(),
        "DELETE",
        &format!("/sandboxes/{id}"),
        &[("X-API-Key", KEY)],
        None,
    )
    .await;
    assert_eq!(again.status, 404);
    let problems = violations(
        &schema_of(&control_plane, "/sandboxes/{sandboxID}", "delete", "404"),
        &again.json(),
    );
    assert!(problems.is_empty(), "{problems:?}");
}

#[tokio::test]
async fn each_network_mode_reaches_e2b_as_its_egress_settings() {
    use handoff::domain::{NetworkMode, NetworkPolicy};
    use handoff::sandbox::e2b::network_settings;

    let control_plane = e2b_description("openapi.yml");
    let request_schema = dereference(
        &control_plane,
        &control_plane["paths"]["/sandboxes"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"],
    );
    let network_schema = dereference(&control_plane, &request_schema["properties"]["network"]);
    assert!(
        network_schema["properties"]["allowOut"].is_object(),
        "E2B's description has the egress settings"
    );
    let listed = NetworkPolicy {
        mode: NetworkMode::Allowlist,
        allowed: vec![
            "api.anthropic.com:443".parse().unwrap(),
            "*.npmjs.org".parse().unwrap(),
        ],
    };
    // The key is set on the way to the provider by the sandbox's egress rule; with no
    // network there is nothing to set it on.
    let key_rule = serde_json::json!({
        "api.anthropic.com": [ { "transform": { "headers": { "x-api-key": "agent-secret" } } } ]
    });
    for (mode, expected, internet) in [
        (
            NetworkMode::Allowlist,
            serde_json::json!({ "allowOut": ["*.npmjs.org", "api.anthropic.com"], "denyOut": ["0.0.0.0/0"], "rules": key_rule }),
            None,
        ),
        (
            NetworkMode::None,
            serde_json::json!({ "denyOut": ["0.0.0.0/0"] }),
            Some(false),
        ),
        (
            NetworkMode::Open,
            serde_json::json!({ "denyOut": ["169.254.0.0/16"], "rules": key_rule }),
            None,
        ),
    ] {
        let policy = NetworkPolicy {
            mode,
            ..listed.clone()
        };
        let problems = violations(
            &network_schema,
            &network_settings(&policy, Some(&agent_key())),
        );
        assert!(problems.is_empty(), "{mode}: {problems:?}");

        let fake = FakeE2b::start(KEY).await;
        let dir = workspace("exit 0\n");
        let (control, _events, _cancel) = control();
        let end = sandbox(&fake, KEY, Duration::from_secs(10))
            .with_network(policy)
            .run(&job(&dir, Duration::from_secs(30)), control)
            .await
            .unwrap();
        assert_eq!(end, SandboxEnd::Exited(0));
        let created = &fake.sandboxes()[0];
        assert_eq!(created.network, expected, "{mode}");
        assert_eq!(created.allow_internet_access, internet, "{mode}");
    }
}

#[tokio::test]
async fn sandboxes_are_secured_so_that_their_id_alone_reaches_nothing() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace("echo done > \"$HANDOFF_WORKSPACE/out/result.txt\"\nexit 0\n");
    let (control, _events, _cancel) = control();
    let end = sandbox(&fake, KEY, Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap();
    // The fake's envd refuses a secured sandbox's calls without its token: the run
    // went through, so each of its calls carried it.
    assert_eq!(end, SandboxEnd::Exited(0));
    assert!(fake.sandboxes()[0].secure, "asked for as secured");
    assert!(
        fake.requests()
            .iter()
            .filter(|request| request.path.starts_with("/envd/"))
            .all(|request| request.status != 401),
        "{:?}",
        fake.requests()
    );

    // Someone who learns a live sandbox's id gets nothing from its envd.
    let created = support::raw_http::request(
        &fake.api_base(),
        "POST",
        "/sandboxes",
        &[("X-API-Key", KEY), ("Content-Type", "application/json")],
        Some(br#"{"templateID":"base","timeout":60,"secure":true}"#),
    )
    .await;
    let id = created.json()["sandboxID"].as_str().unwrap().to_owned();
    let token = created.json()["envdAccessToken"]
        .as_str()
        .unwrap()
        .to_owned();
    for (header, expected) in [
        (None, 401),
        (Some("envd-token-guess"), 401),
        (Some(token.as_str()), 200),
    ] {
        let mut headers = vec![("Content-Type", "application/octet-stream")];
        if let Some(value) = header {
            headers.push(("X-Access-Token", value));
        }
        let answer = support::raw_http::request(
            &fake.api_base(),
            "POST",
            &format!("/envd/{id}/files?path=/home/user/probe.txt"),
            &headers,
            Some(b"probe"),
        )
        .await;
        assert_eq!(answer.status, expected, "token {header:?}");
    }
}

#[tokio::test]
async fn a_sandbox_that_comes_without_an_access_token_is_removed_unused() {
    let fake = FakeE2b::start(KEY).await;
    fake.ignore_secure();
    let dir = workspace("echo ran > \"$HANDOFF_WORKSPACE/out/ran.txt\"\nexit 0\n");
    let (control, _events, _cancel) = control();
    let refused = sandbox(&fake, KEY, Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("without an access token"),
        "{refused}"
    );
    assert!(
        fake.live_sandboxes().is_empty(),
        "the unsecured sandbox was killed"
    );
    assert!(
        !dir.path().join("out/ran.txt").exists(),
        "nothing ran in it"
    );
    assert!(
        !fake
            .requests()
            .iter()
            .any(|request| request.path.contains("process.Process")),
        "no process was started in it"
    );
}

#[tokio::test]
async fn the_key_rule_names_the_providers_host_alone_and_what_e2b_does_with_it() {
    let fake = FakeE2b::start(KEY).await;
    let dir = workspace("exit 0\n");
    let (control, _events, _cancel) = control();
    let listed = handoff::domain::NetworkPolicy {
        mode: handoff::domain::NetworkMode::Allowlist,
        allowed: vec![
            "api.anthropic.com:443".parse().unwrap(),
            "*.npmjs.org".parse().unwrap(),
        ],
    };
    sandbox(&fake, KEY, Duration::from_secs(10))
        .with_network(listed)
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap();
    let created = fake.sandboxes()[0].clone();
    let rules = created.network["rules"].as_object().unwrap();
    assert_eq!(
        rules.keys().collect::<Vec<_>>(),
        vec!["api.anthropic.com"],
        "one rule, on the provider's exact host: never a wildcard"
    );
    let key = vec![("x-api-key".to_owned(), "agent-secret".to_owned())];
    assert_eq!(
        fake.egress_headers(&created.id, "https", "api.anthropic.com"),
        key
    );
    for elsewhere in [
        "evil.example",
        "api.anthropic.com.evil.example",
        "registry.npmjs.org",
    ] {
        assert!(
            fake.egress_headers(&created.id, "https", elsewhere)
                .is_empty(),
            "{elsewhere}"
        );
    }
    // What E2B's description says, and Handoff cannot change: the rule applies to
    // plain-HTTP requests to that host too (ARCHITECTURE says where the key travels).
    assert_eq!(
        fake.egress_headers(&created.id, "http", "api.anthropic.com"),
        key
    );
}

#[tokio::test]
async fn an_answer_e2b_refuses_with_is_cut_and_scrubbed_of_the_key() {
    let fake = FakeE2b::start(KEY).await;
    // A service that echoes what it got: the key, and a great deal of it.
    fake.refuse_next_creation(&format!(
        "{{\"message\":\"bad request from key {KEY}\",\"echo\":\"{}\"}}",
        "x".repeat(50_000)
    ));
    let dir = workspace("exit 0\n");
    let (control, _events, _cancel) = control();
    let refused = sandbox(&fake, KEY, Duration::from_secs(10))
        .run(&job(&dir, Duration::from_secs(30)), control)
        .await
        .unwrap_err()
        .to_string();
    assert!(!refused.contains(KEY), "{refused}");
    assert!(refused.contains("[cut]"), "{refused}");
    assert!(refused.len() < 2_500, "{} characters", refused.len());
}
