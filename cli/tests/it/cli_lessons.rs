//! `handoff lessons …` as a person uses it: nothing to learn before a correction, the
//! owner's edit of a review synced back from GitHub, `lessons suggest` in the
//! foreground, the proposal listed with its source as a diff, accept, edit, write to
//! AGENTS.md, disable, and the refusals that say what to do.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::{QA_DIRECTIVES, REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

/// The scripted repository connected on the local backend, with a PR of the owner's
/// whose review the agent posts when asked; the PR's number.
async fn scripted_repository_with_a_pull_request(fake: &FakeGithub, cli: &Cli<'_>) -> u64 {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.create_branch(REPO, "feature/signup", "main");
    fake.push_commit(
        REPO,
        "feature/signup",
        "Signup",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    let pr = fake.create_pull(REPO, OWNER, "feature/signup", "Signup button");
    let instructions = cli.data_dir.join("instructions.md");
    std::fs::write(
        &instructions,
        format!("{QA_DIRECTIVES}\n@@lessons:lesson src|Buttons are 48px high."),
    )
    .unwrap();
    cli.connect_scripted_repo(
        fake,
        "local",
        &["--instructions-file", instructions.to_str().unwrap()],
    )
    .await;
    pr
}

/// Posts the agent's review of `pr`, then edits it on GitHub as the owner.
async fn the_owner_corrects_the_review(fake: &FakeGithub, cli: &Cli<'_>, pr: u64) {
    ok_text(&cli.run(&["qa", "review", REPO, &pr.to_string()]).await);
    let (id, body) = fake
        .comments(REPO, pr)
        .into_iter()
        .map(|(id, _, body)| (id, body))
        .find(|(_, body)| body.starts_with("<!-- sandbox-qa-review -->"))
        .unwrap();
    fake.edit_comment(
        id,
        &body.replace(
            "Review: the signup button is 20px high; it should be 44px.",
            "Review: the signup button must be 48px.",
        ),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lessons_start_by_themselves_on_sync_once_the_repository_says_so() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let pr = scripted_repository_with_a_pull_request(&fake, &cli).await;
    let set = ok_text(
        &cli.run(&["lessons", "settings", REPO, "--after-corrections", "1"])
            .await,
    );
    assert!(
        set.contains("starts by itself after 1 new corrections"),
        "{set}"
    );
    let quiet = ok_text(&cli.run(&["sync"]).await);
    assert!(!quiet.contains("lessons"), "no correction yet: {quiet}");

    the_owner_corrects_the_review(&fake, &cli, pr).await;
    let synced = ok_text(&cli.run(&["sync"]).await);
    assert!(
        synced.contains("lessons are due on octocat/hello-world: lessons run 2"),
        "{synced}"
    );
    assert!(synced.contains("lessons run 2: 1 proposed"), "{synced}");
    let again = ok_text(&cli.run(&["sync", "--json"]).await);
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(
        again["lessons_runs"].as_array().unwrap().len(),
        0,
        "{again}"
    );
    assert!(
        again["repos"].is_number(),
        "the sync's own fields stay: {again}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lessons_from_the_command_line() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let pr = scripted_repository_with_a_pull_request(&fake, &cli).await;

    let nothing = cli.run(&["lessons", "suggest", REPO]).await;
    assert_eq!(nothing.status.code(), Some(1));
    let said = text(&nothing);
    assert!(said.contains("nothing to learn from"), "{said}");
    assert!(said.contains("hint: edit the agent's review"), "{said}");

    the_owner_corrects_the_review(&fake, &cli, pr).await;
    ok_text(&cli.run(&["sync"]).await);
    let waiting = ok_text(&cli.run(&["lessons", "list", REPO]).await);
    assert!(waiting.contains("1 of your corrections wait"), "{waiting}");

    let suggested = ok_text(&cli.run(&["lessons", "suggest", REPO]).await);
    assert!(
        suggested.contains("proposed lesson 1: Buttons are 48px high."),
        "{suggested}"
    );
    assert!(suggested.contains("from edit-"), "{suggested}");

    let listed = ok_text(&cli.run(&["lessons", "list", REPO, "--sources"]).await);
    assert!(listed.contains("Proposed"), "{listed}");
    assert!(
        listed.contains("- Review: the signup button is 20px high; it should be 44px."),
        "{listed}"
    );
    assert!(
        listed.contains("+ Review: the signup button must be 48px."),
        "{listed}"
    );

    let refused = cli.run(&["lessons", "disable", "1"]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused).contains("hint: accept it first with `handoff lessons accept 1`"));
    assert!(ok_text(&cli.run(&["lessons", "accept", "1"]).await).contains("accepted, on"));
    let edited = ok_text(
        &cli.run(&[
            "lessons",
            "edit",
            "1",
            "--rule",
            "Buttons are at least 48px high.",
        ])
        .await,
    );
    assert!(
        edited.contains("Buttons are at least 48px high."),
        "{edited}"
    );
    let bad = cli
        .run(&["lessons", "edit", "1", "--path", "../outside"])
        .await;
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let written = ok_text(&cli.run(&["lessons", "write", REPO]).await);
    assert!(written.contains("opened PR #"), "{written}");
    assert!(
        written.contains("AGENTS.md carries the lessons"),
        "{written}"
    );
    let in_step = ok_text(&cli.run(&["lessons", "write", REPO]).await);
    assert!(in_step.contains("already holds the lessons"), "{in_step}");
    assert!(ok_text(&cli.run(&["lessons", "disable", "1"]).await).contains("accepted, off"));
    let json = ok_text(&cli.run(&["lessons", "list", REPO, "--json"]).await);
    let view: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        view["accepted"][0]["rule"],
        "Buttons are at least 48px high."
    );
    assert_eq!(view["accepted"][0]["enabled"], false);
    assert_eq!(view["accepted"][0]["paths"][0], "src");
    let missing = cli.run(&["lessons", "accept", "77"]).await;
    assert!(
        text(&missing).contains("no lesson 77"),
        "{}",
        text(&missing)
    );
}
