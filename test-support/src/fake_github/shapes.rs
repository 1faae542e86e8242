//! The JSON the fake answers with, shaped as GitHub's published API description says
//! (every required field, the right types, `null` only where allowed). A test checks
//! each shape against that description — except reviews, review comments and check
//! runs, whose paths the description the tests carry leaves out: those follow GitHub's
//! REST documentation.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::state::{
    FakeCheckRun, FakeComment, FakeIssue, FakePull, FakeRepo, FakeReview, FakeReviewComment,
    FakeState, FakeUser,
};

/// Where the fake's API and web pages are.
#[derive(Debug, Clone)]
pub struct Urls {
    pub api: String,
    pub web: String,
}

pub fn time(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn optional_time(at: &Option<DateTime<Utc>>) -> Value {
    at.as_ref().map(|at| json!(time(at))).unwrap_or(Value::Null)
}

pub fn node_id(kind: &str, id: u64) -> String {
    format!("{kind}_kw{id:08}")
}

/// A "Simple User".
pub fn user(urls: &Urls, user: &FakeUser) -> Value {
    let api = &urls.api;
    let login = &user.login;
    json!({
        "login": login,
        "id": user.id,
        "node_id": node_id("U", user.id),
        "avatar_url": format!("{}/avatars/{login}", urls.web),
        "gravatar_id": "",
        "url": format!("{api}/users/{login}"),
        "html_url": format!("{}/{login}", urls.web),
        "followers_url": format!("{api}/users/{login}/followers"),
        "following_url": format!("{api}/users/{login}/following{{/other_user}}"),
        "gists_url": format!("{api}/users/{login}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/users/{login}/subscriptions"),
        "organizations_url": format!("{api}/users/{login}/orgs"),
        "repos_url": format!("{api}/users/{login}/repos"),
        "events_url": format!("{api}/users/{login}/events{{/privacy}}"),
        "received_events_url": format!("{api}/users/{login}/received_events"),
        "type": if user.is_organization { "Organization" } else if user.is_bot { "Bot" } else { "User" },
        "site_admin": false,
        "user_view_type": "public"
    })
}

/// `GET /user`: the signed-in user, with the private fields.
pub fn private_user(urls: &Urls, fake_user: &FakeUser) -> Value {
    let mut value = user(urls, fake_user);
    let extra = json!({
        "name": fake_user.login,
        "company": null,
        "blog": "",
        "location": null,
        "email": null,
        "hireable": null,
        "bio": null,
        "twitter_username": null,
        "public_repos": 1,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2020-01-01T00:00:00Z",
        "private_gists": 0,
        "total_private_repos": 0,
        "owned_private_repos": 0,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": true
    });
    value
        .as_object_mut()
        .expect("an object")
        .extend(extra.as_object().expect("an object").clone());
    value
}

/// A "Repository" (also valid where a PR's head or base names its repository).
pub fn repository(urls: &Urls, state: &FakeState, repo: &FakeRepo) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let web = format!("{}/{}/{}", urls.web, repo.owner, repo.name);
    let owner = state
        .user_by_login(&repo.owner)
        .map(|owner| user(urls, owner))
        .expect("the owner is a user");
    let open_issues = repo.issues.values().filter(|i| i.state == "open").count();
    let pairs: Vec<(&str, Value)> = vec![
        ("id", json!(repo.id)),
        ("node_id", json!(node_id("R", repo.id))),
        ("name", json!(repo.name)),
        ("full_name", json!(format!("{}/{}", repo.owner, repo.name))),
        ("owner", json!(owner)),
        ("private", json!(true)),
        ("html_url", json!(web)),
        ("description", json!(null)),
        ("fork", json!(repo.fork_of.is_some())),
        ("url", json!(api)),
        (
            "archive_url",
            json!(format!("{api}/{{archive_format}}{{/ref}}")),
        ),
        ("assignees_url", json!(format!("{api}/assignees{{/user}}"))),
        ("blobs_url", json!(format!("{api}/git/blobs{{/sha}}"))),
        ("branches_url", json!(format!("{api}/branches{{/branch}}"))),
        (
            "collaborators_url",
            json!(format!("{api}/collaborators{{/collaborator}}")),
        ),
        ("comments_url", json!(format!("{api}/comments{{/number}}"))),
        ("commits_url", json!(format!("{api}/commits{{/sha}}"))),
        (
            "compare_url",
            json!(format!("{api}/compare/{{base}}...{{head}}")),
        ),
        ("contents_url", json!(format!("{api}/contents/{{+path}}"))),
        ("contributors_url", json!(format!("{api}/contributors"))),
        ("deployments_url", json!(format!("{api}/deployments"))),
        ("downloads_url", json!(format!("{api}/downloads"))),
        ("events_url", json!(format!("{api}/events"))),
        ("forks_url", json!(format!("{api}/forks"))),
        (
            "git_commits_url",
            json!(format!("{api}/git/commits{{/sha}}")),
        ),
        ("git_refs_url", json!(format!("{api}/git/refs{{/sha}}"))),
        ("git_tags_url", json!(format!("{api}/git/tags{{/sha}}"))),
        (
            "git_url",
            json!(format!(
                "git:{}/{}/{}.git",
                urls.web
                    .trim_start_matches("http:")
                    .trim_start_matches("https:"),
                repo.owner,
                repo.name
            )),
        ),
        ("hooks_url", json!(format!("{api}/hooks"))),
        (
            "issue_comment_url",
            json!(format!("{api}/issues/comments{{/number}}")),
        ),
        (
            "issue_events_url",
            json!(format!("{api}/issues/events{{/number}}")),
        ),
        ("issues_url", json!(format!("{api}/issues{{/number}}"))),
        ("keys_url", json!(format!("{api}/keys{{/key_id}}"))),
        ("labels_url", json!(format!("{api}/labels{{/name}}"))),
        ("languages_url", json!(format!("{api}/languages"))),
        ("merges_url", json!(format!("{api}/merges"))),
        (
            "milestones_url",
            json!(format!("{api}/milestones{{/number}}")),
        ),
        (
            "notifications_url",
            json!(format!("{api}/notifications{{?since,all,participating}}")),
        ),
        ("pulls_url", json!(format!("{api}/pulls{{/number}}"))),
        ("releases_url", json!(format!("{api}/releases{{/id}}"))),
        (
            "ssh_url",
            json!(format!("git@fake-github:{}/{}.git", repo.owner, repo.name)),
        ),
        ("stargazers_url", json!(format!("{api}/stargazers"))),
        ("statuses_url", json!(format!("{api}/statuses/{{sha}}"))),
        ("subscribers_url", json!(format!("{api}/subscribers"))),
        ("subscription_url", json!(format!("{api}/subscription"))),
        ("tags_url", json!(format!("{api}/tags"))),
        ("teams_url", json!(format!("{api}/teams"))),
        ("trees_url", json!(format!("{api}/git/trees{{/sha}}"))),
        ("clone_url", json!(format!("{web}.git"))),
        ("mirror_url", json!(null)),
        ("svn_url", json!(web)),
        ("homepage", json!(null)),
        ("language", json!(null)),
        ("forks_count", json!(0)),
        ("forks", json!(0)),
        ("stargazers_count", json!(0)),
        ("watchers_count", json!(0)),
        ("watchers", json!(0)),
        ("size", json!(1)),
        ("default_branch", json!(repo.default_branch)),
        ("open_issues_count", json!(open_issues)),
        ("open_issues", json!(open_issues)),
        ("is_template", json!(false)),
        ("topics", json!([])),
        ("has_issues", json!(repo.has_issues)),
        ("has_projects", json!(false)),
        ("has_wiki", json!(false)),
        ("has_pages", json!(false)),
        ("has_downloads", json!(true)),
        ("has_discussions", json!(false)),
        ("archived", json!(false)),
        ("disabled", json!(false)),
        ("visibility", json!("private")),
        ("pushed_at", json!(time(&repo.created_at))),
        ("created_at", json!(time(&repo.created_at))),
        ("updated_at", json!(time(&repo.created_at))),
        ("license", json!(null)),
        ("network_count", json!(0)),
        ("subscribers_count", json!(1)),
    ];
    Value::Object(
        pairs
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

pub fn label(urls: &Urls, repo: &FakeRepo, name: &str, id: u64) -> Value {
    json!({
        "id": id,
        "node_id": node_id("LA", id),
        "url": format!("{}/repos/{}/{}/labels/{}", urls.api, repo.owner, repo.name, name.replace(' ', "%20")),
        "name": name,
        "description": null,
        "color": "0e8a16",
        "default": false
    })
}

pub fn labels(urls: &Urls, repo: &FakeRepo, names: &[String]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|name| {
                label(
                    urls,
                    repo,
                    name,
                    repo.labels.get(name).copied().unwrap_or(1),
                )
            })
            .collect(),
    )
}

