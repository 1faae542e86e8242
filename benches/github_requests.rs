//! Requests Handoff sends to GitHub, counted by the fake GitHub (no timing: counts are
//! what the rate limit sees, and they do not vary from run to run).
//!
//! (a) Upserting a stage comment on a PR that has 150 comments, with and without the
//!     comment's id stored.
//! (b) Syncs of a repository with 2 and with 200 feedback PRs (each with its Follow-ups
//!     comment): the first, the next, an idle one, one after a managed comment was
//!     edited on GitHub, one after someone commented on a PR, one after the owner's
//!     `@handoff` comment, and the hourly complete pass: requests sent, and how many
//!     cost rate limit. Then what taking that one command costs: the thread read, the
//!     claim posted, the thread read again to settle it, the reaction, and the answer.
//! (c) Syncs of a repository with 200 open PRs that are not Handoff's, each with its own
//!     head commit and settled checks (a third passed, a third failed, a third have
//!     none): the first, an idle one, and the hourly complete pass.
//! (d) The same 200 PRs, all updated within the hour, so that every sync asks for their
//!     checks: the first sync and the next.
//!
//! Run: `cargo bench --bench github_requests`. Figures: benches/results/github_requests.md.

use std::time::Duration;

use handoff::domain::{CommentKind, FeedbackSource, NewRepo, SandboxBackend};
use handoff::github::command_claims::{
    claim_on_thread, post_answer, post_claim, settle_claim, ClaimSettled, TAKEN_REACTION,
};
use handoff::github::comment_authorship::SignedInAccount;
use handoff::github::comment_publishing::publish_agent_output;
use handoff::github::sync::sync;
use handoff::github::{CommentPlace, GithubClient, GithubEndpoints, RequestPolicy};
use handoff::secrets::Secret;
use handoff::store::{CodeRunRequest, NewFeedback, RunOutcome, SettingKey};
use handoff::Store;
use handoff_test_support::fake_github::{FakeGithub, OWNER};

const REPO: &str = "octocat/hello-world";

fn client(fake: &FakeGithub) -> GithubClient {
    GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(fake.owner_token()),
        RequestPolicy {
            timeout: Duration::from_secs(10),
            ..RequestPolicy::default()
        },
    )
    .unwrap()
}

