//! Requests Handoff sends to GitHub, counted by the fake GitHub (no timing: counts are
//! what the rate limit sees, and they do not vary from run to run).
//!
//! (a) Upserting a stage comment on a PR that has 150 comments, with and without the
//!     comment's id stored.
//! (b) An idle sync of 200 feedback PRs (each with its Follow-ups comment): requests
//!     sent, and how many cost rate limit.
//!
//! Run: `cargo bench --bench github_requests`. Figures: benches/results/github_requests.md.

use std::time::Duration;

use handoff::domain::{CommentKind, FeedbackSource, NewRepo, SandboxBackend};
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

async fn idle_sync_counts(pulls: usize) -> (usize, usize, usize, usize) {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = store
        .add_repo(&NewRepo {
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .set_setting(SettingKey::GithubLogin, OWNER)
        .await
        .unwrap();
    let github = client(&fake);
    for n in 0..pulls {
        let feedback = store
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
            .start_code_run(&CodeRunRequest {
                feedback_id: feedback.id,
                backend: SandboxBackend::Local,
                agent_preset: "bench".to_owned(),
                instructions: None,
            })
            .await
            .unwrap();
        store
            .finish_run(
                run.run.id,
                &RunOutcome::Succeeded {
                    exit_code: Some(0),
                    end_sha: None,
                    output: None,
                    llm_cost_usd: None,
                    tokens_in: None,
                    tokens_out: None,
                },
            )
            .await
            .unwrap();
        fake.create_branch(REPO, &feedback.head_branch, "main");
        let number = fake.create_pull(REPO, OWNER, &feedback.head_branch, &feedback.title);
        store
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
    }
    // PRs nobody touched for an hour: a sync five minutes later has no review to look for.
    fake.backdate_issues(REPO, chrono::Duration::hours(1));
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    let first_sent = fake.requests().len();
    let first_cost = fake.rate_limit_cost();
    fake.clear_requests();
    sync(&github, &store, None).await.unwrap();
    (
        first_sent,
        first_cost,
        fake.requests().len(),
        fake.rate_limit_cost(),
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (with_id, existing_without_id, first_without_id) = runtime.block_on(upsert_counts());
    let (first_sent, first_cost, idle_sent, idle_cost) = runtime.block_on(idle_sync_counts(200));
    println!("## GitHub requests (counted by the fake GitHub)\n");
    println!("| case | requests | cost against the rate limit |");
    println!("|---|---|---|");
    println!(
        "| (a) upsert a stage comment, id stored, PR with 150 comments | {with_id} | {with_id} |"
    );
    println!("| (a) upsert, no id stored, comment exists past the first 100 | {existing_without_id} | {existing_without_id} |");
    println!("| (a) upsert, no id stored, no comment yet (search + create) | {first_without_id} | {first_without_id} |");
    println!(
        "| (b) first sync of 200 feedback PRs (nothing cached yet) | {first_sent} | {first_cost} |"
    );
    println!("| (b) idle sync of 200 feedback PRs | {idle_sent} | {idle_cost} |");
}
