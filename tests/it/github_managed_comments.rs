//! Managed comments against the fake GitHub over real HTTP: publishing, reading back,
//! the local history, and safe owner edits through the outbox.

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::{CommentKind, NewRepo, Repo, VersionOrigin};
use handoff::github::comment_publishing::{publish_agent_output, read_back};
use handoff::github::owner_edits::{resolve_conflict, save_owner_edit, send_outbox, OutboxPass};
use handoff::github::{
    CommentPlace, ConflictChoice, EditOutcome, GithubClient, GithubEndpoints, ReadBack,
    RequestPolicy,
};
use handoff::secrets::Secret;
use handoff::Store;
use support::fake_github::{FakeGithub, Fault, FaultRule, OWNER};

const REPO: &str = "octocat/hello-world";

struct World {
    fake: FakeGithub,
    store: Store,
    client: GithubClient,
    repo: Repo,
    pr: u64,
    _dir: tempfile::TempDir,
}

fn quick_policy() -> RequestPolicy {
    RequestPolicy {
        attempts: 2,
        first_retry_delay: Duration::from_millis(20),
        max_rate_limit_wait: Duration::from_secs(5),
        timeout: Duration::from_secs(2),
    }
}

async fn world() -> World {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.create_branch(REPO, "feedback/f2c-fb-1", "main");
    let pr = fake.create_pull(REPO, OWNER, "feedback/f2c-fb-1", "Bigger button");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    let repo = store
        .repositories()
        .add_repo(&NewRepo::with_defaults(REPO.parse().unwrap()))
        .await
        .unwrap();
    let client = GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(fake.owner_token()),
        quick_policy(),
    )
    .unwrap();
    World {
        fake,
        store,
        client,
        repo,
        pr,
        _dir: dir,
    }
}

impl World {
    fn place(&self, kind: CommentKind) -> CommentPlace<'_> {
        CommentPlace {
            repo: &self.repo,
            pr_number: self.pr,
            kind,
        }
    }

    async fn publish(&self, kind: CommentKind, content: &str) -> handoff::github::Published {
        publish_agent_output(
            &self.client,
            &self.store,
            self.place(kind),
            content,
            None,
            Some("feedback/f2c-fb-1"),
        )
        .await
        .unwrap()
    }

    /// Publishes the plan `v1`, then saves the owner's `text` over it while GitHub
    /// answers 503: the edit waits in the outbox. Returns the plan as published and
    /// what the save said.
    async fn edit_while_github_is_down(
        &self,
        text: &str,
    ) -> (handoff::github::Published, EditOutcome) {
        let published = self.publish(CommentKind::Plan, "v1").await;
        self.fake
            .inject(FaultRule::new("/issues/comments/", Fault::Status(503)).times(10));
        let outcome = save_owner_edit(
            Some(&self.client),
            &self.store,
            self.place(CommentKind::Plan),
            text,
            published.version.id,
        )
        .await
        .unwrap();
        (published, outcome)
    }

    async fn content(&self, kind: CommentKind) -> String {
        match read_back(&self.client, &self.store, self.place(kind))
            .await
            .unwrap()
        {
            ReadBack::Present { content, .. } => content,
            ReadBack::Missing { .. } => panic!("the {kind} comment is missing"),
        }
    }
}

#[tokio::test]
async fn publishing_creates_one_comment_then_updates_it_with_one_request() {
    let world = world().await;

    let first = world.publish(CommentKind::Review, "First review").await;
    assert!(first.created);
    world.fake.clear_requests();
    let second = world.publish(CommentKind::Review, "Second review").await;

    assert!(!second.created);
    let requests = world.fake.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].method, "PATCH");
    let comments = world.fake.comments(REPO, world.pr);
    assert_eq!(comments.len(), 1, "one comment per stage");
    assert!(comments[0].2.starts_with("<!-- sandbox-qa-review -->\n### 🔍 QA code review (AI — edit freely; plan builds on your edits)\n"));
    assert!(comments[0].2.ends_with("\nSecond review"));
    let versions = world
        .store
        .comments()
        .comment_versions(second.comment.id)
        .await
        .unwrap();
    let contents: Vec<_> = versions
        .iter()
        .map(|v| (v.number, v.content.as_str(), v.origin))
        .collect();
    assert_eq!(
        contents,
        [
            (1, "First review", VersionOrigin::Agent),
            (2, "Second review", VersionOrigin::Agent)
        ]
    );
}