async fn upsert_counts() -> (usize, usize, usize) {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.create_branch(REPO, "topic", "main");
    let pr = fake.create_pull(REPO, OWNER, "topic", "Busy PR");
    for n in 0..150 {
        fake.add_comment(REPO, pr, OWNER, &format!("discussion {n}"));
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = store
        .repositories()
        .add_repo(&NewRepo::with_defaults(REPO.parse().unwrap()))
        .await
        .unwrap();
    let github = client(&fake);
    let place = CommentPlace {
        repo: &repo,
        pr_number: pr,
        kind: CommentKind::Review,
    };

    // First publication: no id stored, no such comment yet (search, then create).
    fake.clear_requests();
    publish_agent_output(&github, &store, place, "first review", None, None)
        .await
        .unwrap();
    let first_without_id = fake.requests().len();

    // With the id stored: one update.
    fake.clear_requests();
    publish_agent_output(&github, &store, place, "second review", None, None)
        .await
        .unwrap();
    let with_id = fake.requests().len();

    // Without the id (a fresh mirror, the comment exists past the first 100): search, update.
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = Store::open_in(fresh_dir.path()).await.unwrap();
    let fresh_repo = fresh
        .repositories()
        .add_repo(&NewRepo::with_defaults(REPO.parse().unwrap()))
        .await
        .unwrap();
    fake.clear_requests();
    publish_agent_output(
        &github,
        &fresh,
        CommentPlace {
            repo: &fresh_repo,
            pr_number: pr,
            kind: CommentKind::Review,
        },
        "third review",
        None,
        None,
    )
    .await
    .unwrap();
    let existing_without_id = fake.requests().len();
    (with_id, existing_without_id, first_without_id)
}

/// Requests sent and how many cost rate limit.
type Count = (usize, usize);

/// Makes the next sync of `repo_id` a complete pass, as an hour after the last one.
async fn complete_pass_due(store: &Store, repo_id: handoff::domain::RepoId) {
    let cursor = store
        .sync_state()
        .sync_cursor(repo_id)
        .await
        .unwrap()
        .unwrap();
    store
        .sync_state()
        .set_sync_cursor(
            repo_id,
            &handoff::store::SyncCursor {
                complete_pass_at: cursor.complete_pass_at - chrono::Duration::hours(2),
                ..cursor
            },
        )
        .await
        .unwrap();
}

/// What each kind of sync of a repository with `pulls` feedback PRs costs.
struct SyncCounts {
    first: Count,
    second: Count,
    idle: Count,
    managed_comment_edited: Count,
    comment_added: Count,
    command_added: Count,
    command_taken: Count,
    hourly_complete_pass: Count,
}

async fn sync_counts(pulls: usize) -> SyncCounts {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = store
        .repositories()
        .add_repo(&NewRepo {
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .settings()
        .set_setting(SettingKey::GithubLogin, OWNER)
        .await
        .unwrap();
    let github = client(&fake);
    let mut first_pull = None;
    for n in 0..pulls {
        let feedback = store
            .feedback()
            .add_feedback(&NewFeedback {
                repo: REPO.parse().unwrap(),
                title: Some(format!("Feedback {n}")),
                body: "body".to_owned(),
                source: FeedbackSource::App,
                github_issue: None,
                opened_by_visitor: false,
            })
            .await
            .unwrap();
        let run = store
            .runs()
            .start_code_run(&CodeRunRequest {
                feedback_id: feedback.id,
                backend: SandboxBackend::Local,
                agent_preset: "bench".to_owned(),
                instructions: None,
            })
            .await
            .unwrap();
        store
            .runs()
            .finish_run(
                run.run.id,
                &RunOutcome::Succeeded {
                    exit_code: Some(0),
                    end_sha: None,
                    output: None,
                },
            )
            .await
            .unwrap();
        fake.create_branch(REPO, &feedback.head_branch, "main");
        let number = fake.create_pull(REPO, OWNER, &feedback.head_branch, &feedback.title);
        store
            .feedback()
            .record_pull_request(
                feedback.id,
                number,
                &format!("{}/{REPO}/pull/{number}", fake.web_base()),
            )
            .await
            .unwrap();
        publish_agent_output(
            &github,
            &store,
            CommentPlace {
                repo: &repo,
                pr_number: number,
                kind: CommentKind::FollowUps,
            },
            "the thread",
            None,
            None,
        )
        .await
        .unwrap();
        first_pull.get_or_insert(number);
    }
    // PRs and comments nobody touched for an hour: their checks have settled and there
    // is no review to look for.
    fake.backdate_issues(REPO, chrono::Duration::hours(1));
    fake.backdate_comments(REPO, chrono::Duration::hours(1));
    let counted = |fake: &FakeGithub| {
        let count = (fake.requests().len(), fake.rate_limit_cost());
        fake.clear_requests();
        count
    };
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let first = counted(&fake);
    sync(&github, &store, None).await.unwrap();
    let second = counted(&fake);
    sync(&github, &store, None).await.unwrap();
    let idle = counted(&fake);

    // The owner edits the first PR's Follow-ups comment on GitHub.
    let first_pull = first_pull.expect("a PR");
    let (comment_id, _, body) = fake.comments(REPO, first_pull)[0].clone();
    fake.edit_comment(comment_id, &format!("{body}\n\nEdited on GitHub."));
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let managed_comment_edited = counted(&fake);

    // Someone comments on the first PR (which moves the PR's last update).
    fake.add_user("reviewer");
    fake.add_comment(REPO, first_pull, "reviewer", "Looks good to me.");
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let comment_added = counted(&fake);

    // The owner gives a command on the first PR; the sync records it, and taking it
    // (claim, settle, reaction, answer) costs a few requests once.
    let command = fake.add_comment(REPO, first_pull, OWNER, "@handoff review");
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let command_added = counted(&fake);
    let commands = store
        .github_commands()
        .github_commands_in(handoff::domain::CommandState::Seen)
        .await
        .unwrap();
    assert_eq!(commands.len(), 1, "the sync recorded the command");
    let owner = SignedInAccount {
        login: OWNER.to_owned(),
    };
    let command_record = &commands[0];
    assert_eq!(command_record.comment_id, command);
    claim_on_thread(&github, &store, &owner, &repo.name, command_record)
        .await
        .unwrap();
    let claim = post_claim(&github, &repo.name, command_record, "bench", "bench")
        .await
        .unwrap();
    let settled = settle_claim(
        &github,
        &store,
        &owner,
        &repo.name,
        command_record,
        "bench",
        claim,
    )
    .await
    .unwrap();
    assert_eq!(settled, ClaimSettled::Won);
    github
        .react_to_issue_comment(&repo.name, command, TAKEN_REACTION)
        .await
        .unwrap();
    let answer = handoff::domain::github_command::CommandAnswer {
        command_comment_id: command,
        installation: "bench".to_owned(),
        run_id: Some(1),
        cost_usd: Some(0.1),
    };
    post_answer(
        &github,
        &repo.name,
        command_record,
        &answer,
        "Done.",
        "bench",
    )
    .await
    .unwrap();
    let command_taken = counted(&fake);

    // An hour after the last complete pass, the next sync is one again.
    complete_pass_due(&store, repo.id).await;
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let hourly_complete_pass = counted(&fake);
    SyncCounts {
        first,
        second,
        idle,
        managed_comment_edited,
        comment_added,
        command_added,
        command_taken,
        hourly_complete_pass,
    }
}

/// What syncs of a repository with `pulls` open PRs that are not Handoff's cost: the
/// first, an idle one, and the hourly complete pass.
async fn strangers_pulls_counts(pulls: usize) -> (Count, Count, Count) {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("contributor");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = store
        .repositories()
        .add_repo(&NewRepo {
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .settings()
        .set_setting(SettingKey::GithubLogin, OWNER)
        .await
        .unwrap();
    let github = client(&fake);
    fake.open_pulls_with_settled_checks(REPO, "contributor", pulls);
    fake.backdate_issues(REPO, chrono::Duration::hours(1));
    let counted = |fake: &FakeGithub| {
        let count = (fake.requests().len(), fake.rate_limit_cost());
        fake.clear_requests();
        count
    };
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let first = counted(&fake);
    sync(&github, &store, None).await.unwrap();
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let idle = counted(&fake);
    complete_pass_due(&store, repo.id).await;
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let hourly = counted(&fake);
    (first, idle, hourly)
}

/// What syncs of a repository with `pulls` open PRs that are not Handoff's cost while
/// every one of them was updated within the hour (so their checks may still change):
/// the first, and the next.
async fn busy_pulls_counts(pulls: usize) -> (Count, Count) {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("contributor");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    store
        .repositories()
        .add_repo(&NewRepo {
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .settings()
        .set_setting(SettingKey::GithubLogin, OWNER)
        .await
        .unwrap();
    let github = client(&fake);
    fake.open_pulls_with_settled_checks(REPO, "contributor", pulls);
    let counted = |fake: &FakeGithub| {
        let count = (fake.requests().len(), fake.rate_limit_cost());
        fake.clear_requests();
        count
    };
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let first = counted(&fake);
    sync(&github, &store, None).await.unwrap();
    let next = counted(&fake);
    (first, next)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (with_id, existing_without_id, first_without_id) = runtime.block_on(upsert_counts());
    let few = runtime.block_on(sync_counts(2));
    let many = runtime.block_on(sync_counts(200));
    println!("## GitHub requests (counted by the fake GitHub)\n");
    println!("| case | requests | cost against the rate limit |");
    println!("|---|---|---|");
    println!(
        "| (a) upsert a stage comment, id stored, PR with 150 comments | {with_id} | {with_id} |"
    );
    println!("| (a) upsert, no id stored, comment exists past the first 100 | {existing_without_id} | {existing_without_id} |");
    println!("| (a) upsert, no id stored, no comment yet (search + create) | {first_without_id} | {first_without_id} |");
    println!("\n| (b) sync of one repository | 2 feedback PRs | 200 feedback PRs |");
    println!("|---|---|---|");
    let row = |case: &str, few: Count, many: Count| {
        println!(
            "| {case} | {} requests, {} cost | {} requests, {} cost |",
            few.0, few.1, many.0, many.1
        );
    };
    row(
        "first sync (a complete pass, nothing cached yet)",
        few.first,
        many.first,
    );
    row(
        "the sync after it (new listings of what changed)",
        few.second,
        many.second,
    );
    row("idle sync", few.idle, many.idle);
    row(
        "after the owner edited a managed comment on GitHub",
        few.managed_comment_edited,
        many.managed_comment_edited,
    );
    row(
        "after someone commented on a feedback PR",
        few.comment_added,
        many.comment_added,
    );
    row(
        "after the owner's `@handoff` comment on a feedback PR",
        few.command_added,
        many.command_added,
    );
    row(
        "taking that command once (claim, settle, reaction, answer)",
        few.command_taken,
        many.command_taken,
    );
    row(
        "the hourly complete pass, nothing changed",
        few.hourly_complete_pass,
        many.hourly_complete_pass,
    );
    let (first, idle, hourly) = runtime.block_on(strangers_pulls_counts(200));
    println!("\n| (c) sync of one repository with 200 open PRs that are not Handoff's | requests | cost |");
    println!("|---|---|---|");
    for (case, (requests, cost)) in [
        ("first sync (a complete pass)", first),
        ("idle sync", idle),
        ("the hourly complete pass, nothing changed", hourly),
    ] {
        println!("| {case} | {requests} | {cost} |");
    }
    let (first, next) = runtime.block_on(busy_pulls_counts(200));
    println!("\n| (d) the same 200 PRs, all updated within the hour | requests | cost |");
    println!("|---|---|---|");
    for (case, (requests, cost)) in [
        ("first sync (a complete pass)", first),
        ("the next sync (every PR's checks asked again)", next),
    ] {
        println!("| {case} | {requests} | {cost} |");
    }
}
