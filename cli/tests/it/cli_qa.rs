//! `handoff qa …` as a person uses it: the stages in the foreground, the refusal over
//! the owner's edits and `--force`, a missing input said plainly, `handoff pr list|show`
//! with the stages' states, and the full chain.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::{QA_DIRECTIVES, REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

/// The scripted repository with a PR of the owner's that changes a button; its number.
fn signup_pull(fake: &FakeGithub) -> String {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    fake.create_branch(REPO, "feature/signup", "main");
    fake.push_commit(
        REPO,
        "feature/signup",
        "Signup",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    fake.create_pull(REPO, OWNER, "feature/signup", "Signup button")
        .to_string()
}

/// Connects the scripted repository on the local backend, its instructions the QA
/// directives, with `more` options.
async fn connect_with_qa_directives(fake: &FakeGithub, cli: &Cli<'_>, more: &[&str]) {
    let instructions = cli.data_dir.join("instructions.md");
    std::fs::write(&instructions, QA_DIRECTIVES).unwrap();
    let mut options = vec!["--instructions-file", instructions.to_str().unwrap()];
    options.extend_from_slice(more);
    cli.connect_scripted_repo(fake, "local", &options).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_qa_stages_from_the_command_line() {
    let fake = FakeGithub::start().await;
    let pr = signup_pull(&fake);
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    connect_with_qa_directives(&fake, &cli, &[]).await;
    let qa = |stage: &str, extra: &[&str]| {
        let mut arguments = vec![
            "qa".to_owned(),
            stage.to_owned(),
            REPO.to_owned(),
            pr.clone(),
        ];
        arguments.extend(extra.iter().map(|a| a.to_string()));
        let cli = &cli;
        async move {
            let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
            cli.run(&arguments).await
        }
    };

    let review = ok_text(&qa("review", &[]).await);
    assert!(
        review.contains("» starting the local sandbox"),
        "the log streams: {review}"
    );
    assert!(
        review.contains(&format!("review: review posted on PR #{pr} (version 1)")),
        "{review}"
    );

    let (id, body) = fake
        .comments(REPO, pr.parse().unwrap())
        .into_iter()
        .map(|(id, _, body)| (id, body))
        .find(|(_, body)| body.starts_with("<!-- sandbox-qa-review -->"))
        .unwrap();
    fake.edit_comment(id, &format!("{body}\nOwner: 48px, please."));
    let refused = qa("review", &[]).await;
    assert_eq!(refused.status.code(), Some(1));
    let refusal = text(&refused);
    assert!(
        refusal.contains("the review comment carries your edits (version 2)"),
        "{refusal}"
    );
    assert!(refusal.contains("--force"), "{refusal}");
    let history = ok_text(&cli.run(&["comment", "history", REPO, &pr, "review"]).await);
    assert!(history.contains("edit_on_github"), "{history}");

    let test = ok_text(&qa("test", &[]).await);
    assert!(
        test.contains("note: plan comment not found: test planned anew"),
        "{test}"
    );
    assert!(
        test.contains("test: 2 scenarios: 1 passed, 1 failed; issues #"),
        "{test}"
    );

    // The PR and its stages as the window's workspace shows them.
    let listed = ok_text(&cli.run(&["pr", "list"]).await);
    assert!(
        listed.contains(&format!("#{pr}")) && listed.contains("Signup button"),
        "{listed}"
    );
    let shown = ok_text(&cli.run(&["pr", "show", REPO, &pr]).await);
    let review_line = shown
        .lines()
        .find(|line| line.starts_with("review"))
        .unwrap();
    assert!(review_line.contains("edited by you"), "{shown}");
    assert!(
        shown.contains("plan comment not found: test planned anew"),
        "{shown}"
    );
    assert!(shown.contains("✗ Button height (issue #"), "{shown}");
    assert!(shown.contains("✓ Login works"), "{shown}");

    let auto = ok_text(&qa("auto", &["--force"]).await);
    for line in [
        "review: review posted",
        "plan: test plan posted",
        "test: 2 scenarios",
        "fix: 1 commit(s) pushed to feature/signup",
    ] {
        assert!(auto.contains(line), "{line} missing from:\n{auto}");
    }
    let unknown = cli.run(&["qa", "deploy", "octocat/hello-world", "1"]).await;
    assert_eq!(unknown.status.code(), Some(2));
}

/// Full auto holds back its stages' run budgets the way it reserves their quota: a month
/// that cannot hold them refuses the chain before any stage starts, and says what to do.
#[tokio::test(flavor = "multi_thread")]
async fn full_auto_is_refused_when_the_month_cannot_hold_its_stages_budgets() {
    let fake = FakeGithub::start().await;
    let pr = signup_pull(&fake);
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    connect_with_qa_directives(&fake, &cli, &["--monthly-budget", "12"]).await;

    let refused = cli.run(&["qa", "auto", REPO, &pr]).await;

    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let said = text(&refused);
    assert!(
        said.contains("a full-auto chain of 4 stages holds back $20.00")
            && said.contains("have $12.00 left"),
        "{said}"
    );
    assert!(
        said.contains("hint:") && said.contains("--monthly-budget"),
        "{said}"
    );
    let runs: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "list", "--json"]).await)).unwrap();
    assert!(
        runs.as_array().unwrap().is_empty(),
        "no run was recorded: {runs}"
    );
    // One stage at a time fits, and so does the chain once each stage may spend $2.
    ok_text(&cli.run(&["qa", "review", REPO, &pr]).await);
    ok_text(&cli.run(&["config", "set", "budget.run_usd", "2"]).await);
    ok_text(&cli.run(&["qa", "auto", REPO, &pr]).await);
}