#[tokio::test]
async fn a_comment_made_elsewhere_is_found_by_its_marker_past_the_first_hundred() {
    let world = world().await;
    for n in 0..150 {
        world
            .fake
            .add_comment(REPO, world.pr, OWNER, &format!("chatter {n}"));
    }
    let existing = world.fake.add_comment(
        REPO,
        world.pr,
        OWNER,
        "<!-- sandbox-qa-plan -->\n### 🧪 QA test plan (AI — edit freely; test runs exactly this)\n\nold plan",
    );
    world.fake.clear_requests();

    let published = world.publish(CommentKind::Plan, "new plan").await;

    assert!(!published.created, "the existing comment was updated");
    assert_eq!(published.comment.github_comment_id, Some(existing));
    assert!(world
        .fake
        .comment_body(existing)
        .unwrap()
        .ends_with("new plan"));
    let requests: Vec<_> = world
        .fake
        .requests()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r.method,
                r.path.split('?').next().unwrap_or_default()
            )
        })
        .collect();
    let comments = format!("/repos/{REPO}/issues/{}/comments", world.pr);
    assert_eq!(
        requests,
        [
            "GET /user".to_owned(),
            format!("GET {comments}"),
            format!("GET {comments}"),
            format!("PATCH /repos/{REPO}/issues/comments/{existing}"),
        ],
        "who is signed in (whose comments count), two pages read, then one update"
    );
}

#[tokio::test]
async fn a_quoted_marker_in_a_reply_never_takes_over() {
    let world = world().await;
    let reply = world.fake.add_comment(
        REPO,
        world.pr,
        "octocat",
        "> <!-- sandbox-qa-review -->\n> ### 🔍 QA code review\n> old text\n\nI disagree with this review.",
    );

    let published = world.publish(CommentKind::Review, "the review").await;

    assert!(published.created);
    assert_ne!(published.comment.github_comment_id, Some(reply));
    assert!(
        world
            .fake
            .comment_body(reply)
            .unwrap()
            .starts_with("> <!--"),
        "the reply is untouched"
    );
    assert_eq!(world.content(CommentKind::Review).await, "the review");
}

#[tokio::test]
async fn a_stored_comment_deleted_on_github_is_replaced_by_a_search_then_a_create() {
    let world = world().await;
    let first = world.publish(CommentKind::Review, "v1").await;
    world
        .fake
        .delete_comment(first.comment.github_comment_id.unwrap());

    let second = world.publish(CommentKind::Review, "v2").await;

    assert!(second.created);
    assert_ne!(
        second.comment.github_comment_id,
        first.comment.github_comment_id
    );
    assert_eq!(world.fake.comments(REPO, world.pr).len(), 1);
}

