//! A fork for the agent's branches from the command line, against the fake GitHub: made
//! in an organization the owner may make repositories in (GitHub makes it a moment
//! after it answers, and Handoff waits), found in a second account that made it and lets
//! the owner push, refused in the owner's own account (GitHub does not fork a repository
//! into its own account), and the place new repositories get theirs; `repo show` and
//! Check setup say plainly where the branches go and what CI runs with.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const FORK: &str = "octo-agents/hello-world";

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_in_an_organization_takes_the_agents_branches_and_new_repositories_get_theirs() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.add_organization("octo-agents", &[(OWNER, "admin", true)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;

    let shown = ok_text(&cli.run(&["repo", "show", REPO]).await);
    assert!(
        shown.contains("branches go to the repository itself: CI runs the agent's code with the repository's secrets"),
        "{shown}"
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains("agent branches: they go to the repository itself, so CI runs the agent's code with the repository's secrets"),
        "{doctor}"
    );
    assert!(
        doctor.contains(&format!("handoff repo fork {REPO} --into octo-agents")),
        "the one organization the owner may fork to is named: {doctor}"
    );

    // GitHub does not fork an account's repository into that account.
    let own = cli.run(&["repo", "fork", REPO, "--into", OWNER]).await;
    assert_eq!(own.status.code(), Some(1), "{}", text(&own));
    assert!(
        text(&own).contains("GitHub does not let an account fork its own repository into itself"),
        "{}",
        text(&own)
    );
    assert_eq!(fake.parent_of(&format!("{OWNER}/hello-world")), None);

    fake.clear_requests();
    let made = cli
        .run(&["repo", "fork", REPO, "--into", "octo-agents"])
        .await;
    let said = ok_text(&made);
    assert!(
        said.contains(&format!("agent branches of {REPO} go to the fork {FORK}")),
        "{said}"
    );
    assert_eq!(fake.parent_of(FORK).as_deref(), Some(REPO));
    // GitHub answered at once and had the fork's git data a moment later: Handoff
    // asked for its default branch until it answered.
    let branch_reads: Vec<u16> = fake
        .requests()
        .iter()
        .filter(|request| request.path == format!("/repos/{FORK}/branches/main"))
        .map(|request| request.status)
        .collect();
    assert_eq!(branch_reads.last(), Some(&200), "{branch_reads:?}");
    assert!(branch_reads.contains(&404), "{branch_reads:?}");

    let shown = ok_text(&cli.run(&["repo", "show", REPO]).await);
    assert!(
        shown.contains(&format!(
            "branches go to the fork {FORK} (its PRs run CI without the repository's secrets)"
        )),
        "{shown}"
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains(&format!(
            "they go to the fork {FORK}, whose PRs run CI without the repository's secrets"
        )),
        "{doctor}"
    );

    // The agent's work goes to the fork, and its PR comes from there.
    let feedback = cli
        .add_feedback("Greet the readers\n@@write docs/greeting.md Hello")
        .await;
    let run = ok_text(&cli.run(&["run", &feedback]).await);
    assert!(run.contains("PR #1 opened"), "{run}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert!(
        fake.branch_sha(FORK, &branch).is_some(),
        "the branch is in the fork"
    );
    assert_eq!(
        fake.branch_sha(REPO, &branch),
        None,
        "and not in the repository"
    );

    // A repository connected now gets its own fork in the same place.
    fake.create_repo("octocat/second", "main");
    let added = ok_text(&cli.run(&["repo", "add", "octocat/second"]).await);
    assert!(
        added.contains("agent branches go to the fork octo-agents/second"),
        "{added}"
    );
    assert_eq!(
        fake.parent_of("octo-agents/second").as_deref(),
        Some("octocat/second")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_accounts_fork_is_taken_only_once_the_owner_may_push_to_it() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.add_user("octo-machine");
    fake.add_organization("strict-org", &[(OWNER, "member", false)]);
    cli.connect_scripted_repo(&fake, "local", &[]).await;

    let refused = |output: &std::process::Output, needle: &str| {
        assert_eq!(output.status.code(), Some(1), "{}", text(output));
        assert!(text(output).contains(needle), "{}", text(output));
    };
    refused(
        &cli.run(&["repo", "fork", REPO, "--into", "strict-org"])
            .await,
        "you may not make repositories in the organization strict-org",
    );
    refused(
        &cli.run(&["repo", "fork", REPO, "--into", "octo-machine"])
            .await,
        "octo-machine has no fork of octocat/hello-world: a second account makes its fork itself",
    );
    let usage = cli.run(&["repo", "fork", REPO]).await;
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
    assert!(
        text(&usage).contains("a second account of yours (a machine account)"),
        "{}",
        text(&usage)
    );

    fake.create_fork(REPO, "octo-machine");
    refused(
        &cli.run(&["repo", "fork", REPO, "--into", "octo-machine"])
            .await,
        "you cannot push to octo-machine/hello-world: its owner must give you write access",
    );
    fake.add_collaborator("octo-machine/hello-world", OWNER);
    let taken = ok_text(
        &cli.run(&["repo", "fork", REPO, "--into", "octo-machine"])
            .await,
    );
    assert!(
        taken.contains("go to the fork octo-machine/hello-world"),
        "{taken}"
    );
    let shown = ok_text(&cli.run(&["repo", "show", REPO]).await);
    assert!(
        shown.contains("branches go to the fork octo-machine/hello-world"),
        "{shown}"
    );
}
