//! What Handoff pushes, against the fake GitHub on the `local` backend: PRs open as
//! drafts (a repository setting); commits that change CI entry points are named in the
//! run, its log and the PR body; a branch GitHub guards (branch protection, a ruleset,
//! the default branch as GitHub has it now) is never pushed to; a push GitHub's own
//! checks refuse is reported with GitHub's reason, not as "someone pushed"; and git's
//! messages are read in English whatever the user's language.

use handoff_test_support as support;

use handoff::domain::{FeedbackStatus, SandboxBackend};
use handoff::pipeline::CodeRunResult;
use handoff::store::RepoSettingsChange;
use support::pipeline_world::{pr_number, PipelineWorld, REPO};

async fn world() -> PipelineWorld {
    PipelineWorld::new(SandboxBackend::Local).await
}

fn failure(report: &handoff::pipeline::CodeRunReport) -> (String, String) {
    match &report.result {
        CodeRunResult::Failed { code, message } => (code.as_str().to_owned(), message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn pull_requests_open_as_drafts_unless_the_repository_says_otherwise() {
    let world = world().await;
    let drafted = world.feedback("Drafted", "@@write a.txt a").await;
    let number = pr_number(&world.run(&drafted, None).await);
    assert!(world.fake.pull_is_draft(REPO, number), "a draft by default");

    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                draft_pull_requests: Some(false),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let ready = world.feedback("Ready", "@@write b.txt b").await;
    let number = pr_number(&world.run(&ready, None).await);
    assert!(!world.fake.pull_is_draft(REPO, number));
}

#[tokio::test]
async fn commits_that_change_ci_entry_points_are_named_in_the_run_its_log_and_the_pr() {
    let world = world().await;
    let feedback = world
        .feedback(
            "Speed up CI",
            "@@write .github/workflows/ci.yml on: push\n@@write Makefile test:\n@@write src/app.rs fn main() {}",
        )
        .await;
    let report = world.run(&feedback, None).await;
    let number = pr_number(&report);

    let run = world.store.runs().run(report.run.id).await.unwrap();
    let note = run
        .notes
        .iter()
        .find(|note| note.contains("CI entry points"))
        .unwrap_or_else(|| panic!("no note about CI entry points: {:?}", run.notes));
    assert!(
        note.contains(".github/workflows/ci.yml (a GitHub Actions workflow)"),
        "{note}"
    );
    assert!(note.contains("Makefile (a build script)"), "{note}");
    assert!(!note.contains("src/app.rs"), "{note}");
    let log = world.log_text(&report).await;
    assert!(
        log.contains("warning: the agent's commits change CI entry points"),
        "{log}"
    );
    let body = world.fake.issue_body(REPO, number).unwrap();
    assert!(body.contains("This PR changes CI entry points"), "{body}");
    assert!(
        body.contains("`.github/workflows/ci.yml`: a GitHub Actions workflow"),
        "{body}"
    );

    // An iterate that touches another one says so in the same PR's body, once.
    let again = world.run(&feedback, Some("@@write package.json {}")).await;
    assert_eq!(pr_number(&again), number);
    let body = world.fake.issue_body(REPO, number).unwrap();
    assert!(body.contains("`package.json`"), "{body}");
    assert_eq!(
        body.matches("This PR changes CI entry points").count(),
        1,
        "{body}"
    );
    assert!(
        body.contains("Opened by Handoff"),
        "the rest of the body stays: {body}"
    );
}

#[tokio::test]
async fn a_branch_github_guards_is_never_pushed_to() {
    for guard in [
        "protection",
        "update",
        "pull_request",
        "required_signatures",
    ] {
        let world = world().await;
        let feedback = world.feedback("Guarded", "@@write g.txt g").await;
        if guard == "protection" {
            // Protection needs the branch to exist: the owner made it by hand.
            world
                .fake
                .create_branch(REPO, &feedback.head_branch, "main");
            world.fake.protect_branch(REPO, &feedback.head_branch);
        } else {
            world.fake.add_branch_rule(REPO, "feedback/*", guard);
        }
        let before = world.fake.branch_sha(REPO, &feedback.head_branch);

        let report = world.run(&feedback, None).await;

        let (code, message) = failure(&report);
        assert_eq!(code, "protected_branch", "{guard}: {message}");
        assert!(message.contains("nothing was pushed"), "{guard}: {message}");
        if guard == "protection" {
            assert!(message.contains("branch protection"), "{message}");
        } else {
            assert!(
                message.contains(&format!("the rule `{guard}`")),
                "{message}"
            );
        }
        assert_eq!(
            world.fake.branch_sha(REPO, &feedback.head_branch),
            before,
            "{guard}: the branch is as it was"
        );
        assert!(world.fake.pulls(REPO).is_empty(), "{guard}: no PR");
    }
}

#[tokio::test]
async fn rules_that_only_guard_history_let_the_push_through() {
    let world = world().await;
    world
        .fake
        .add_branch_rule(REPO, "feedback/*", "non_fast_forward");
    world.fake.add_branch_rule(REPO, "feedback/*", "deletion");
    let feedback = world.feedback("Allowed", "@@write h.txt h").await;
    pr_number(&world.run(&feedback, None).await);
}

#[tokio::test]
async fn a_push_githubs_checks_refuse_says_githubs_reason_not_that_someone_pushed() {
    let world = world().await;
    let feedback = world.feedback("Refused", "@@write r.txt r").await;
    world.fake.refuse_pushes(
        REPO,
        &[
            "error: GH013: Repository rule violations found for refs/heads/feedback.",
            "- Changes must be made through a pull request.",
        ],
    );

    let report = world.run(&feedback, None).await;

    let (code, message) = failure(&report);
    assert_eq!(code, "push_refused", "{message}");
    assert!(message.contains("pre-receive hook declined"), "{message}");
    assert!(
        message.contains("GH013: Repository rule violations found"),
        "GitHub's own words: {message}"
    );
    assert!(!message.contains("someone pushed"), "{message}");
    assert!(message.contains("refs/handoff/runs/"), "{message}");
    assert_eq!(
        world
            .store
            .feedback()
            .feedback(feedback.id)
            .await
            .unwrap()
            .status,
        FeedbackStatus::Failed
    );
}

#[tokio::test]
async fn git_speaks_english_to_handoff_whatever_the_users_language() {
    // In French, git says "impossible de trouver la référence distante" where Handoff
    // reads "couldn't find remote ref": Handoff's git runs in the C locale. (The test
    // setup generates the French locale, and Debian's git carries its French
    // messages; this test runs in a process of its own.)
    if std::path::Path::new("/usr/bin/git").exists() {
        let path = std::env::var("PATH").unwrap_or_default();
        std::env::set_var("PATH", format!("/usr/bin:{path}"));
    }
    std::env::set_var("LANG", "fr_FR.UTF-8");
    std::env::set_var("LC_ALL", "fr_FR.UTF-8");
    std::env::set_var("LANGUAGE", "fr");
    let french = std::process::Command::new("git")
        .args(["push", "/nonexistent", "x"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&french.stderr).contains("erreur"),
        "git speaks French here: {}",
        String::from_utf8_lossy(&french.stderr)
    );
    let world = world().await;
    let git = handoff::pipeline::host_git::HostGit::new(
        &world.fake.web_base(),
        handoff::secrets::Secret::new(world.fake.owner_token()),
    );
    let scratch = tempfile::tempdir().unwrap();
    let cache = git
        .update_cache(scratch.path(), &REPO.parse().unwrap(), &[])
        .await
        .unwrap();

    let missing = git
        .fetch_pull_head(&cache, &REPO.parse().unwrap(), 999)
        .await;

    assert_eq!(
        missing,
        Ok(None),
        "a PR head GitHub does not have is told apart"
    );
}

#[tokio::test]
async fn agent_branches_can_go_to_a_fork_the_owner_controls_and_their_prs_come_from_it() {
    let world = world().await;
    world.fake.add_user("octocat-agents");
    let fork = world.fake.create_fork(REPO, "octocat-agents");
    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                push_fork: Some(Some(fork.parse().unwrap())),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let feedback = world.feedback("Forked", "@@write src/f.txt one").await;

    let first = world.run(&feedback, None).await;

    let number = pr_number(&first);
    assert_eq!(
        world.fake.branch_sha(REPO, &feedback.head_branch),
        None,
        "nothing pushed to the repository itself"
    );
    assert!(world
        .fake
        .branch_sha(&fork, &feedback.head_branch)
        .is_some());
    let pull = world
        .pipeline
        .github
        .pull_request(&world.store, &REPO.parse().unwrap(), number)
        .await
        .unwrap()
        .0;
    assert!(
        pull.head_is_in(&fork.parse().unwrap()),
        "the PR comes from the fork"
    );

    // An iterate starts from the fork branch's tip, the owner's own commit there
    // included, and updates the same PR.
    world.fake.push_commit(
        &fork,
        &feedback.head_branch,
        "By hand, in the fork",
        &[("src/by-hand.txt", "mine\n")],
    );
    let second = world.run(&feedback, Some("@@write src/g.txt two")).await;
    assert_eq!(pr_number(&second), number);
    assert_eq!(
        world
            .fake
            .file_on_branch(&fork, &feedback.head_branch, "src/by-hand.txt")
            .as_deref(),
        Some("mine\n")
    );
    assert_eq!(
        world
            .fake
            .file_on_branch(&fork, &feedback.head_branch, "src/g.txt")
            .as_deref(),
        Some("two\n")
    );
    assert_eq!(world.fake.pulls(REPO).len(), 1, "one PR");
}

#[tokio::test]
async fn a_forks_diff_is_read_with_a_cap_and_says_where_it_was_cut() {
    let world = world().await;
    world.fake.add_user("mallory");
    let huge = "a line of a very large file from a fork\n".repeat(20_000);
    let number = world.fake.create_fork_pull(
        REPO,
        "mallory",
        "huge",
        "main",
        "Huge change",
        &[("huge.txt", &huge)],
    );
    let git = handoff::pipeline::host_git::HostGit::new(
        &world.fake.web_base(),
        handoff::secrets::Secret::new(world.fake.owner_token()),
    );
    let scratch = tempfile::tempdir().unwrap();
    let cache = git
        .update_cache(scratch.path(), &REPO.parse().unwrap(), &[number])
        .await
        .unwrap();

    let diff = git
        .pull_request_diff(
            &cache,
            "main",
            &handoff::pipeline::host_git::pull_head_ref(number),
            100_000,
        )
        .await
        .unwrap();

    assert!(diff.len() < 100_200, "{} bytes", diff.len());
    assert!(diff.starts_with("diff --git a/huge.txt b/huge.txt"));
    assert!(diff.ends_with("[Handoff cut this diff at 100000 bytes: the rest is not shown]\n"));
    let whole = git
        .pull_request_diff(
            &cache,
            "main",
            &handoff::pipeline::host_git::pull_head_ref(number),
            10_000_000,
        )
        .await
        .unwrap();
    assert!(whole.len() > 800_000 && !whole.contains("Handoff cut"));
}
