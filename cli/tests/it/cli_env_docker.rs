//! `handoff env build` and `handoff env logs` on this machine's Docker engine, as a
//! person uses them: the first build makes the image and prints its steps as they come,
//! the second builds nothing, `env show` says where the image stands and `env logs`
//! prints the whole last build; a setup command that fails is named, with its log kept,
//! and Check setup (`handoff doctor`) names the environment with the command that builds
//! it again; a build whose runs' image (its egress gate's) is missing names the image.

use handoff_test_support as support;

use handoff::Store;
use support::cli_process::{ok_stdout, text, Cli};
use support::docker_images::{unique_word, EnvironmentImagesRemovedOnDrop, LOCAL_BASE};
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

#[tokio::test(flavor = "multi_thread")]
async fn env_build_builds_once_and_show_and_logs_say_how_it_went() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let word = unique_word();
    fake.create_repo_with_files(
        REPO,
        "main",
        &[
            (".handoff/agent.sh", SCRIPTED_AGENT),
            (
                ".devcontainer.json",
                &format!("{{ \"image\": \"{LOCAL_BASE}\", \"postCreateCommand\": \"echo prepared {word}\" }}"),
            ),
        ],
    );
    // Its runs' image, from which its egress gate (the build's way out) runs.
    cli.connect_scripted_repo(&fake, "docker", &["--docker-image", LOCAL_BASE])
        .await;
    let installation = Store::open_in(dir.path())
        .await
        .unwrap()
        .settings()
        .installation_id()
        .await
        .unwrap();
    let _images = EnvironmentImagesRemovedOnDrop(installation);

    let first = cli.run(&["env", "build", REPO]).await;
    let said = ok_stdout(&first);
    assert!(said.contains(" built ("), "{}", text(&first));
    assert!(
        text(&first).contains("Step 1/"),
        "the build's steps come as they go: {}",
        text(&first)
    );
    let again = ok_stdout(&cli.run(&["env", "build", REPO]).await);
    assert!(again.contains("is ready: nothing to build"), "{again}");

    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    assert!(shown.contains("image:     handoff-env-"), "{shown}");
    assert!(shown.contains("(ready)"), "{shown}");
    assert!(shown.contains("last build: 1 ready"), "{shown}");
    let log = ok_stdout(&cli.run(&["env", "logs", REPO]).await);
    assert!(log.contains(&format!("prepared {word}")), "{log}");

    fake.push_commit(
        REPO,
        "main",
        "A setup that fails",
        &[(
            ".devcontainer.json",
            &format!("{{ \"image\": \"{LOCAL_BASE}\", \"postCreateCommand\": \"echo failing {word}; exit 9\" }}"),
        )],
    );
    let failed = cli.run(&["env", "build", REPO]).await;
    assert!(!failed.status.success());
    assert!(
        text(&failed).contains(&format!(
            "postCreateCommand (echo failing {word}; exit 9) failed"
        )),
        "{}",
        text(&failed)
    );
    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    assert!(shown.contains("(failed)"), "{shown}");
    assert!(shown.contains("failed at: postCreateCommand"), "{shown}");
    let log = ok_stdout(&cli.run(&["env", "logs", REPO]).await);
    assert!(log.contains(&format!("failing {word}")), "{log}");

    // Check setup names it, with the command that builds it again.
    let doctor = text(&cli.run(&["doctor"]).await);
    let line = doctor
        .lines()
        .find(|line| line.contains("octocat/hello-world's environment"))
        .unwrap_or_else(|| panic!("no environment line: {doctor}"));
    assert!(
        line.contains("its last build failed at postCreateCommand"),
        "{line}"
    );
    assert!(
        doctor.contains("handoff env build octocat/hello-world"),
        "{doctor}"
    );

    // The build's egress gate runs from the repository's runs' image: a missing one is
    // named, as Check setup names it, before anything is built.
    let missing = format!("handoff-test-missing-{word}:1");
    ok_stdout(
        &cli.run(&["repo", "set", REPO, "--docker-image", &missing])
            .await,
    );
    let refused = cli.run(&["env", "build", REPO]).await;
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains(&format!("Image {missing}")),
        "{}",
        text(&refused)
    );
    assert!(!text(&refused).contains("Step 1/"), "{}", text(&refused));
}
