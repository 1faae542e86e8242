//! A repository's environment as an E2B template, against the fake E2B speaking E2B's
//! template build API: the recipe's steps and files go up (the files without the key,
//! and only once), the build is followed until ready, a run starts from it, a failed
//! step is named as the recipe names it, the older templates go, and every request and
//! answer follows E2B's description.

use handoff_test_support as support;

use std::time::Duration;

use handoff::sandbox::e2b::template_recipe::template_recipe;
use handoff::sandbox::e2b::{E2bSandbox, E2bSettings};
use handoff::sandbox::environment_image::{
    EnvironmentBase, EnvironmentBuild, EnvironmentBuildError, SetupStep,
};
use handoff::sandbox::{JobControl, ResourceLimits, SandboxEnd, SandboxError, SandboxJob};
use handoff::secrets::Secret;
use serde_json::json;
use support::fake_e2b::FakeE2b;
use support::openapi_schema::{dereference, e2b_description, violations_in};

const KEY: &str = "e2b_test_key_1234567890";

fn sandbox(fake: &FakeE2b) -> E2bSandbox {
    E2bSandbox::new(
        E2bSettings {
            api_base: fake.api_base(),
            envd_url_template: fake.envd_url_template(),
            template: "base".to_owned(),
            keepalive_timeout: Duration::from_secs(10),
        },
        Some(Secret::new(KEY)),
    )
}

fn archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut archive = tar::Builder::new(Vec::new());
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, path, text.as_bytes())
            .unwrap();
    }
    archive.into_inner().unwrap()
}

/// A dev container on `node:22` whose setup runs `npm ci`, with key `key`.
fn node_environment(key: &str) -> EnvironmentBuild {
    EnvironmentBuild {
        repository: "octo/app".to_owned(),
        installation: "install-1".to_owned(),
        key: key.to_owned(),
        base: EnvironmentBase::Image("node:22".to_owned()),
        preset: "claude".to_owned(),
        stand_in: None,
        variables: [("NODE_ENV".to_owned(), "test".to_owned())].into(),
        setup_steps: vec![SetupStep {
            name: "postCreateCommand \"deps\" (npm ci)".to_owned(),
            shell_line: "npm ci".to_owned(),
        }],
        features: Default::default(),
        working_copy: archive(&[("package.json", "{}"), ("package-lock.json", "{}")]),
    }
}

fn schema(description: &serde_json::Value, name: &str) -> serde_json::Value {
    dereference(
        description,
        &json!({ "$ref": format!("#/components/schemas/{name}") }),
    )
}

