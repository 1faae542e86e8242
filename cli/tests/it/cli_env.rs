//! `handoff env show` as a person uses it: what the repository's base branch says the
//! agent's environment is made of, read from GitHub, with the files its image is keyed
//! on; a changed lockfile changes the key and a changed source file does not; a dev
//! container that cannot be built is refused, saying what and where.

use handoff_test_support as support;

use support::cli_process::{ok_stdout, text, Cli};
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const DEV_CONTAINER: &str = r#"{
  // The project's own toolchain, from its Dockerfile.
  "build": { "dockerfile": "Dockerfile", "context": "..", },
  "containerEnv": { "DATABASE_URL": "postgres://db/test" },
  "initializeCommand": "docker login",
  "postCreateCommand": "make deps",
}"#;

/// The key line of `env show`'s JSON.
fn key_of(shown: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(shown).expect("JSON");
    json["key"].as_str().expect("a key").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_base_branch_names_the_environment_and_only_what_it_is_made_of_changes_its_key() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(
        REPO,
        "main",
        &[
            (".handoff/agent.sh", SCRIPTED_AGENT),
            (".devcontainer/devcontainer.json", DEV_CONTAINER),
            (
                ".devcontainer/Dockerfile",
                "FROM debian:12\nRUN apt-get install -y make\n",
            ),
            ("Cargo.lock", "version = 3\n"),
            ("src/main.rs", "fn main() {}\n"),
        ],
    );
    cli.connect_scripted_repo(&fake, "local", &[]).await;

    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    for line in [
        "found:     .devcontainer/devcontainer.json",
        "starts as: .devcontainer/Dockerfile, built in .",
        "setup:     postCreateCommand: make deps",
        "variables: DATABASE_URL",
        "note:      initializeCommand runs on the machine that starts the container: Handoff never runs it",
        "keyed on:  .devcontainer/Dockerfile",
        "keyed on:  .devcontainer/devcontainer.json",
        "keyed on:  Cargo.lock",
    ] {
        assert!(shown.contains(line), "{line:?} is not in:\n{shown}");
    }
    assert!(!shown.contains("src/main.rs"), "{shown}");

    let first = key_of(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await));
    fake.push_commit(
        REPO,
        "main",
        "Work",
        &[("src/main.rs", "fn main() { run() }\n")],
    );
    let after_source = key_of(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await));
    assert_eq!(
        after_source, first,
        "a source file is not what the image is made of"
    );
    fake.push_commit(
        REPO,
        "main",
        "Dependencies",
        &[("Cargo.lock", "version = 4\n")],
    );
    let after_lockfile = key_of(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await));
    assert_ne!(after_lockfile, first, "a changed lockfile changes the key");

    // A file the owner names counts too, from then on.
    fake.push_commit(
        REPO,
        "main",
        "Tools",
        &[("tools/versions.txt", "node 20\n")],
    );
    let refused = cli
        .run(&["repo", "set", REPO, "--environment-key-files", "../outside"])
        .await;
    assert!(
        text(&refused).contains("--environment-key-files: \"../outside\" is not a file's path"),
        "{}",
        text(&refused)
    );
    ok_stdout(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--environment-key-files",
            "./tools/versions.txt",
        ])
        .await,
    );
    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    assert!(shown.contains("keyed on:  tools/versions.txt"), "{shown}");
    let named = key_of(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await));
    fake.push_commit(
        REPO,
        "main",
        "Newer tools",
        &[("tools/versions.txt", "node 22\n")],
    );
    let after_named = key_of(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await));
    assert_ne!(after_named, named, "a file the owner names changes the key");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dev_container_that_cannot_be_built_is_refused_saying_what_and_where() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(
        REPO,
        "main",
        &[
            (".handoff/agent.sh", SCRIPTED_AGENT),
            (
                ".devcontainer.json",
                "{ \"build\": { \"dockerfile\": \"Dockerfile\" } }",
            ),
        ],
    );
    cli.connect_scripted_repo(&fake, "local", &[]).await;
    let missing = cli.run(&["env", "show", REPO]).await;
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains(
            "octocat/hello-world's environment cannot be built: .devcontainer.json builds from Dockerfile, which is not on the base branch"
        ),
        "{}",
        text(&missing)
    );

    fake.push_commit(
        REPO,
        "main",
        "Broken",
        &[(
            ".devcontainer.json",
            "{\n  \"image\": \"debian:12\"\n  \"features\": {}\n}",
        )],
    );
    let broken = cli.run(&["env", "show", REPO]).await;
    assert!(!broken.status.success());
    assert!(
        text(&broken).contains(".devcontainer.json is not JSON with comments: line 3, column 3"),
        "{}",
        text(&broken)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_only_setting_is_shown_marked_and_a_credential_can_never_be_one() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;

    let set = cli
        .run(&[
            "env",
            "set",
            REPO,
            "DATABASE_URL=postgres://postgres:test@db/app",
        ])
        .await;
    assert!(ok_stdout(&set).contains("DATABASE_URL is set for its tests (test-only)"));
    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    assert!(
        shown.contains("test-only: DATABASE_URL=postgres://postgres:test@db/app"),
        "{shown}"
    );

    // The GitHub token never becomes one: not by its variable's name, nor as a value
    // under another name; nothing is kept of either.
    let by_name = cli
        .run(&["env", "set", REPO, "GITHUB_TOKEN=anything"])
        .await;
    assert!(!by_name.status.success());
    assert!(
        text(&by_name).contains("GITHUB_TOKEN carries a credential"),
        "{}",
        text(&by_name)
    );
    let token = fake.owner_token();
    let by_value = cli
        .run(&[
            "env",
            "set",
            REPO,
            &format!("API_URL=https://x:{token}@api.example/"),
        ])
        .await;
    assert!(!by_value.status.success());
    assert!(
        text(&by_value).contains("the value of API_URL holds one of the secrets Handoff keeps"),
        "{}",
        text(&by_value)
    );
    assert!(
        !text(&by_value).contains(token),
        "the refusal never repeats the secret"
    );
    let proxy = cli
        .run(&["env", "set", REPO, "HTTPS_PROXY=http://elsewhere"])
        .await;
    assert!(
        text(&proxy).contains("HTTPS_PROXY is set by Handoff"),
        "{}",
        text(&proxy)
    );
    let malformed = cli.run(&["env", "set", REPO, "no value"]).await;
    assert!(!malformed.status.success());

    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(&cli.run(&["env", "show", REPO, "--json"]).await)).unwrap();
    assert_eq!(
        json["testSettings"],
        serde_json::json!([{ "name": "DATABASE_URL", "value": "postgres://postgres:test@db/app" }])
    );

    ok_stdout(&cli.run(&["env", "unset", REPO, "DATABASE_URL"]).await);
    let gone = cli.run(&["env", "unset", REPO, "DATABASE_URL"]).await;
    assert!(
        text(&gone).contains("has no test-only setting DATABASE_URL"),
        "{}",
        text(&gone)
    );
    assert!(!ok_stdout(&cli.run(&["env", "show", REPO]).await).contains("test-only:"));
}