/// An "Issue" (also the issue side of a PR, with its `pull_request` field).
pub fn issue(urls: &Urls, state: &FakeState, repo: &FakeRepo, issue: &FakeIssue) -> Value {
    let api = format!(
        "{}/repos/{}/{}/issues/{}",
        urls.api, repo.owner, repo.name, issue.number
    );
    let kind = if issue.is_pull { "pull" } else { "issues" };
    let html = format!(
        "{}/{}/{}/{kind}/{}",
        urls.web, repo.owner, repo.name, issue.number
    );
    let comments = state
        .comments_of(
            &super::state::repo_key(&repo.owner, &repo.name),
            issue.number,
        )
        .len();
    let mut value = json!({
        "id": issue.id,
        "node_id": node_id("I", issue.id),
        "url": api,
        "repository_url": format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name),
        "labels_url": format!("{api}/labels{{/name}}"),
        "comments_url": format!("{api}/comments"),
        "events_url": format!("{api}/events"),
        "html_url": html,
        "number": issue.number,
        "state": issue.state,
        "state_reason": null,
        "title": issue.title,
        "body": issue.body,
        "user": user(urls, state.user(issue.user_id)),
        "labels": labels(urls, repo, &issue.labels),
        "assignee": null,
        "assignees": [],
        "milestone": null,
        "locked": false,
        "active_lock_reason": null,
        "comments": comments,
        "closed_at": optional_time(&issue.closed_at),
        "created_at": time(&issue.created_at),
        "updated_at": time(&issue.updated_at),
        "author_association": "OWNER"
    });
    if issue.is_pull {
        let merged_at = repo
            .pulls
            .get(&issue.number)
            .and_then(|pull| pull.merged_at);
        value["pull_request"] = json!({
            "url": format!("{}/repos/{}/{}/pulls/{}", urls.api, repo.owner, repo.name, issue.number),
            "html_url": html,
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "merged_at": optional_time(&merged_at)
        });
    }
    value
}