#[tokio::test]
async fn reading_back_gives_the_owners_edit_without_marker_header_and_time_line() {
    let world = world().await;
    let published = world
        .publish(CommentKind::Review, "Agent says: the button is fine.")
        .await;
    let id = published.comment.github_comment_id.unwrap();
    let edited = world.fake.comment_body(id).unwrap().replace(
        "Agent says: the button is fine.",
        "Owner: the button is NOT fine; it is 20px.",
    );
    world.fake.edit_comment(id, &edited);

    let read = read_back(
        &world.client,
        &world.store,
        world.place(CommentKind::Review),
    )
    .await
    .unwrap();

    match read {
        ReadBack::Present {
            content,
            version,
            edited_on_github,
            ..
        } => {
            assert_eq!(content, "Owner: the button is NOT fine; it is 20px.");
            assert!(edited_on_github);
            assert_eq!(version.origin, VersionOrigin::EditOnGithub);
            assert_eq!(version.number, 2);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_missing_comment_is_reported_as_missing_not_guessed() {
    let world = world().await;
    let never = read_back(&world.client, &world.store, world.place(CommentKind::Plan))
        .await
        .unwrap();
    assert!(
        matches!(never, ReadBack::Missing { deleted: false, .. }),
        "{never:?}"
    );

    let published = world.publish(CommentKind::Plan, "plan").await;
    world
        .fake
        .delete_comment(published.comment.github_comment_id.unwrap());
    let deleted = read_back(&world.client, &world.store, world.place(CommentKind::Plan))
        .await
        .unwrap();
    assert!(
        matches!(deleted, ReadBack::Missing { deleted: true, .. }),
        "{deleted:?}"
    );
    let comment = world
        .store
        .comments()
        .managed_comment(world.repo.id, world.pr, CommentKind::Plan)
        .await
        .unwrap()
        .unwrap();
    assert!(comment.missing_since.is_some());
    assert_eq!(
        world
            .store
            .comments()
            .comment_versions(comment.id)
            .await
            .unwrap()
            .len(),
        1,
        "history kept"
    );
}

#[tokio::test]
async fn a_seventy_thousand_character_review_is_cut_on_github_and_kept_whole_locally() {
    let world = world().await;
    let long: String = (0..7_000)
        .map(|n| format!("line {n:04}\n"))
        .collect::<String>()
        + "THE END";
    assert!(long.chars().count() > 70_000);

    let published = world.publish(CommentKind::Review, &long).await;

    let on_github = world
        .fake
        .comment_body(published.comment.github_comment_id.unwrap())
        .unwrap();
    assert!(on_github.chars().count() <= 65_536);
    assert!(on_github.contains("cut at 60,000 characters"));
    assert!(!on_github.contains("THE END"));
    assert_eq!(
        published.version.full_content.as_deref(),
        Some(long.trim_end())
    );
    let read = world.content(CommentKind::Review).await;
    assert_eq!(
        read, published.version.content,
        "the next stage gets what the comment says"
    );
}

#[tokio::test]
async fn an_owner_edit_based_on_the_current_text_is_sent() {
    let world = world().await;
    let published = world
        .publish(CommentKind::Plan, "1. click the button")
        .await;

    let outcome = save_owner_edit(
        Some(&world.client),
        &world.store,
        world.place(CommentKind::Plan),
        "1. click the button\n2. check it is 44px",
        published.version.id,
    )
    .await
    .unwrap();

    let EditOutcome::Sent { version } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(version.origin, VersionOrigin::OwnerInHandoff);
    assert_eq!(version.based_on, Some(published.version.id));
    assert_eq!(
        world.content(CommentKind::Plan).await,
        "1. click the button\n2. check it is 44px"
    );
    assert!(world
        .store
        .outbox()
        .pending_outbox_entries(None)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn an_edit_over_a_newer_github_edit_is_refused_and_the_owner_chooses() {
    let world = world().await;
    let published = world.publish(CommentKind::Plan, "agent plan").await;
    let id = published.comment.github_comment_id.unwrap();
    let theirs_body = world
        .fake
        .comment_body(id)
        .unwrap()
        .replace("agent plan", "edited on GitHub");
    world.fake.edit_comment(id, &theirs_body);

    let outcome = save_owner_edit(
        Some(&world.client),
        &world.store,
        world.place(CommentKind::Plan),
        "edited in Handoff",
        published.version.id,
    )
    .await
    .unwrap();

    let EditOutcome::Conflict(conflict) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(conflict.mine.content, "edited in Handoff");
    assert_eq!(conflict.theirs.content, "edited on GitHub");
    assert_eq!(
        world.fake.comment_body(id).unwrap(),
        theirs_body,
        "GitHub's edit was not overwritten"
    );

    let kept = resolve_conflict(
        Some(&world.client),
        &world.store,
        conflict.entry,
        ConflictChoice::KeepMine,
    )
    .await
    .unwrap();
    assert!(matches!(kept, EditOutcome::Sent { .. }), "{kept:?}");
    assert!(world
        .fake
        .comment_body(id)
        .unwrap()
        .ends_with("edited in Handoff"));
    let origins: Vec<_> = world
        .store
        .comments()
        .comment_versions(published.comment.id)
        .await
        .unwrap()
        .iter()
        .map(|v| (v.origin, v.content.clone()))
        .collect();
    assert_eq!(
        origins,
        [
            (VersionOrigin::Agent, "agent plan".to_owned()),
            (
                VersionOrigin::OwnerInHandoff,
                "edited in Handoff".to_owned()
            ),
            (VersionOrigin::EditOnGithub, "edited on GitHub".to_owned()),
            (
                VersionOrigin::OwnerInHandoff,
                "edited in Handoff".to_owned()
            ),
        ],
        "every text is kept"
    );
}

#[tokio::test]
async fn taking_githubs_text_drops_the_edit_from_the_outbox_but_not_from_history() {
    let world = world().await;
    let published = world.publish(CommentKind::Review, "agent").await;
    let id = published.comment.github_comment_id.unwrap();
    world.fake.edit_comment(
        id,
        &world
            .fake
            .comment_body(id)
            .unwrap()
            .replace("agent", "theirs"),
    );
    let EditOutcome::Conflict(conflict) = save_owner_edit(
        Some(&world.client),
        &world.store,
        world.place(CommentKind::Review),
        "mine",
        published.version.id,
    )
    .await
    .unwrap() else {
        panic!("expected a conflict")
    };

    let outcome = resolve_conflict(
        Some(&world.client),
        &world.store,
        conflict.entry,
        ConflictChoice::TakeGithub,
    )
    .await
    .unwrap();

    assert!(matches!(outcome, EditOutcome::Discarded));
    assert!(world.fake.comment_body(id).unwrap().ends_with("theirs"));
    assert!(world
        .store
        .outbox()
        .pending_outbox_entries(None)
        .await
        .unwrap()
        .is_empty());
    let versions = world
        .store
        .comments()
        .comment_versions(published.comment.id)
        .await
        .unwrap();
    assert!(versions.iter().any(|v| v.content == "mine"));
}

#[tokio::test]
async fn an_edit_made_while_github_is_down_waits_in_the_outbox_and_is_sent_later_in_order() {
    let world = world().await;

    let (_, first) = world.edit_while_github_is_down("owner v2").await;
    let EditOutcome::Queued {
        version: v2,
        reason,
    } = first
    else {
        panic!("{first:?}")
    };
    assert!(reason.contains("503"), "{reason}");
    let second = save_owner_edit(
        None,
        &world.store,
        world.place(CommentKind::Plan),
        "owner v3",
        v2.id,
    )
    .await
    .unwrap();
    assert!(matches!(second, EditOutcome::Queued { .. }));
    assert_eq!(
        world
            .store
            .outbox()
            .pending_outbox_entries(None)
            .await
            .unwrap()
            .len(),
        2
    );

    // GitHub is back. Handoff restarts (the outbox survives it) and the owner says
    // "send now" instead of waiting out the backoff.
    world.fake.clear_faults();
    let reopened = Store::open_file(world.store.path()).await.unwrap();
    let report = send_outbox(&world.client, &reopened, OutboxPass::Everything)
        .await
        .unwrap();

    assert_eq!(report.sent, 2, "{report:?}");
    assert_eq!(world.content(CommentKind::Plan).await, "owner v3");
    assert!(reopened
        .outbox()
        .pending_outbox_entries(None)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn two_processes_sending_the_outbox_at_once_send_an_edit_once() {
    let world = world().await;
    let (published, queued) = world.edit_while_github_is_down("owner v2").await;
    assert!(matches!(queued, EditOutcome::Queued { .. }), "{queued:?}");
    // Meanwhile the comment was deleted on GitHub: sending puts the owner's text back
    // as a new comment, which two senders racing would do twice.
    world.fake.clear_faults();
    world
        .fake
        .delete_comment(published.comment.github_comment_id.unwrap());
    world.fake.inject(
        FaultRule::new(
            &format!("/issues/{}/comments", world.pr),
            Fault::Slow(Duration::from_millis(400)),
        )
        .method("POST")
        .times(2),
    );

    // The app's timer and a command line, each with its own connection.
    let app = Store::open_file(world.store.path()).await.unwrap();
    let command_line = Store::open_file(world.store.path()).await.unwrap();
    let (from_app, from_command_line) = tokio::join!(
        send_outbox(&world.client, &app, OutboxPass::Everything),
        send_outbox(&world.client, &command_line, OutboxPass::Everything),
    );
    let (from_app, from_command_line) = (from_app.unwrap(), from_command_line.unwrap());

    let comments = world.fake.comments(REPO, world.pr);
    assert_eq!(comments.len(), 1, "sent once: {comments:?}");
    assert!(comments[0].2.contains("owner v2"), "{comments:?}");
    assert!(
        from_app.sent + from_command_line.sent >= 1,
        "{from_app:?} {from_command_line:?}"
    );
    assert!(world
        .store
        .outbox()
        .pending_outbox_entries(None)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_pass_over_the_outbox_waits_for_the_backoff() {
    let world = world().await;
    let published = world.publish(CommentKind::Plan, "v1").await;
    world
        .fake
        .inject(FaultRule::new("/issues/comments/", Fault::Status(502)).times(2));
    save_owner_edit(
        Some(&world.client),
        &world.store,
        world.place(CommentKind::Plan),
        "v2",
        published.version.id,
    )
    .await
    .unwrap();
    world.fake.clear_requests();

    let report = send_outbox(&world.client, &world.store, OutboxPass::DueOnly)
        .await
        .unwrap();

    assert_eq!(report.sent, 0, "not due yet");
    assert!(world.fake.requests().is_empty(), "nothing was sent");
    let entry = &world
        .store
        .outbox()
        .pending_outbox_entries(None)
        .await
        .unwrap()[0];
    assert_eq!(entry.attempts, 1);
    assert!(entry.next_attempt_at > chrono::Utc::now());
    assert!(entry.last_error.as_deref().unwrap().contains("502"));
}

#[tokio::test]
async fn html_truncated_and_incomplete_answers_give_clear_errors_and_lose_nothing() {
    let world = world().await;
    let published = world.publish(CommentKind::Review, "agent").await;

    for (fault, expected) in [
        (Fault::Html, "HTML, not JSON"),
        (Fault::Truncated, "cut short"),
        (
            Fault::MissingField("html_url".to_owned()),
            "missing field `html_url`",
        ),
    ] {
        world.fake.inject(
            FaultRule::new("/issues/comments/", fault)
                .method("GET")
                .times(2),
        );
        let outcome = save_owner_edit(
            Some(&world.client),
            &world.store,
            world.place(CommentKind::Review),
            "owner edit",
            published.version.id,
        )
        .await
        .unwrap();
        let EditOutcome::Queued { reason, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(reason.contains(expected), "{reason}");
        assert!(
            reason.contains("GET /repos/octocat/hello-world/issues/comments/"),
            "{reason}"
        );
        world.fake.clear_faults();
    }
    let github_text = world
        .fake
        .comment_body(published.comment.github_comment_id.unwrap())
        .unwrap();
    assert!(
        github_text.ends_with("agent"),
        "nothing garbled reached GitHub"
    );
    assert_eq!(
        world
            .store
            .outbox()
            .pending_outbox_entries(None)
            .await
            .unwrap()
            .len(),
        3,
        "every edit waits"
    );

    let report = send_outbox(&world.client, &world.store, OutboxPass::Everything)
        .await
        .unwrap();

    assert_eq!(report.sent, 3, "{report:?}");
    assert_eq!(world.content(CommentKind::Review).await, "owner edit");
}
