//! The labels and reviewers a repository asks for on the PRs Handoff opens, on the fake
//! GitHub with the scripted agent: put on a new PR once (an Update PR asks nothing
//! again), and a reviewer GitHub refuses is a note on the run, whose PR is opened all
//! the same.

use handoff_test_support as support;

use handoff::domain::review_requests::Reviewer;
use handoff::domain::{RunStatus, SandboxBackend};
use handoff::store::RepoSettingsChange;
use support::pipeline_world::{pr_number, PipelineWorld, REPO};

async fn world_asking(labels: &[&str], reviewers: Vec<Reviewer>) -> PipelineWorld {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                pull_request_labels: Some(labels.iter().map(|l| (*l).to_owned()).collect()),
                pull_request_reviewers: Some(reviewers),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    world
}

#[tokio::test]
async fn a_new_pr_gets_the_repositorys_labels_and_reviewers_once() {
    let world = world_asking(
        &["handoff", "needs review"],
        vec![
            Reviewer::User("alice".to_owned()),
            Reviewer::Team {
                organization: "octocat".to_owned(),
                slug: "core".to_owned(),
            },
        ],
    )
    .await;
    world.fake.add_collaborator(REPO, "alice");
    let feedback = world
        .feedback("Greeting", "Say hello.\n@@append hello.txt hello")
        .await;
    let first = world.run(&feedback, None).await;
    let number = pr_number(&first);
    assert!(first.run.notes.is_empty(), "{:?}", first.run.notes);
    assert_eq!(
        world.fake.labels_of(REPO, number),
        ["handoff", "needs review"]
    );
    assert_eq!(
        world.fake.requested_reviewers(REPO, number),
        (vec!["alice".to_owned()], vec!["core".to_owned()])
    );

    let update = world.run(&feedback, Some("Louder.")).await;
    assert_eq!(pr_number(&update), number);
    let asked = world
        .fake
        .requests()
        .into_iter()
        .filter(|request| {
            request.method == "POST"
                && (request.path.ends_with("/labels")
                    || request.path.ends_with("/requested_reviewers"))
        })
        .count();
    assert_eq!(
        asked, 2,
        "labels and reviewers asked for once, when the PR was opened"
    );
}

#[tokio::test]
async fn a_reviewer_github_refuses_is_a_note_and_the_pr_is_opened_all_the_same() {
    let world = world_asking(&["handoff"], vec![Reviewer::User("stranger".to_owned())]).await;
    world.fake.add_user("stranger");
    let feedback = world
        .feedback("Greeting", "Say hello.\n@@append hello.txt hello")
        .await;
    let report = world.run(&feedback, None).await;
    let number = pr_number(&report);
    assert_eq!(report.run.status, RunStatus::Succeeded);
    assert_eq!(world.fake.labels_of(REPO, number), ["handoff"]);
    assert_eq!(report.run.notes.len(), 1, "{:?}", report.run.notes);
    let note = &report.run.notes[0];
    assert!(
        note.starts_with(&format!("reviews could not be requested on PR #{number}:"))
            && note.contains("not a collaborator"),
        "{note}"
    );
}
