//! PRs that update themselves, from the command line: `repo set` turns it on (a bad
//! number of attempts is a usage error) and sets the PRs' labels and reviewers; `handoff
//! sync` finds a failing GitHub Actions check, says why it starts an Update PR and
//! drives it to the end; `feedback show` tells the run's reason and the decision.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

#[tokio::test(flavor = "multi_thread")]
async fn sync_starts_an_update_for_a_failing_check_and_says_why() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;

    let refused = cli
        .run(&[
            "repo",
            "set",
            REPO,
            "--automatic-updates",
            "true",
            "--automatic-attempts-per-day",
            "0",
        ])
        .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused)
            .contains("--automatic-attempts-per-day: \"0\" is not a whole number of at least 1"),
        "{}",
        text(&refused)
    );
    let bad_reviewer = cli
        .run(&["repo", "set", REPO, "--pr-reviewers", "alice!"])
        .await;
    assert_eq!(
        bad_reviewer.status.code(),
        Some(2),
        "{}",
        text(&bad_reviewer)
    );
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--automatic-updates",
            "true",
            "--automatic-attempts-per-day",
            "3",
            "--pr-labels",
            "handoff, needs review",
        ])
        .await,
    );
    let shown = ok_text(&cli.run(&["repo", "show", REPO]).await);
    assert!(
        shown.contains("at most 3 a PR a day")
            && shown.contains("PR labels:     handoff, needs review"),
        "{shown}"
    );

    let feedback = cli
        .add_feedback("Say hello.\n@@append hello.txt hello")
        .await;
    ok_text(&cli.run(&["run", &feedback]).await);
    let number = fake.pulls(REPO).first().expect("the PR").0;
    assert_eq!(fake.labels_of(REPO, number), ["handoff", "needs review"]);
    let head = fake.pull_head_sha(REPO, number);
    fake.add_failed_actions_job(
        REPO,
        &head,
        "test",
        "1 test failed",
        "2026-12-02T10:00:00.0000000Z error: expected 48px\n",
    );

    let synced = ok_text(&cli.run(&["sync"]).await);
    let because = format!(
        "the check \"test\" failed on {} of PR #{number}",
        &head[..7]
    );
    assert!(
        synced.contains(&format!(
            "feedback {feedback}: automatic update started: {because}"
        )),
        "{synced}"
    );
    assert!(synced.contains("succeeded"), "{synced}");
    let detail = ok_text(&cli.run(&["feedback", "show", &feedback]).await);
    assert!(
        detail.contains(&format!("started by itself because {because}"))
            && detail.contains("automatic updates:")
            && detail.contains("Handoff, for an automatic update"),
        "{detail}"
    );
}