/// An "Issue Comment".
pub fn comment(urls: &Urls, state: &FakeState, repo: &FakeRepo, comment: &FakeComment) -> Value {
    let issue = repo.issues.get(&comment.issue_number);
    let kind = if issue.is_some_and(|issue| issue.is_pull) {
        "pull"
    } else {
        "issues"
    };
    json!({
        "id": comment.id,
        "node_id": node_id("IC", comment.id),
        "url": format!("{}/repos/{}/{}/issues/comments/{}", urls.api, repo.owner, repo.name, comment.id),
        "html_url": format!("{}/{}/{}/{kind}/{}#issuecomment-{}", urls.web, repo.owner, repo.name, comment.issue_number, comment.id),
        "issue_url": format!("{}/repos/{}/{}/issues/{}", urls.api, repo.owner, repo.name, comment.issue_number),
        "body": comment.body,
        "user": user(urls, state.user(comment.user_id)),
        "created_at": time(&comment.created_at),
        "updated_at": time(&comment.updated_at),
        "author_association": "OWNER"
    })
}

/// The signed-in user's permissions on `repo`, as GitHub adds them for them.
pub fn permissions(state: &FakeState, repo: &FakeRepo, user_id: u64) -> Value {
    let account = state.user_by_login(&repo.owner);
    // An organization's repositories: its admins administer them, its members push.
    let membership = account.and_then(|org| {
        state
            .memberships
            .iter()
            .find(|membership| membership.organization == org.id && membership.user == user_id)
    });
    let owner = account.is_some_and(|owner| owner.id == user_id)
        || membership.is_some_and(|membership| membership.role == "admin");
    let push = owner || membership.is_some() || repo.collaborators.contains(&user_id);
    json!({
        "admin": owner,
        "maintain": owner,
        "push": push,
        "triage": push,
        "pull": true
    })
}

