//! The `handoff` command line against the fake GitHub, with the token in a real Secret
//! Service: sign-in (pasted token and device flow), sync, managed comments, the outbox,
//! and the token never showing up in the database or any output.

use handoff_test_support as support;

use std::path::Path;

use support::cli_process::{ok_stdout, text, Cli};
use support::eventually::eventually;
use support::fake_github::{FakeGithub, Fault, FaultRule, OWNER};
use support::secret_service::SecretService;

const REPO: &str = "octocat/hello-world";

async fn signed_in(fake: &FakeGithub, cli: &Cli<'_>) {
    ok_stdout(&cli.run(&["repo", "add", REPO]).await);
    let login = cli
        .run_with(
            &[
                "auth",
                "login",
                "--with-token",
                "--api-base",
                &fake.api_base(),
            ],
            Some(fake.owner_token()),
            &[],
        )
        .await;
    assert!(
        ok_stdout(&login).contains(&format!("as {OWNER}")),
        "{}",
        text(&login)
    );
}

fn data_folder_holds(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().any(|entry| {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
        bytes
            .windows(needle.len())
            .any(|window| window == needle.as_bytes())
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_token_is_checked_kept_in_the_keyring_and_forgotten_on_logout() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };

    let refused = cli
        .run_with(
            &[
                "auth",
                "login",
                "--with-token",
                "--api-base",
                &fake.api_base(),
            ],
            Some("ghp_wrong_token_1234"),
            &[],
        )
        .await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains("GitHub refused the token; nothing was stored"),
        "{}",
        text(&refused)
    );
    let status = cli.run(&["auth", "status"]).await;
    assert_eq!(status.status.code(), Some(1), "{}", text(&status));

    signed_in(&fake, &cli).await;
    let status = cli.run(&["auth", "status", "--json"]).await;
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["login"], OWNER);
    assert_eq!(json["token_stored"], true);
    assert_eq!(json["token_accepted"], true);
    assert!(!data_folder_holds(dir.path(), fake.owner_token()));

    ok_stdout(&cli.run(&["auth", "logout"]).await);
    let sync = cli.run(&["sync"]).await;
    assert_eq!(sync.status.code(), Some(1));
    assert!(
        text(&sync).contains("not signed in to GitHub"),
        "{}",
        text(&sync)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn device_flow_sign_in_waits_for_the_owner_to_approve() {
    let fake = FakeGithub::start().await;
    fake.register_oauth_app("Iv1.handofftest");
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };

    let login = {
        let api = fake.api_base();
        let arguments = [
            "auth",
            "login",
            "--device",
            "--client-id",
            "Iv1.handofftest",
            "--api-base",
            api.as_str(),
        ];
        let run = cli.run(&arguments);
        let approve = async {
            let code = eventually("the command asks GitHub for a code", || async {
                fake.device_user_codes().first().cloned()
            })
            .await;
            fake.approve_device(&code, OWNER);
        };
        let (output, ()) = tokio::join!(run, approve);
        output
    };

    let said = text(&login);
    assert!(login.status.success(), "{said}");
    assert!(
        said.contains("/login/device and enter the code FAKE-"),
        "{said}"
    );
    assert!(said.contains("as octocat"), "{said}");
    ok_stdout(&cli.run(&["auth", "status"]).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_never_appears_in_the_database_logs_errors_or_json() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    let issue = fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    fake.add_comment(REPO, issue, "visitor", "And the sidebar");
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    signed_in(&fake, &cli).await;
    let mut everything_printed = String::new();

    fake.inject(FaultRule::new("/issues", Fault::Status(500)).times(10));
    let failing = cli.run(&["sync"]).await;
    assert_eq!(failing.status.code(), Some(1), "{}", text(&failing));
    assert!(
        text(&failing).contains("GitHub failed on GET /repos/octocat/hello-world/issues with 500"),
        "{}",
        text(&failing)
    );
    everything_printed.push_str(&text(&failing));
    fake.clear_faults();
    let failing_json = cli.run(&["sync", "--json"]).await;
    everything_printed.push_str(&text(&failing_json));
    for arguments in [
        &["sync"][..],
        &["sync", "--json"],
        &["auth", "status", "--json"],
        &["auth", "status"],
        &["feedback", "list", "--json"],
        &["runs", "list", "--json"],
        &["outbox", "--json"],
        &["info", "--json"],
    ] {
        everything_printed.push_str(&text(&cli.run(arguments).await));
    }

    assert!(
        everything_printed.contains("1 new feedback")
            || everything_printed.contains("\"new_feedback\""),
        "{everything_printed}"
    );
    assert!(
        !everything_printed.contains(fake.owner_token()),
        "the token was printed"
    );
    assert!(
        !data_folder_holds(dir.path(), fake.owner_token()),
        "the token is in the data folder"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_mirrors_labelled_issues_and_reports_what_it_did() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    signed_in(&fake, &cli).await;

    let first = ok_stdout(&cli.run(&["sync"]).await);
    let second = ok_stdout(&cli.run(&["sync"]).await);

    assert!(
        first.contains("synced 1 repository: 1 new feedback"),
        "{first}"
    );
    assert!(second.contains("0 new feedback"), "{second}");
    assert!(second.contains("answered 304 (free)"), "{second}");
    let list = ok_stdout(&cli.run(&["feedback", "list"]).await);
    assert!(list.contains("Dark mode"), "{list}");
}

/// A PR with an agent's review comment on the fake, and the CLI signed in.
async fn reviewed_pull(fake: &FakeGithub, cli: &Cli<'_>) -> (u64, u64) {
    fake.create_repo(REPO, "main");
    fake.create_branch(REPO, "feedback/f2c-fb-1", "main");
    let pr = fake.create_pull(REPO, OWNER, "feedback/f2c-fb-1", "Bigger button");
    let comment = fake.add_comment(
        REPO,
        pr,
        OWNER,
        "<!-- sandbox-qa-review -->\n### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n\n_2026-11-30 03:44 UTC · Handoff run 1_\n\nThe button is fine.",
    );
    signed_in(fake, cli).await;
    (pr, comment)
}

#[tokio::test(flavor = "multi_thread")]
async fn comment_show_edit_history_and_diff() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let (pr, comment) = reviewed_pull(&fake, &cli).await;
    let pr = pr.to_string();

    let shown = ok_stdout(&cli.run(&["comment", "show", REPO, &pr, "review"]).await);
    assert_eq!(shown.trim(), "The button is fine.");

    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/is fine/is too small: 20px/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let edited = cli
        .run_with(
            &["comment", "edit", REPO, &pr, "review"],
            None,
            &[("EDITOR", editor.to_str().unwrap())],
        )
        .await;
    assert!(
        ok_stdout(&edited).contains("saved version 2 and updated the comment on GitHub"),
        "{}",
        text(&edited)
    );
    assert!(fake
        .comment_body(comment)
        .unwrap()
        .ends_with("The button is too small: 20px."));
    assert!(fake
        .comment_body(comment)
        .unwrap()
        .starts_with("<!-- sandbox-qa-review -->\n### 🔍"));

    let history = ok_stdout(&cli.run(&["comment", "history", REPO, &pr, "review"]).await);
    assert!(
        history.contains("edit_on_github") && history.contains("owner_in_handoff"),
        "{history}"
    );
    let diff = ok_stdout(
        &cli.run(&["comment", "diff", REPO, &pr, "review", "1", "2"])
            .await,
    );
    assert!(
        diff.contains("-The button is fine.\n+The button is too small: 20px."),
        "{diff}"
    );

    let unchanged = ok_stdout(
        &cli.run_with(
            &["comment", "edit", REPO, &pr, "review", "--file", "-"],
            Some("The button is too small: 20px.\n"),
            &[],
        )
        .await,
    );
    assert!(unchanged.contains("no change"), "{unchanged}");
    let bad = cli
        .run(&["comment", "diff", REPO, &pr, "review", "1", "9"])
        .await;
    assert_eq!(bad.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_comment_deleted_on_github_is_shown_from_the_local_history_with_a_note() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let (pr, comment) = reviewed_pull(&fake, &cli).await;
    let pr = pr.to_string();
    // Seen once, so the local history holds the text.
    let first = ok_stdout(&cli.run(&["comment", "show", REPO, &pr, "review"]).await);
    assert_eq!(first.trim(), "The button is fine.");

    fake.delete_comment(comment);
    let shown = cli.run(&["comment", "show", REPO, &pr, "review"]).await;
    assert_eq!(ok_stdout(&shown).trim(), "The button is fine.");
    let all = text(&shown);
    assert!(
        all.contains("the review comment was deleted on GitHub; its history is kept here"),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_over_a_newer_github_edit_shows_both_and_waits_for_a_choice() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let (pr, comment) = reviewed_pull(&fake, &cli).await;
    let pr = pr.to_string();
    let github_body = fake.comment_body(comment).unwrap().replace(
        "The button is fine.",
        "A reviewer on GitHub: the colour is wrong.",
    );

    // While the owner is in the editor, someone edits the comment on GitHub.
    let editor = dir.path().join("editor.sh");
    let payload = serde_json::json!({ "body": github_body }).to_string();
    std::fs::write(dir.path().join("payload.json"), payload).unwrap();
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\ncurl -s -o /dev/null -X PATCH -H 'Authorization: Bearer {token}' --data @{payload} {api}/repos/{REPO}/issues/comments/{comment}\nsed -i 's/is fine/needs work/' \"$1\"\n",
            token = fake.owner_token(),
            payload = dir.path().join("payload.json").display(),
            api = fake.api_base(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let conflict = cli
        .run_with(
            &["comment", "edit", REPO, &pr, "review"],
            None,
            &[("EDITOR", editor.to_str().unwrap())],
        )
        .await;

    let said = text(&conflict);
    assert_eq!(conflict.status.code(), Some(1), "{said}");
    assert!(
        said.contains("changed on GitHub since you loaded it, so nothing was overwritten"),
        "{said}"
    );
    assert!(
        said.contains("-A reviewer on GitHub: the colour is wrong.\n+The button needs work."),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "handoff comment resolve {REPO} {pr} review --keep-mine"
        )),
        "{said}"
    );
    assert_eq!(
        fake.comment_body(comment).unwrap(),
        github_body,
        "GitHub's edit stands"
    );
    let outbox = ok_stdout(&cli.run(&["outbox"]).await);
    assert!(outbox.contains("conflict"), "{outbox}");

    let resolved = ok_stdout(
        &cli.run(&["comment", "resolve", REPO, &pr, "review", "--keep-mine"])
            .await,
    );
    assert!(
        resolved.contains("updated the comment on GitHub"),
        "{resolved}"
    );
    assert!(fake
        .comment_body(comment)
        .unwrap()
        .ends_with("The button needs work."));
    let history = ok_stdout(
        &cli.run(&["comment", "history", REPO, &pr, "review", "--json"])
            .await,
    );
    let versions: serde_json::Value = serde_json::from_str(&history).unwrap();
    let contents: Vec<&str> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["content"].as_str().unwrap())
        .collect();
    assert!(
        contents.contains(&"A reviewer on GitHub: the colour is wrong."),
        "{contents:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_made_while_github_is_unreachable_waits_in_the_outbox() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let (pr, comment) = reviewed_pull(&fake, &cli).await;
    let pr = pr.to_string();
    ok_stdout(&cli.run(&["comment", "show", REPO, &pr, "review"]).await);
    fake.inject(FaultRule::new("/repos/", Fault::Status(503)).times(100));

    let queued = ok_stdout(
        &cli.run_with(
            &["comment", "edit", REPO, &pr, "review", "--file", "-"],
            Some("Offline correction."),
            &[],
        )
        .await,
    );
    assert!(queued.contains("waits in the outbox"), "{queued}");
    let listed = ok_stdout(&cli.run(&["outbox"]).await);
    assert!(
        listed.contains("pending") && listed.contains("503"),
        "{listed}"
    );

    fake.clear_faults();
    let sent = ok_stdout(&cli.run(&["outbox", "send"]).await);
    assert!(sent.starts_with("1 sent"), "{sent}");
    assert!(fake
        .comment_body(comment)
        .unwrap()
        .ends_with("Offline correction."));
    assert!(ok_stdout(&cli.run(&["outbox"]).await).contains("the outbox is empty"));

    // Another edit made offline, then discarded: never sent, still in the history.
    fake.inject(FaultRule::new("/repos/", Fault::Status(503)).times(100));
    ok_stdout(
        &cli.run_with(
            &["comment", "edit", REPO, &pr, "review", "--file", "-"],
            Some("Second thoughts."),
            &[],
        )
        .await,
    );
    let listed = ok_stdout(&cli.run(&["outbox"]).await);
    let id = listed
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().next())
        .unwrap_or_else(|| panic!("{listed}"))
        .to_owned();
    fake.clear_faults();
    let discarded = ok_stdout(&cli.run(&["outbox", "discard", &id]).await);
    assert!(discarded.contains("will not be sent"), "{discarded}");
    assert!(ok_stdout(&cli.run(&["outbox"]).await).contains("the outbox is empty"));
    let nothing = ok_stdout(&cli.run(&["outbox", "send"]).await);
    assert!(nothing.starts_with("0 sent"), "{nothing}");
    assert!(fake
        .comment_body(comment)
        .unwrap()
        .ends_with("Offline correction."));
    let history = ok_stdout(&cli.run(&["comment", "history", REPO, &pr, "review"]).await);
    assert!(
        history.contains("[discarded] Second thoughts."),
        "{history}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_that_may_change_workflows_is_pointed_out_at_sign_in_and_in_doctor() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let api_base = fake.api_base();
    let token = fake.owner_token().to_owned();
    let arguments = [
        "auth",
        "login",
        "--with-token",
        "--api-base",
        api_base.as_str(),
    ];
    let login = || cli.run_with(&arguments, Some(&token), &[]);

    fake.set_token_scopes(OWNER, Some("repo, workflow"));
    let signed_in = login().await;
    let said = text(&signed_in);
    assert!(signed_in.status.success(), "{said}");
    assert!(
        said.contains("note: the token has the `workflow` scope"),
        "{said}"
    );
    assert!(
        said.contains("hint: make a token without the `workflow` scope"),
        "{said}"
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains("warn  GitHub token: the token has the `workflow` scope"),
        "{doctor}"
    );

    fake.set_token_scopes(OWNER, Some("repo"));
    let plain = text(&login().await);
    assert!(!plain.contains("note:"), "{plain}");
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains("ok    GitHub token: scopes repo: pushes that change workflow files are refused by GitHub"),
        "{doctor}"
    );

    fake.set_token_scopes(OWNER, None);
    let fine_grained = text(&login().await);
    assert!(
        fine_grained.contains("note: a fine-grained token's permissions cannot be read"),
        "{fine_grained}"
    );
}

/// A fine-grained token without "Checks: read": `handoff sync` still succeeds, the PR
/// list says the checks cannot be read, Check setup names the permission to add, and the
/// log says it once, not at every sync.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_that_may_not_read_checks_degrades_and_check_setup_names_the_permission() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.create_branch(REPO, "feature/x", "main");
    fake.create_pull(REPO, OWNER, "feature/x", "A change");
    let head = fake.branch_sha(REPO, "feature/x").unwrap();
    fake.add_check_run(REPO, &head, "ci", "test", Some("success"), "ok");
    fake.inject(
        FaultRule::new(
            "/check-runs",
            Fault::NotAccessible {
                permission: "checks=read".to_owned(),
            },
        )
        .times(100),
    );
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    signed_in(&fake, &cli).await;

    for _ in 0..3 {
        let synced = cli.run(&["sync"]).await;
        assert!(synced.status.success(), "{}", text(&synced));
    }

    let pulls = ok_stdout(&cli.run(&["pr", "list"]).await);
    assert!(pulls.contains("unreadable"), "{pulls}");
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains("octocat/hello-world's checks") && doctor.contains("\"Checks: read\""),
        "{doctor}"
    );
    let log = ok_stdout(&cli.run(&["log", "--lines", "500"]).await);
    assert_eq!(
        log.matches("may not read this repository's checks").count(),
        1,
        "{log}"
    );
}