#[tokio::test]
async fn an_environment_is_built_as_a_template_and_a_run_starts_from_it() {
    let fake = FakeE2b::start(KEY).await;
    let e2b = sandbox(&fake);
    let recipe = template_recipe(&node_environment("aaaaaaaaaaaaaaaa1111"), &[], None).unwrap();
    assert!(
        !e2b.template_is_ready(&recipe.name).await.unwrap(),
        "nothing is built yet"
    );

    let mut lines = Vec::new();
    e2b.build_template(&recipe, &mut |line: &str| lines.push(line.to_owned()))
        .await
        .unwrap();

    assert!(e2b.template_is_ready(&recipe.name).await.unwrap());
    let templates = fake.templates();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].name, "handoff-env-octo-app-aaaaaaaaaaaaaaaa");
    let start = templates[0].builds[0].start.clone().expect("started");
    assert_eq!(start["fromImage"], "node:22");
    let description = e2b_description("openapi.yml");
    let problems = violations_in(
        &description,
        &schema(&description, "TemplateBuildStartV2"),
        &start,
    );
    assert!(problems.is_empty(), "{problems:?}");
    let kinds: Vec<&str> = start["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"USER"));
    assert!(
        kinds.contains(&"ENV") && kinds.contains(&"WORKDIR"),
        "{kinds:?}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.contains('[') && line.contains("RUN /bin/sh -c 'npm ci'")),
        "E2B's log came through: {lines:?}"
    );
    let uploads = |fake: &FakeE2b| {
        fake.requests()
            .iter()
            .filter(|request| request.method == "PUT")
            .count()
    };
    assert_eq!(uploads(&fake), 2, "Handoff's scripts and the base branch");
    assert_eq!(
        fake.uploads_with_a_key(),
        0,
        "the E2B key stays with E2B's API"
    );

    // Built again (forced): E2B has the files already.
    e2b.build_template(&recipe, &mut |_: &str| {})
        .await
        .unwrap();
    assert_eq!(uploads(&fake), 2, "nothing uploaded twice");

    // A run starts from the template; one from a template E2B does not have is refused.
    let dir = tempfile::tempdir().unwrap();
    for folder in ["repo", "handoff", "out"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
    }
    std::fs::write(dir.path().join("handoff/job.sh"), "exit 0\n").unwrap();
    let job = SandboxJob {
        run_id: handoff::domain::RunId(3),
        workspace: dir.path().to_owned(),
        kept_copy: None,
        agent_key: None,
        timeout: Duration::from_secs(30),
        limits: ResourceLimits::default(),
    };
    let control = || {
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let (_, cancel) = tokio::sync::watch::channel(false);
        JobControl { events, cancel }
    };
    let end = e2b
        .clone()
        .with_template(&recipe.name)
        .run(&job, control())
        .await
        .unwrap();
    assert_eq!(end, SandboxEnd::Exited(0));
    assert_eq!(fake.sandboxes()[0].template, recipe.name);
    let refused = e2b
        .with_template("handoff-env-octo-app-none")
        .run(&job, control())
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            SandboxError::Failed { .. } | SandboxError::Unavailable { .. }
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("not found"), "{refused}");
}

#[tokio::test]
async fn a_failed_step_is_named_as_the_recipe_names_it_and_the_template_is_not_ready() {
    let fake = FakeE2b::start(KEY).await;
    let e2b = sandbox(&fake);
    fake.fail_template_steps_holding("npm ci");
    let recipe = template_recipe(&node_environment("bbbbbbbbbbbbbbbb2222"), &[], None).unwrap();

    let failed = e2b
        .build_template(&recipe, &mut |_: &str| {})
        .await
        .unwrap_err();

    match failed {
        EnvironmentBuildError::Step { step, detail } => {
            assert_eq!(step, "postCreateCommand \"deps\" (npm ci)");
            assert!(detail.contains("exited with code 1"), "{detail}");
        }
        other => panic!("not a step: {other}"),
    }
    assert!(!e2b.template_is_ready(&recipe.name).await.unwrap());
}

#[tokio::test]
async fn the_repositorys_older_templates_go_once_a_new_one_is_ready() {
    let fake = FakeE2b::start(KEY).await;
    let e2b = sandbox(&fake);
    let old = template_recipe(&node_environment("cccccccccccccccc3333"), &[], None).unwrap();
    let new = template_recipe(&node_environment("dddddddddddddddd4444"), &[], None).unwrap();
    let mut other_repository = node_environment("cccccccccccccccc3333");
    other_repository.repository = "octo/app-two".to_owned();
    let other = template_recipe(&other_repository, &[], None).unwrap();
    for recipe in [&old, &new, &other] {
        e2b.build_template(recipe, &mut |_: &str| {}).await.unwrap();
    }

    let removed = e2b.prune_templates("octo/app", &new.name).await.unwrap();

    assert_eq!(removed, vec![old.name.clone()]);
    let mut left: Vec<String> = fake.templates().into_iter().map(|t| t.name).collect();
    left.sort();
    assert_eq!(left, vec![new.name.clone(), other.name.clone()]);
}

