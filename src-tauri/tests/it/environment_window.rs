//! The agent's environment in a repository's settings: the recipe found on the base
//! branch with its features, the test services beside it, what its image is keyed on and what Handoff
//! leaves out of it; Rebuild, which
//! builds the image on this machine's Docker engine and follows the build line by line;
//! the image's state, name and size once ready, and the last build's log; a test-only
//! setting added, marked, refused when it would carry the GitHub token, and removed;
//! and a recipe that cannot be built, shown with what is wrong and where.

use handoff_test_support as support;

use handoff::store::RepoSettingsChange;
use support::docker_images::{unique_word, EnvironmentImagesRemovedOnDrop};
use support::pipeline_world::TEST_IMAGE;
use support::window::github_world::{connected_repo, GithubWorld, REPO, RUN_LIMIT};

const STATE: &str =
    "const s = document.querySelector('#environment .environment-state'); return s ? s.dataset.state : '';";

#[tokio::test(flavor = "multi_thread")]
async fn a_repositorys_environment_is_shown_rebuilt_and_its_log_read_in_its_settings() {
    let world = GithubWorld::new().await;
    let repo = connected_repo(&world.fake, &world.store, "").await;
    // The build's network is the one the repository's Docker runs get, behind its
    // egress gate, which runs from the repository's agent image.
    world
        .store
        .repositories()
        .change_repo_settings(
            repo.id,
            &RepoSettingsChange {
                docker_image: Some(Some(TEST_IMAGE.to_owned())),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let _images =
        EnvironmentImagesRemovedOnDrop(world.store.settings().installation_id().await.unwrap());
    let word = unique_word();
    world.fake.push_commit(
        REPO,
        "main",
        "A dev container",
        &[
            (
                ".devcontainer/devcontainer.json",
                &format!(
                    "// The project's container ({word})\n{{\n  \"image\": \"handoff-test-agent:bookworm\",\n  \
                     \"features\": {{ \"./tools\": {{ \"flavour\": \"mild\" }} }},\n  \
                     \"initializeCommand\": \"docker login\",\n  \
                     \"postCreateCommand\": \"git --version > .git-version\",\n}}\n"
                ),
            ),
            (
                ".devcontainer/tools/devcontainer-feature.json",
                "{ \"id\": \"tools\", \"version\": \"1.0.0\" }\n",
            ),
            (
                ".devcontainer/tools/install.sh",
                "#!/bin/sh\necho \"tools ($FLAVOUR) for $_REMOTE_USER\" > /opt/tools.txt\n",
            ),
            ("package-lock.json", "{}\n"),
            (
                ".handoff/services.yml",
                "services:\n  db:\n    image: handoff-test-agent:bookworm\n    command: sleep infinity\n",
            ),
        ],
    );
    let app = world.open_signed_in_window().await;
    app.click("#open-settings").await;
    app.text_eventually_containing(STATE, "not_built").await;
    assert_eq!(
        app.texts("#environment .environment-keyed-on li").await,
        [
            ".devcontainer/devcontainer.json",
            ".devcontainer/tools/devcontainer-feature.json",
            ".devcontainer/tools/install.sh",
            ".handoff/services.yml",
            "package-lock.json"
        ]
    );
    assert_eq!(
        app.texts("#environment .environment-services li").await,
        ["db: handoff-test-agent:bookworm"]
    );
    let notes = app.texts("#environment .environment-notes li").await;
    assert!(
        notes.iter().any(|note| note.contains("initializeCommand")),
        "{notes:?}"
    );
    let setup = app.texts("#environment .environment-setup li").await;
    assert_eq!(setup, ["postCreateCommand: git --version > .git-version"]);
    assert_eq!(
        app.texts("#environment .environment-features li").await,
        ["./tools (flavour=mild)"]
    );

    // Rebuild follows the build as it goes, then shows the image ready.
    app.click("#environment .rebuild-environment").await;
    app.eventually_within(RUN_LIMIT, STATE, |state| state == "ready")
        .await;
    let image = app.texts("#environment .environment-image").await;
    assert!(
        image.len() == 1 && image[0].starts_with("handoff-env-") && image[0].ends_with(" MB)"),
        "{image:?}"
    );
    app.click("#environment .environment-last-build summary")
        .await;
    let log = app
        .text_eventually_containing(
            "const l = document.querySelector('#environment .environment-log'); return l ? l.textContent : '';",
            "postCreateCommand",
        )
        .await;
    assert!(log.contains("Step 1/"), "{log}");
    assert!(log.contains("the feature ./tools is tools 1.0.0"), "{log}");

    // A test-only setting is added, and shown with its value, marked test-only.
    app.type_into("#environment input[name=testSettingName]", "DATABASE_URL")
        .await;
    app.type_into(
        "#environment input[name=testSettingValue]",
        "postgres://postgres:test@db/app",
    )
    .await;
    app.click("#environment .test-setting-form button[type=submit]")
        .await;
    app.text_eventually_containing(
        "const l = document.querySelector('#environment .test-setting-list'); return l ? l.textContent : '';",
        "DATABASE_URL",
    )
    .await;
    assert_eq!(
        app.texts("#environment .test-setting .test-setting-value")
            .await,
        ["postgres://postgres:test@db/app"]
    );
    assert_eq!(
        app.texts("#environment .test-setting .test-only").await,
        ["test-only"]
    );
    // The picture: the log folded again, the section from its head to the settings.
    app.click("#environment .environment-last-build summary")
        .await;
    app.client
        .execute(
            "document.getElementById('environment').scrollIntoView({ block: 'start' });",
            vec![],
        )
        .await
        .unwrap();
    app.screenshot("environment").await;

    // The GitHub token can never be one: the refusal is shown by the form, with its
    // code, and nothing is kept.
    app.type_into("#environment input[name=testSettingName]", "GITHUB_TOKEN")
        .await;
    app.type_into("#environment input[name=testSettingValue]", "anything")
        .await;
    app.click("#environment .test-setting-form button[type=submit]")
        .await;
    let refusal = app
        .text_eventually_containing(
            "const r = document.querySelector('#environment .test-setting-refusal'); return r && !r.hidden ? r.dataset.code + ': ' + r.textContent : '';",
            "GITHUB_TOKEN",
        )
        .await;
    assert!(
        refusal.starts_with("invalid_input: GITHUB_TOKEN carries a credential"),
        "{refusal}"
    );
    let kept = world
        .store
        .test_settings()
        .test_settings(repo.id)
        .await
        .unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");

    // Removed, it is gone.
    app.click("#environment .remove-test-setting").await;
    app.text_eventually_containing(
        "const e = document.querySelector('#environment .empty-test-settings'); return e ? e.textContent : '';",
        "None",
    )
    .await;

    // A recipe that cannot be built says what and where, and offers no Rebuild.
    world.fake.push_commit(
        REPO,
        "main",
        "A broken dev container",
        &[(
            ".devcontainer/devcontainer.json",
            "{ \"image\": \"x\",\n  \"build\" }\n",
        )],
    );
    app.click("#settings-close").await;
    app.click("#open-settings").await;
    let error = app
        .text_eventually_containing(
            "const e = document.querySelector('#environment .environment-error'); return e ? e.textContent : '';",
            "line 2",
        )
        .await;
    assert!(error.contains("devcontainer.json"), "{error}");
    assert!(app
        .texts("#environment .rebuild-environment")
        .await
        .is_empty());
}
