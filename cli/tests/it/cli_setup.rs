//! `handoff doctor` and `handoff agent-image build` as a person uses them: separate
//! processes, the token and keys in a real Secret Service, the fake GitHub, the real
//! Docker engine, and the image recipe built from the local Debian base with the scripted
//! agent standing in for the real one.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::docker_images::{
    unique_image, write_stand_in, EngineImagesHold, ImageRemovedOnDrop, LOCAL_BASE,
};
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const OTHERS_REPO: &str = "someone-else/their-app";

/// Signed in, with [`REPO`] connected to run on Docker with the claude preset, and a
/// repository the owner may not push to connected too.
async fn set_up(fake: &FakeGithub, cli: &Cli<'_>) {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.add_user("someone-else");
    fake.create_repo(OTHERS_REPO, "main");
    cli.connect_scripted_repo(fake, "docker", &[]).await;
    ok_text(&cli.run(&["repo", "set", REPO, "--agent", "claude"]).await);
    ok_text(
        &cli.run(&[
            "repo",
            "add",
            OTHERS_REPO,
            "--backend",
            "local",
            "--confirm-no-isolation",
        ])
        .await,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_says_what_is_missing_and_how_to_fix_it() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli).await;
    let image = unique_image("doctor");
    ok_text(
        &cli.run(&["config", "set", "docker.default_image", &image])
            .await,
    );

    let doctor = cli.run(&["doctor"]).await;

    let printed = text(&doctor);
    assert_eq!(
        doctor.status.code(),
        Some(1),
        "a failing check exits 1: {printed}"
    );
    for expected in [
        "ok    OS keyring: answers",
        "ok    GitHub: signed in as @octocat",
        &format!("ok    {REPO}: may push, open PRs and file issues"),
        &format!("FAIL  {OTHERS_REPO}: the signed-in account may not push to it"),
        "ok    Docker engine: Docker ",
        &match std::env::var("DOCKER_HOST").ok().filter(|host| !host.is_empty()) {
            Some(host) => format!("answers at {host} (from DOCKER_HOST)"),
            None => "answers at unix:///var/run/docker.sock (Docker's socket)".to_owned(),
        },
        &format!(
            "FAIL  Image {image}: not on this Docker engine. Build the claude agent image ({image}). (`handoff agent-image build --preset claude`)"
        ),
        &format!(
            "FAIL  {REPO}'s agent (claude): no anthropic API key is stored. Add an API key for anthropic. (`handoff secrets set anthropic`)"
        ),
        "for the repository cache",
    ] {
        assert!(printed.contains(expected), "missing {expected:?} in:\n{printed}");
    }

    // The same, for scripts.
    let json = cli.run(&["doctor", "--json"]).await;
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let line = report["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|line| line["id"] == format!("agent-key:{REPO}"))
        .unwrap()
        .clone();
    assert_eq!(line["status"], "failure");
    assert_eq!(line["fix"]["kind"], "add_key");
    assert_eq!(line["fix"]["provider"], "anthropic");

    // A run that needs a failing check is refused with the same line.
    let added = ok_text(
        &cli.run(&["feedback", "add", "--repo", REPO, "--json", "Button"])
            .await,
    );
    let id = serde_json::from_str::<serde_json::Value>(&added).unwrap()["id"].to_string();
    let refused = cli.run(&["run", &id]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains(&format!(
            "{REPO}'s agent (claude): no anthropic API key is stored. Add an API key for anthropic."
        )),
        "{}",
        text(&refused)
    );
    assert!(text(&refused).contains("hint: `handoff secrets set anthropic`"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_built_from_the_recipe_runs_the_agent_as_its_own_user() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli).await;
    let image = unique_image("recipe");
    let _removed = ImageRemovedOnDrop(image.clone());
    ok_text(
        &cli.run(&["config", "set", "docker.default_image", &image])
            .await,
    );
    ok_text(
        &cli.run_with_input(&["secrets", "set", "anthropic"], "sk-ant-test-key-0000")
            .await,
    );
    let scratch = tempfile::tempdir().unwrap();
    let stand_in = write_stand_in(scratch.path());
    let building = EngineImagesHold::building();

    let built = cli
        .run(&[
            "agent-image",
            "build",
            "--preset",
            "claude",
            "--base",
            LOCAL_BASE,
            "--agent-from",
            stand_in.to_str().unwrap(),
        ])
        .await;

    drop(building);
    let printed = ok_text(&built);
    assert!(
        printed.contains("install-agent: installing the stand-in as claude"),
        "the build's output streamed: {printed}"
    );
    assert!(
        printed.contains(&format!("built {image} (claude)")),
        "{printed}"
    );
    let inspect = std::process::Command::new("docker")
        .args([
            "image",
            "inspect",
            "--format",
            "{{json .Config.Labels}} {{.Config.User}}",
            &image,
        ])
        .output()
        .unwrap();
    let inspected = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        inspected.contains(&format!(
            "\"dev.handoff.agent-recipe\":\"{}\"",
            handoff::agent_image::recipe_hash()
        )),
        "{inspected}"
    );
    assert!(
        inspected.contains("\"dev.handoff.agent-preset\":\"claude\""),
        "{inspected}"
    );
    assert!(
        inspected.trim_end().ends_with(" agent"),
        "a non-root user: {inspected}"
    );

    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains(&format!(
            "ok    Image {image}: built from this version's recipe"
        )),
        "{doctor}"
    );
    assert!(
        doctor.contains(&format!(
            "ok    {REPO}'s agent (claude): the anthropic key is set"
        )),
        "{doctor}"
    );
    let listed = ok_text(&cli.run(&["agent-image", "list"]).await);
    assert!(listed.contains(&format!("claude    {image}")), "{listed}");
    assert!(listed.contains("current"), "{listed}");

    // A real run in that image: the claude preset's command is the stand-in, run as the
    // image's own user.
    let added = ok_text(
        &cli.run(&[
            "feedback",
            "add",
            "--repo",
            REPO,
            "--json",
            "Button\n@@whoami\n@@write src/button.css height: 44px",
        ])
        .await,
    );
    let id = serde_json::from_str::<serde_json::Value>(&added).unwrap()["id"].to_string();
    let run = ok_text(&cli.run(&["run", &id]).await);
    assert!(run.contains("scripted agent: uid 10001"), "{run}");
    assert!(run.contains("PR #"), "{run}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "src/button.css")
            .as_deref(),
        Some("height: 44px\n")
    );
    cli.remove_egress_gates().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_asks_e2b_whether_it_accepts_the_key() {
    let fake = FakeGithub::start().await;
    let e2b = support::fake_e2b::FakeE2b::start("e2b_key_for_tests_42").await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "e2b", &[]).await;
    ok_text(
        &cli.run(&["config", "set", "e2b.api_base", &e2b.api_base()])
            .await,
    );

    let without = text(&cli.run(&["doctor"]).await);
    assert!(
        without.contains(&format!(
            "FAIL  E2B: no API key is stored for {}. Add the E2B API key. (`handoff secrets set e2b`)",
            e2b.api_base().trim_start_matches("http://")
        )),
        "{without}"
    );

    ok_text(
        &cli.run_with_input(&["secrets", "set", "e2b"], "not_the_key")
            .await,
    );
    let refused = text(&cli.run(&["doctor"]).await);
    assert!(
        refused.contains("FAIL  E2B: the e2b sandbox is not available: E2B refuses the key (401"),
        "{refused}"
    );

    ok_text(
        &cli.run_with_input(&["secrets", "set", "e2b"], "e2b_key_for_tests_42")
            .await,
    );
    let accepted = cli.run(&["doctor"]).await;
    let printed = text(&accepted);
    assert!(printed.contains("accepts the key"), "{printed}");
    assert_eq!(
        accepted.status.code(),
        Some(0),
        "every check passes: {printed}"
    );
    assert!(
        e2b.sandboxes().is_empty(),
        "checking the key starts no sandbox"
    );
}