/// A "Pull Request" (`full` adds the fields only the single-PR answer has).
#[allow(clippy::too_many_arguments)]
pub fn pull(
    urls: &Urls,
    state: &FakeState,
    repo: &FakeRepo,
    pull: &FakePull,
    issue: &FakeIssue,
    head_sha: &str,
    base_sha: &str,
    full: bool,
) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let html = format!(
        "{}/{}/{}/pull/{}",
        urls.web, repo.owner, repo.name, pull.number
    );
    let author = user(urls, state.user(issue.user_id));
    let repository = repository(urls, state, repo);
    let head_repository = pull
        .head_fork
        .as_ref()
        .and_then(|key| state.repos.get(key))
        .map(|fork| (fork.owner.clone(), self::repository(urls, state, fork)))
        .unwrap_or_else(|| (repo.owner.clone(), repository.clone()));
    let branch = |name: &str, sha: &str, (owner, repository): &(String, Value)| {
        json!({
            "label": format!("{owner}:{name}"),
            "ref": name,
            "sha": sha,
            "user": repository["owner"].clone(),
            "repo": repository.clone()
        })
    };
    let base_repository = (repo.owner.clone(), repository.clone());
    let number = pull.number;
    let links = json!({
        "self": { "href": format!("{api}/pulls/{number}") },
        "html": { "href": html },
        "issue": { "href": format!("{api}/issues/{number}") },
        "comments": { "href": format!("{api}/issues/{number}/comments") },
        "review_comments": { "href": format!("{api}/pulls/{number}/comments") },
        "review_comment": { "href": format!("{api}/pulls/comments{{/number}}") },
        "commits": { "href": format!("{api}/pulls/{number}/commits") },
        "statuses": { "href": format!("{api}/statuses/{head_sha}") }
    });
    let mut value = json!({
        "id": pull.id,
        "node_id": node_id("PR", pull.id),
        "url": format!("{api}/pulls/{number}"),
        "html_url": html,
        "diff_url": format!("{html}.diff"),
        "patch_url": format!("{html}.patch"),
        "issue_url": format!("{api}/issues/{number}"),
        "commits_url": format!("{api}/pulls/{number}/commits"),
        "review_comments_url": format!("{api}/pulls/{number}/comments"),
        "review_comment_url": format!("{api}/pulls/comments{{/number}}"),
        "comments_url": format!("{api}/issues/{number}/comments"),
        "statuses_url": format!("{api}/statuses/{head_sha}"),
        "number": number,
        "state": issue.state,
        "locked": false,
        "title": issue.title,
        "user": author,
        "body": issue.body,
        "labels": labels(urls, repo, &issue.labels),
        "milestone": null,
        "active_lock_reason": null,
        "created_at": time(&issue.created_at),
        "updated_at": time(&issue.updated_at),
        "closed_at": optional_time(&issue.closed_at),
        "merged_at": optional_time(&pull.merged_at),
        "merge_commit_sha": pull.merge_commit_sha,
        "assignee": null,
        "assignees": [],
        "requested_reviewers": pull
            .requested_reviewers
            .iter()
            .map(|id| user(urls, state.user(*id)))
            .collect::<Vec<_>>(),
        "requested_teams": pull
            .requested_teams
            .iter()
            .map(|slug| json!({ "slug": slug, "name": slug }))
            .collect::<Vec<_>>(),
        "head": branch(&pull.head, head_sha, &head_repository),
        "base": branch(&pull.base, base_sha, &base_repository),
        "_links": links,
        "author_association": "OWNER",
        "auto_merge": null,
        "draft": pull.draft
    });
    if full {
        let extra = json!({
            "merged": pull.merged_at.is_some(),
            "mergeable": null,
            "rebaseable": null,
            "mergeable_state": "unknown",
            "merged_by": null,
            "comments": state.comments_of(&super::state::repo_key(&repo.owner, &repo.name), number).len(),
            "review_comments": 0,
            "maintainer_can_modify": false,
            "commits": 1,
            "additions": 0,
            "deletions": 0,
            "changed_files": 0
        });
        value
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
    }
    value
}

/// A "Branch With Protection".
pub fn branch(urls: &Urls, state: &FakeState, repo: &FakeRepo, name: &str, sha: &str) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let owner = state
        .user_by_login(&repo.owner)
        .expect("the owner is a user");
    json!({
        "name": name,
        "commit": {
            "url": format!("{api}/commits/{sha}"),
            "sha": sha,
            "node_id": node_id("C", 1),
            "html_url": format!("{}/{}/{}/commit/{sha}", urls.web, repo.owner, repo.name),
            "comments_url": format!("{api}/commits/{sha}/comments"),
            "commit": {
                "url": format!("{api}/git/commits/{sha}"),
                "author": null,
                "committer": null,
                "message": "commit",
                "comment_count": 0,
                "tree": { "sha": sha, "url": format!("{api}/git/trees/{sha}") }
            },
            "author": user(urls, owner),
            "committer": user(urls, owner),
            "parents": []
        },
        "_links": {
            "html": format!("{}/{}/{}/tree/{name}", urls.web, repo.owner, repo.name),
            "self": format!("{api}/branches/{name}")
        },
        "protected": repo.protected_branches.iter().any(|protected| protected == name),
        "protection": { "enabled": repo.protected_branches.iter().any(|protected| protected == name), "required_status_checks": { "enforcement_level": "off", "contexts": [], "checks": [] } },
        "protection_url": format!("{api}/branches/{name}/protection")
    })
}

