//! The fake's reactions on issue comments and its PR reviews submitted over the API.
//! As on GitHub, a review that approves or requests changes is refused from the PR's
//! own author (Handoff opens PRs as the owner, so the owner can never submit one on a
//! feedback PR), and a reaction someone already gave is answered 200, not made again.

use axum::http::StatusCode;
use serde_json::{json, Value};

use super::super::bare_repository::git_ref_sha;
use super::super::shapes::{self, Urls};
use super::super::state::{now, repo_key, FakeReaction, FakeReview, FakeState};
use super::{answer, not_found, Answer};

/// The reactions GitHub knows.
const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];

/// Why GitHub refuses a review of PR `number` by `user_id` that ends in `state`
/// (`APPROVED`, `CHANGES_REQUESTED` or `COMMENTED`), if it does.
pub fn review_refusal(
    state: &FakeState,
    key: &str,
    number: u64,
    user_id: u64,
    review_state: &str,
) -> Option<&'static str> {
    let (owner, name) = key.split_once('/')?;
    let author = state.repo(owner, name)?.issues.get(&number)?.user_id;
    match review_state {
        "CHANGES_REQUESTED" if author == user_id => {
            Some("Review Can not request changes on your own pull request")
        }
        "APPROVED" if author == user_id => Some("Review Can not approve your own pull request"),
        _ => None,
    }
}

fn refused(text: &str) -> Answer {
    answer(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({
            "message": "Unprocessable Entity",
            "errors": [text],
            "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
            "status": "422"
        }),
    )
}

/// `POST /repos/{owner}/{repo}/pulls/{number}/reviews`.
pub fn create_review(
    urls: &Urls,
    state: &mut FakeState,
    user_id: u64,
    owner: &str,
    name: &str,
    number: u64,
    body: &Value,
) -> Answer {
    let key = repo_key(owner, name);
    let Some(head) = state
        .repo(owner, name)
        .filter(|repo| repo.pulls.contains_key(&number))
        .and_then(|repo| git_ref_sha(&repo.bare_path, &format!("refs/pull/{number}/head")))
    else {
        return not_found();
    };
    let review_state = match body.get("event").and_then(Value::as_str) {
        Some("APPROVE") => "APPROVED",
        Some("REQUEST_CHANGES") => "CHANGES_REQUESTED",
        Some("COMMENT") => "COMMENTED",
        // Without an event the review stays pending, unsubmitted.
        None => "PENDING",
        Some(_) => return refused("Event is not included in the list"),
    };
    if let Some(refusal) = review_refusal(state, &key, number, user_id, review_state) {
        return refused(refusal);
    }
    let text = body.get("body").and_then(Value::as_str).unwrap_or_default();
    if review_state == "CHANGES_REQUESTED" && text.trim().is_empty() {
        return refused("Review Changes requested reviews require a body");
    }
    let id = state.new_id();
    let review = FakeReview {
        id,
        repo_key: key,
        pull_number: number,
        user_id,
        body: text.to_owned(),
        state: review_state.to_owned(),
        commit_id: head,
        submitted_at: now(),
    };
    state.reviews.insert(id, review.clone());
    state.touch_issue(owner, name, number);
    let repo = state.repo(owner, name).expect("checked");
    answer(StatusCode::OK, shapes::review(urls, state, repo, &review))
}

fn reaction_json(urls: &Urls, state: &FakeState, reaction: &FakeReaction) -> Value {
    json!({
        "id": reaction.id,
        "node_id": shapes::node_id("REA", reaction.id),
        "user": shapes::user(urls, state.user(reaction.user_id)),
        "content": reaction.content,
        "created_at": shapes::time(&reaction.created_at)
    })
}

/// `POST /repos/{owner}/{repo}/issues/comments/{id}/reactions`.
pub fn create_reaction(
    urls: &Urls,
    state: &mut FakeState,
    user_id: u64,
    owner: &str,
    name: &str,
    comment_id: u64,
    body: &Value,
) -> Answer {
    let key = repo_key(owner, name);
    if state
        .comments
        .get(&comment_id)
        .is_none_or(|comment| comment.repo_key != key)
    {
        return not_found();
    }
    let Some(content) = body
        .get("content")
        .and_then(Value::as_str)
        .filter(|content| REACTIONS.contains(content))
    else {
        return answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({
                "message": "Validation Failed",
                "errors": [{ "resource": "Reaction", "code": "invalid", "field": "content" }],
                "documentation_url": "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment",
                "status": "422"
            }),
        );
    };
    if let Some(given) = state.reactions.values().find(|reaction| {
        reaction.comment_id == comment_id
            && reaction.user_id == user_id
            && reaction.content == content
    }) {
        return answer(StatusCode::OK, reaction_json(urls, state, given));
    }
    let id = state.new_id();
    let reaction = FakeReaction {
        id,
        comment_id,
        user_id,
        content: content.to_owned(),
        created_at: now(),
    };
    state.reactions.insert(id, reaction.clone());
    answer(StatusCode::CREATED, reaction_json(urls, state, &reaction))
}

/// `GET /repos/{owner}/{repo}/issues/comments/{id}/reactions`, every page's items.
pub fn reactions_of(
    urls: &Urls,
    state: &FakeState,
    owner: &str,
    name: &str,
    comment_id: u64,
) -> Option<Vec<Value>> {
    let key = repo_key(owner, name);
    state
        .comments
        .get(&comment_id)
        .filter(|comment| comment.repo_key == key)?;
    Some(
        state
            .reactions
            .values()
            .filter(|reaction| reaction.comment_id == comment_id)
            .map(|reaction| reaction_json(urls, state, reaction))
            .collect(),
    )
}