/// An app started from the macOS Dock sees no `DOCKER_HOST`: the engine is found as the
/// `docker` command finds it, through the current Docker context.
#[tokio::test(flavor = "multi_thread")]
async fn the_engine_is_found_through_the_current_docker_context() {
    use sha2::Digest as _;
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    set_up(&fake, &cli).await;
    // `docker context create elsewhere --docker host=unix:///var/run/docker.sock` and
    // `docker context use elsewhere`, as the docker command writes them.
    let meta = home.path().join(".docker/contexts/meta").join(
        sha2::Sha256::digest(b"elsewhere")
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>(),
    );
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(
        meta.join("meta.json"),
        r#"{"Name":"elsewhere","Metadata":{},"Endpoints":{"docker":{"Host":"unix:///var/run/docker.sock","SkipTLSVerify":false}}}"#,
    )
    .unwrap();
    std::fs::write(
        home.path().join(".docker/config.json"),
        r#"{"auths":{},"currentContext":"elsewhere"}"#,
    )
    .unwrap();
    let in_that_home = [("HOME", home.path().to_str().unwrap()), ("DOCKER_HOST", "")];

    let doctor = text(&cli.run_with(&["doctor"], None, &in_that_home).await);

    assert!(
        doctor.contains("ok    Docker engine: Docker ")
            && doctor.contains(
                "answers at unix:///var/run/docker.sock (the current Docker context \"elsewhere\")"
            ),
        "{doctor}"
    );
    // A context whose engine does not answer says where it looked and how to choose.
    std::fs::write(
        meta.join("meta.json"),
        r#"{"Name":"elsewhere","Metadata":{},"Endpoints":{"docker":{"Host":"unix:///nowhere/docker.sock","SkipTLSVerify":false}}}"#,
    )
    .unwrap();
    let doctor = text(&cli.run_with(&["doctor"], None, &in_that_home).await);
    assert!(
        doctor.contains("FAIL  Docker engine: cannot connect to unix:///nowhere/docker.sock (the current Docker context \"elsewhere\")")
            && doctor.contains("docker context use"),
        "{doctor}"
    );
}