/// A "Git Reference".
pub fn git_ref(urls: &Urls, repo: &FakeRepo, reference: &str, sha: &str) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    json!({
        "ref": format!("refs/{reference}"),
        "node_id": node_id("REF", 1),
        "url": format!("{api}/git/refs/{reference}"),
        "object": { "type": "commit", "sha": sha, "url": format!("{api}/git/commits/{sha}") }
    })
}

/// A "Rate Limit Overview".
pub fn rate_limit(state: &FakeState) -> Value {
    let rate = &state.rate_limit;
    let core = json!({
        "limit": rate.limit,
        "remaining": rate.limit.saturating_sub(rate.used),
        "reset": rate.reset_at.timestamp(),
        "used": rate.used
    });
    json!({ "resources": { "core": core.clone(), "search": core.clone() }, "rate": core })
}

/// A "Pull Request Review".
pub fn review(urls: &Urls, state: &FakeState, repo: &FakeRepo, review: &FakeReview) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let html = format!(
        "{}/{}/{}/pull/{}#pullrequestreview-{}",
        urls.web, repo.owner, repo.name, review.pull_number, review.id
    );
    json!({
        "id": review.id,
        "node_id": node_id("PRR", review.id),
        "user": user(urls, state.user(review.user_id)),
        "body": review.body,
        "state": review.state,
        "html_url": html,
        "pull_request_url": format!("{api}/pulls/{}", review.pull_number),
        "author_association": "OWNER",
        "_links": {
            "html": { "href": html },
            "pull_request": { "href": format!("{api}/pulls/{}", review.pull_number) }
        },
        "submitted_at": time(&review.submitted_at),
        "commit_id": review.commit_id
    })
}

/// A "Pull Request Review Comment".
pub fn review_comment(
    urls: &Urls,
    state: &FakeState,
    repo: &FakeRepo,
    comment: &FakeReviewComment,
) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let html = format!(
        "{}/{}/{}/pull/{}#discussion_r{}",
        urls.web, repo.owner, repo.name, comment.pull_number, comment.id
    );
    json!({
        "url": format!("{api}/pulls/comments/{}", comment.id),
        "pull_request_review_id": null,
        "id": comment.id,
        "node_id": node_id("PRRC", comment.id),
        "diff_hunk": "@@ -1 +1 @@",
        "path": comment.path,
        "commit_id": comment.commit_id,
        "original_commit_id": comment.commit_id,
        "user": user(urls, state.user(comment.user_id)),
        "body": comment.body,
        "created_at": time(&comment.created_at),
        "updated_at": time(&comment.created_at),
        "html_url": html,
        "pull_request_url": format!("{api}/pulls/{}", comment.pull_number),
        "author_association": "OWNER",
        "_links": {
            "self": { "href": format!("{api}/pulls/comments/{}", comment.id) },
            "html": { "href": html },
            "pull_request": { "href": format!("{api}/pulls/{}", comment.pull_number) }
        },
        "line": comment.line,
        "original_line": comment.line,
        "side": "RIGHT"
    })
}

/// A "CheckRun".
pub fn check_run(urls: &Urls, repo: &FakeRepo, run: &FakeCheckRun) -> Value {
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let html = format!("{}/{}/{}/runs/{}", urls.web, repo.owner, repo.name, run.id);
    json!({
        "id": run.id,
        "head_sha": run.head_sha,
        "node_id": node_id("CR", run.id),
        "external_id": "",
        "url": format!("{api}/check-runs/{}", run.id),
        "html_url": html,
        "details_url": html,
        "status": run.status,
        "conclusion": run.conclusion,
        "started_at": time(&run.started_at),
        "completed_at": optional_time(&run.completed_at),
        "output": {
            "title": run.title,
            "summary": run.summary,
            "text": null,
            "annotations_count": 0,
            "annotations_url": format!("{api}/check-runs/{}/annotations", run.id)
        },
        "name": run.name,
        "check_suite": { "id": run.id + 1 },
        "app": {
            "id": 15368,
            "slug": run.app_slug,
            "node_id": node_id("A", 15368),
            "name": run.app_slug,
            "description": "",
            "external_url": urls.web,
            "html_url": format!("{}/apps/{}", urls.web, run.app_slug),
            "created_at": "2018-07-30T09:30:17Z",
            "updated_at": "2024-04-10T20:33:16Z",
            "permissions": {},
            "events": []
        },
        "pull_requests": []
    })
}