#[tokio::test]
async fn the_fakes_template_answers_follow_e2bs_description_and_refuse_what_e2b_refuses() {
    let description = e2b_description("openapi.yml");
    let fake = FakeE2b::start(KEY).await;
    let call = |method: &'static str, path: String, body: Option<serde_json::Value>| {
        let base = fake.api_base();
        async move {
            let bytes = body.map(|body| body.to_string().into_bytes());
            support::raw_http::request(
                &base,
                method,
                &path,
                &[("X-API-Key", KEY), ("Content-Type", "application/json")],
                bytes.as_deref(),
            )
            .await
        }
    };
    let answer_schema = |path: &str, method: &str, status: &str| {
        let response = &description["paths"][path][method]["responses"][status];
        let response = dereference(&description, response);
        dereference(
            &description,
            &response["content"]["application/json"]["schema"],
        )
    };
    let conforms = |schema: serde_json::Value, value: &serde_json::Value| {
        let problems = violations_in(&description, &schema, value);
        assert!(problems.is_empty(), "{problems:?} in {value}");
    };

    let asked = call(
        "POST",
        "/v3/templates".into(),
        Some(json!({ "name": "my-env" })),
    )
    .await;
    assert_eq!(asked.status, 202);
    conforms(answer_schema("/v3/templates", "post", "202"), &asked.json());
    let id = asked.json()["templateID"].as_str().unwrap().to_owned();
    let build = asked.json()["buildID"].as_str().unwrap().to_owned();

    let files = call("GET", format!("/templates/{id}/files/abc123"), None).await;
    assert_eq!(files.status, 201);
    conforms(
        answer_schema("/templates/{templateID}/files/{hash}", "get", "201"),
        &files.json(),
    );
    assert_eq!(files.json()["present"], false);

    for refused in [
        json!({ "steps": [] }),
        json!({ "fromImage": "debian", "fromTemplate": "base", "steps": [] }),
        json!({ "fromImage": "debian", "steps": [{ "type": "EXPOSE", "args": ["80"] }] }),
    ] {
        let answer = call(
            "POST",
            format!("/v2/templates/{id}/builds/{build}"),
            Some(refused.clone()),
        )
        .await;
        assert_eq!(answer.status, 400, "{refused}");
    }
    // A copy whose files never went up fails the build at that step.
    let started = call(
        "POST",
        format!("/v2/templates/{id}/builds/{build}"),
        Some(json!({ "fromImage": "debian", "steps": [
            { "type": "RUN", "args": ["true"] },
            { "type": "COPY", "args": ["a", "/a", "", ""], "filesHash": "abc123" },
        ] })),
    )
    .await;
    assert_eq!(started.status, 202);
    let again = call(
        "POST",
        format!("/v2/templates/{id}/builds/{build}"),
        Some(json!({ "fromImage": "debian", "steps": [] })),
    )
    .await;
    assert_eq!(again.status, 400, "a build starts once");
    let status_path = format!("/templates/{id}/builds/{build}/status");
    let building = call("GET", status_path.clone(), None).await;
    conforms(
        answer_schema(
            "/templates/{templateID}/builds/{buildID}/status",
            "get",
            "200",
        ),
        &building.json(),
    );
    assert_eq!(building.json()["status"], "building");
    let over = call("GET", format!("{status_path}?logsOffset=3"), None).await;
    conforms(
        answer_schema(
            "/templates/{templateID}/builds/{buildID}/status",
            "get",
            "200",
        ),
        &over.json(),
    );
    assert_eq!(over.json()["status"], "error");
    assert_eq!(over.json()["reason"]["step"], "2");

    let known = call("GET", "/templates/aliases/my-env".into(), None).await;
    conforms(
        answer_schema("/templates/aliases/{alias}", "get", "200"),
        &known.json(),
    );
    let unknown = call("GET", "/templates/aliases/nothing".into(), None).await;
    assert_eq!(unknown.status, 404);
    let with_builds = call("GET", format!("/templates/{id}"), None).await;
    conforms(
        answer_schema("/templates/{templateID}", "get", "200"),
        &with_builds.json(),
    );
    let listed = call("GET", "/v2/templates".into(), None).await;
    conforms(answer_schema("/v2/templates", "get", "200"), &listed.json());
    let bad_name = call(
        "POST",
        "/v3/templates".into(),
        Some(json!({ "name": "My Env" })),
    )
    .await;
    assert_eq!(bad_name.status, 400);
    let deleted = call("DELETE", format!("/templates/{id}"), None).await;
    assert_eq!(deleted.status, 204);
    let no_key =
        support::raw_http::request(&fake.api_base(), "GET", "/v2/templates", &[], None).await;
    assert_eq!(no_key.status, 401);
}
