//! The fake's HTTP side: one handler that authenticates, applies injected faults,
//! dispatches the REST paths Handoff uses (and the device-flow and git paths), and
//! answers as GitHub does: ETags and 304s, rate-limit headers, `Link` pagination.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use super::bare_repository::{git_ref_sha, git_sha, merges_cleanly, refresh_pull_heads, token_of};
use super::faults::{take_fault, Fault};
use super::shapes;

mod check_rollup;
mod reactions_and_reviews;
use super::state::{now, repo_key, FakeComment, FakeIssue, FakeState, NewPull};
use super::{forks, git_http, pull_commits, RequestRecord, Shared};
pub use reactions_and_reviews::review_refusal;

/// GitHub's limit on a comment body, in characters.
const COMMENT_LIMIT: usize = 65_536;

type Answer = (StatusCode, Value, HeaderMap);

fn answer(status: StatusCode, body: Value) -> Answer {
    (status, body, HeaderMap::new())
}

fn message(status: StatusCode, text: &str) -> Answer {
    answer(
        status,
        json!({ "message": text, "documentation_url": "https://docs.github.com/rest", "status": status.as_u16().to_string() }),
    )
}

/// What git over HTTP gets instead of its answer: a status and a line of text.
fn git_error(code: u16) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_GATEWAY))
        .header("content-type", "text/plain")
        .body(Body::from(format!("fake GitHub: error {code}\n")))
        .expect("an error answer")
}

fn not_found() -> Answer {
    message(StatusCode::NOT_FOUND, "Not Found")
}

fn validation_failed(text: &str) -> Answer {
    answer(
        StatusCode::UNPROCESSABLE_ENTITY,
        json!({
            "message": "Validation Failed",
            "errors": [{ "resource": "Issue", "code": "custom", "message": text }],
            "documentation_url": "https://docs.github.com/rest",
            "status": "422"
        }),
    )
}

/// The strings of the list `key` of a request's body (none when it is not a list).
fn strings_in(body: &Value, key: &str) -> Vec<String> {
    body.get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' if index + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        index += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        index += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                index += 1;
            }
            byte => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query_map(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

/// The `since` parameter of a listing (an ISO 8601 time), if given.
fn since_of(query: &BTreeMap<String, String>) -> Option<chrono::DateTime<chrono::Utc>> {
    query
        .get("since")
        .and_then(|since| chrono::DateTime::parse_from_rfc3339(since).ok())
        .map(|since| since.with_timezone(&chrono::Utc))
}

/// One page of `items` and the `Link` header for the others.
fn paginate(
    shared: &Shared,
    path: &str,
    query: &BTreeMap<String, String>,
    items: Vec<Value>,
) -> Answer {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let page = query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let last = items.len().div_ceil(per_page).max(1);
    let chunk: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut headers = HeaderMap::new();
    let link_to = |number: usize| {
        let mut parameters = query.clone();
        parameters.insert("page".to_owned(), number.to_string());
        let query: Vec<String> = parameters
            .iter()
            .map(|(key, value)| format!("{key}={}", value.replace(' ', "%20").replace(',', "%2C")))
            .collect();
        format!("<{}{path}?{}>", shared.urls.api, query.join("&"))
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", link_to(page - 1)));
        links.push(format!("{}; rel=\"first\"", link_to(1)));
    }
    if page < last {
        links.push(format!("{}; rel=\"next\"", link_to(page + 1)));
        links.push(format!("{}; rel=\"last\"", link_to(last)));
    }
    if !links.is_empty() {
        headers.insert(
            "link",
            HeaderValue::from_str(&links.join(", ")).expect("a header"),
        );
    }
    (StatusCode::OK, Value::Array(chunk), headers)
}

fn pull_json(
    shared: &Shared,
    state: &FakeState,
    owner: &str,
    name: &str,
    number: u64,
    full: bool,
) -> Option<Value> {
    let repo = state.repo(owner, name)?;
    let pull = repo.pulls.get(&number)?;
    let issue = repo.issues.get(&number)?;
    // GitHub keeps every PR's head as refs/pull/N/head of the base repository.
    let head_sha = git_ref_sha(&repo.bare_path, &format!("refs/pull/{number}/head"))
        .or_else(|| git_sha(state, owner, name, &pull.head))
        .unwrap_or_else(|| "0".repeat(40));
    let base_sha = git_sha(state, owner, name, &pull.base).unwrap_or_else(|| "0".repeat(40));
    let mut value = shapes::pull(
        &shared.urls,
        state,
        repo,
        pull,
        issue,
        &head_sha,
        &base_sha,
        full,
    );
    // The one-PR answer says whether it merges cleanly into its base, as GitHub does.
    if full && pull.merged_at.is_none() && issue.state == "open" {
        let mergeable = merges_cleanly(&repo.bare_path, &base_sha, &head_sha);
        value["mergeable"] = json!(mergeable);
        value["mergeable_state"] = json!(match mergeable {
            Some(true) => "clean",
            Some(false) => "dirty",
            None => "unknown",
        });
    }
    Some(value)
}

/// The repository and the number of PR `number` (as the path has it), if it exists.
fn pull_of<'s>(
    state: &'s FakeState,
    owner: &str,
    name: &str,
    number: &str,
) -> Option<(&'s super::state::FakeRepo, u64)> {
    let repo = state.repo(owner, name)?;
    let number = number.parse::<u64>().ok()?;
    repo.pulls.contains_key(&number).then_some((repo, number))
}

/// Where job logs are downloaded from (GitHub's logs redirect points elsewhere).
const JOB_LOG_DOWNLOADS: &str = "/_downloads/job-logs/";

/// Handles one REST request for a signed-in `user_id`.
fn route(
    shared: &Shared,
    state: &mut FakeState,
    user_id: u64,
    method: &Method,
    path: &str,
    query: &BTreeMap<String, String>,
    body: &Value,
) -> Answer {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let urls = &shared.urls;
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["user"]) => {
            let user = state.user(user_id);
            let mut headers = HeaderMap::new();
            // GitHub names a classic token's scopes on every answer; fine-grained
            // tokens get no such header.
            if let Some(scopes) = user
                .token_scopes
                .as_deref()
                .and_then(|scopes| HeaderValue::from_str(scopes).ok())
            {
                headers.insert("x-oauth-scopes", scopes);
            }
            (StatusCode::OK, shapes::private_user(urls, user), headers)
        }
        ("GET", ["rate_limit"]) => answer(StatusCode::OK, shapes::rate_limit(state)),
        ("GET", ["user", "repos"]) => {
            let login = state.user(user_id).login.clone();
            let items: Vec<Value> = state
                .repos
                .values()
                .filter(|repo| {
                    repo.owner.eq_ignore_ascii_case(&login) || repo.collaborators.contains(&user_id)
                })
                .map(|repo| {
                    let mut value = shapes::repository(urls, state, repo);
                    value["permissions"] = shapes::permissions(state, repo, user_id);
                    value
                })
                .collect();
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name]) => match state.repo(owner, name) {
            Some(repo) => {
                let mut value = shapes::repository(urls, state, repo);
                value["permissions"] = shapes::permissions(state, repo, user_id);
                // A fork names the repository it was made from, and the first of them.
                let mut parent = repo.fork_of.as_ref().and_then(|key| state.repos.get(key));
                if let Some(first) = parent {
                    value["parent"] = shapes::repository(urls, state, first);
                }
                while let Some(source) = parent {
                    value["source"] = shapes::repository(urls, state, source);
                    parent = source.fork_of.as_ref().and_then(|key| state.repos.get(key));
                }
                answer(StatusCode::OK, value)
            }
            None => not_found(),
        },
        ("POST", ["repos", owner, name, "forks"]) => {
            let organization = body.get("organization").and_then(Value::as_str);
            match forks::create_fork(&shared.git_root, state, user_id, owner, name, organization) {
                Ok(key) => {
                    let repo = state.repos.get(&key).expect("the fork");
                    let mut value = shapes::repository(urls, state, repo);
                    value["permissions"] = shapes::permissions(state, repo, user_id);
                    if let Some(parent) = repo.fork_of.as_ref().and_then(|key| state.repos.get(key))
                    {
                        value["parent"] = shapes::repository(urls, state, parent);
                        value["source"] = shapes::repository(urls, state, parent);
                    }
                    answer(StatusCode::ACCEPTED, value)
                }
                Err(forks::ForkRefusal::NoRepository) => not_found(),
                Err(forks::ForkRefusal::NoOrganization) => answer(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!({
                        "message": "Validation Failed",
                        "errors": [{ "resource": "Fork", "code": "invalid", "field": "organization" }],
                        "documentation_url": "https://docs.github.com/rest/repos/forks#create-a-fork",
                        "status": "422"
                    }),
                ),
                Err(forks::ForkRefusal::MayNotCreateIn(org)) => message(
                    StatusCode::FORBIDDEN,
                    &format!("You do not have permission to create repositories in {org}"),
                ),
            }
        }
        ("GET", ["repos", owner, name, "forks"]) => {
            let key = repo_key(owner, name);
            if !state.repos.contains_key(&key) {
                return not_found();
            }
            let items: Vec<Value> = state
                .repos
                .values()
                .filter(|repo| repo.fork_of.as_deref() == Some(key.as_str()))
                .map(|repo| shapes::repository(urls, state, repo))
                .collect();
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name, "pulls", number, "commits"]) => {
            match number
                .parse::<u64>()
                .ok()
                .and_then(|number| pull_commits::pull_commits(urls, state, owner, name, number))
            {
                Some(items) => paginate(shared, path, query, items),
                None => not_found(),
            }
        }
        ("GET", ["user", "memberships", "orgs"]) => {
            let items = forks::memberships_of(urls, state, user_id);
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name, "branches", branch @ ..]) => {
            if forks::still_copying(state, &repo_key(owner, name)) {
                return message(StatusCode::NOT_FOUND, "Branch not found");
            }
            let branch = percent_decode(&branch.join("/"));
            match (
                state.repo(owner, name),
                git_sha(state, owner, name, &branch),
            ) {
                (Some(repo), Some(sha)) => answer(
                    StatusCode::OK,
                    shapes::branch(urls, state, repo, &branch, &sha),
                ),
                _ => message(StatusCode::NOT_FOUND, "Branch not found"),
            }
        }
        // The rules of active rulesets that apply to a branch (existing or not), as
        // GitHub's REST documentation ("Get rules for a branch") describes them.
        ("GET", ["repos", owner, name, "rules", "branches", branch @ ..]) => {
            let branch = percent_decode(&branch.join("/"));
            match state.repo(owner, name) {
                Some(repo) => {
                    let rules: Vec<Value> = repo
                        .branch_rules
                        .iter()
                        .filter(|(pattern, _)| match pattern.strip_suffix('*') {
                            Some(prefix) => branch.starts_with(prefix),
                            None => *pattern == branch,
                        })
                        .map(|(_, rule)| rule.clone())
                        .collect();
                    paginate(shared, path, query, rules)
                }
                None => not_found(),
            }
        }
        ("GET", ["repos", owner, name, "git", "ref", reference @ ..]) => {
            let reference = percent_decode(&reference.join("/"));
            let sha = reference
                .strip_prefix("heads/")
                .and_then(|branch| git_sha(state, owner, name, branch));
            match (state.repo(owner, name), sha) {
                (Some(repo), Some(sha)) => answer(
                    StatusCode::OK,
                    shapes::git_ref(urls, repo, &reference, &sha),
                ),
                _ => not_found(),
            }
        }
        ("GET", ["repos", owner, name, "issues"]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let wanted_state = query.get("state").map(String::as_str).unwrap_or("open");
            let labels: Vec<&str> = query
                .get("labels")
                .map(|labels| labels.split(',').filter(|l| !l.is_empty()).collect())
                .unwrap_or_default();
            let since = since_of(query);
            let mut issues: Vec<&FakeIssue> = repo
                .issues
                .values()
                .rev()
                .filter(|issue| wanted_state == "all" || issue.state == wanted_state)
                .filter(|issue| {
                    labels
                        .iter()
                        .all(|label| issue.labels.iter().any(|l| l == label))
                })
                .filter(|issue| since.is_none_or(|since| issue.updated_at >= since))
                .collect();
            if query.get("sort").map(String::as_str) == Some("updated") {
                issues.sort_by_key(|issue| (issue.updated_at, issue.number));
                if query.get("direction").map(String::as_str) != Some("asc") {
                    issues.reverse();
                }
            }
            let items: Vec<Value> = issues
                .into_iter()
                .map(|issue| shapes::issue(urls, state, repo, issue))
                .collect();
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name, "issues", "comments"]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let key = repo_key(owner, name);
            let since = since_of(query);
            let mut comments: Vec<&FakeComment> = state
                .comments
                .values()
                .filter(|comment| comment.repo_key == key)
                .filter(|comment| since.is_none_or(|since| comment.updated_at >= since))
                .collect();
            let by_update = query.get("sort").map(String::as_str) == Some("updated");
            comments.sort_by_key(|comment| {
                (
                    if by_update {
                        comment.updated_at
                    } else {
                        comment.created_at
                    },
                    comment.id,
                )
            });
            if query.get("direction").map(String::as_str) == Some("desc") {
                comments.reverse();
            }
            let items: Vec<Value> = comments
                .into_iter()
                .map(|comment| shapes::comment(urls, state, repo, comment))
                .collect();
            paginate(shared, path, query, items)
        }
        ("POST", ["repos", owner, name, "issues", number, "labels"]) => {
            let Some(number) = number.parse::<u64>().ok() else {
                return not_found();
            };
            if body.get("labels").and_then(Value::as_array).is_none() {
                return validation_failed("labels is missing");
            }
            let wanted = strings_in(body, "labels");
            let label_ids: Vec<u64> = wanted.iter().map(|_| state.new_id()).collect();
            let Some(repo) = state.repo_mut(owner, name) else {
                return not_found();
            };
            // GitHub makes the labels that do not exist yet.
            for (label, id) in wanted.iter().zip(label_ids) {
                repo.labels.entry(label.clone()).or_insert(id);
            }
            let Some(issue) = repo.issues.get_mut(&number) else {
                return not_found();
            };
            for label in wanted {
                if !issue.labels.contains(&label) {
                    issue.labels.push(label);
                }
            }
            issue.updated_at = now();
            let names = issue.labels.clone();
            let repo = state.repo(owner, name).expect("the repository");
            answer(StatusCode::OK, shapes::labels(urls, repo, &names))
        }
        ("POST", ["repos", owner, name, "pulls", number, "requested_reviewers"]) => {
            let Some((repo, number)) = pull_of(state, owner, name, number) else {
                return not_found();
            };
            let author = repo.issues[&number].user_id;
            let collaborators: Vec<u64> = repo.collaborators.clone();
            let repo_owner = repo.owner.clone();
            let logins: Vec<String> = strings_in(body, "reviewers");
            let teams: Vec<String> = strings_in(body, "team_reviewers");
            let mut ids = Vec::new();
            for login in &logins {
                let Some(user) = state.user_by_login(login) else {
                    return validation_failed(&format!(
                        "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the {owner}/{name} repository."
                    ));
                };
                if user.id == author {
                    return validation_failed(
                        "Review cannot be requested from pull request author.",
                    );
                }
                let is_collaborator = collaborators.contains(&user.id)
                    || user.login.eq_ignore_ascii_case(&repo_owner);
                if !is_collaborator {
                    return validation_failed(&format!(
                        "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the {owner}/{name} repository."
                    ));
                }
                ids.push(user.id);
            }
            let repo = state.repo_mut(owner, name).expect("the repository");
            let pull = repo.pulls.get_mut(&number).expect("the PR");
            for id in ids {
                if !pull.requested_reviewers.contains(&id) {
                    pull.requested_reviewers.push(id);
                }
            }
            for team in teams {
                if !pull.requested_teams.contains(&team) {
                    pull.requested_teams.push(team);
                }
            }
            match pull_json(shared, state, owner, name, number, true) {
                Some(pull) => answer(StatusCode::CREATED, pull),
                None => not_found(),
            }
        }
        ("POST", ["repos", owner, name, "issues"]) => {
            let Some(title) = body.get("title").and_then(Value::as_str) else {
                return validation_failed("title is missing");
            };
            let id = state.new_id();
            let labels = strings_in(body, "labels");
            for label in &labels {
                let label_id = state.new_id();
                if let Some(repo) = state.repo_mut(owner, name) {
                    repo.labels.entry(label.clone()).or_insert(label_id);
                }
            }
            let Some(repo) = state.repo_mut(owner, name) else {
                return not_found();
            };
            let number = repo.next_number;
            repo.next_number += 1;
            let at = now();
            repo.issues.insert(
                number,
                FakeIssue {
                    id,
                    number,
                    title: title.to_owned(),
                    body: body.get("body").and_then(Value::as_str).map(str::to_owned),
                    user_id,
                    labels,
                    state: "open".to_owned(),
                    created_at: at,
                    updated_at: at,
                    closed_at: None,
                    is_pull: false,
                },
            );
            let repo = state.repo(owner, name).expect("just used");
            answer(
                StatusCode::CREATED,
                shapes::issue(urls, state, repo, &repo.issues[&number]),
            )
        }
        ("GET", ["repos", owner, name, "issues", "comments", id]) => {
            let Some(comment) = id
                .parse::<u64>()
                .ok()
                .and_then(|id| state.comments.get(&id))
            else {
                return not_found();
            };
            let Some(repo) = state
                .repo(owner, name)
                .filter(|repo| repo_key(&repo.owner, &repo.name) == comment.repo_key)
            else {
                return not_found();
            };
            answer(StatusCode::OK, shapes::comment(urls, state, repo, comment))
        }
        ("PATCH", ["repos", owner, name, "issues", "comments", id]) => {
            let Some(text) = body.get("body").and_then(Value::as_str) else {
                return validation_failed("body is missing");
            };
            if text.chars().count() > COMMENT_LIMIT {
                return validation_failed("Body is too long (maximum is 65536 characters)");
            }
            let key = repo_key(owner, name);
            let Some(comment) = id
                .parse::<u64>()
                .ok()
                .and_then(|id| state.comments.get_mut(&id))
                .filter(|c| c.repo_key == key)
            else {
                return not_found();
            };
            comment.body = text.to_owned();
            comment.updated_at = now();
            comment.last_edit = Some((user_id, comment.updated_at));
            let comment = comment.clone();
            let repo = state.repo(owner, name).expect("checked");
            answer(StatusCode::OK, shapes::comment(urls, state, repo, &comment))
        }
        ("DELETE", ["repos", owner, name, "issues", "comments", id]) => {
            let key = repo_key(owner, name);
            let found = id
                .parse::<u64>()
                .ok()
                .filter(|id| state.comments.get(id).is_some_and(|c| c.repo_key == key));
            match found {
                Some(id) => {
                    state.delete_comment(id);
                    answer(StatusCode::NO_CONTENT, Value::Null)
                }
                None => not_found(),
            }
        }
        ("GET", ["repos", owner, name, "issues", number]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            match number.parse::<u64>().ok().and_then(|n| repo.issues.get(&n)) {
                Some(issue) => answer(StatusCode::OK, shapes::issue(urls, state, repo, issue)),
                None => not_found(),
            }
        }
        ("PATCH", ["repos", owner, name, "issues", number]) => {
            let Some(repo) = state.repo_mut(owner, name) else {
                return not_found();
            };
            let Some(issue) = number
                .parse::<u64>()
                .ok()
                .and_then(|n| repo.issues.get_mut(&n))
            else {
                return not_found();
            };
            if let Some(title) = body.get("title").and_then(Value::as_str) {
                issue.title = title.to_owned();
            }
            if let Some(text) = body.get("body").and_then(Value::as_str) {
                issue.body = Some(text.to_owned());
            }
            if let Some(new_state) = body.get("state").and_then(Value::as_str) {
                issue.state = new_state.to_owned();
                issue.closed_at = (new_state == "closed").then(now);
            }
            issue.updated_at = now();
            let number = issue.number;
            let repo = state.repo(owner, name).expect("checked");
            answer(
                StatusCode::OK,
                shapes::issue(urls, state, repo, &repo.issues[&number]),
            )
        }
        ("GET", ["repos", owner, name, "issues", number, "comments"]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let Some(number) = number
                .parse::<u64>()
                .ok()
                .filter(|n| repo.issues.contains_key(n))
            else {
                return not_found();
            };
            let items: Vec<Value> = state
                .comments_of(&repo_key(owner, name), number)
                .into_iter()
                .map(|comment| shapes::comment(urls, state, repo, comment))
                .collect();
            paginate(shared, path, query, items)
        }
        ("POST", ["repos", owner, name, "issues", number, "comments"]) => {
            let Some(text) = body.get("body").and_then(Value::as_str) else {
                return validation_failed("body is missing");
            };
            if text.chars().count() > COMMENT_LIMIT {
                return validation_failed("Body is too long (maximum is 65536 characters)");
            }
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let Some(number) = number
                .parse::<u64>()
                .ok()
                .filter(|n| repo.issues.contains_key(n))
            else {
                return not_found();
            };
            let id = state.new_id();
            let at = now();
            let comment = FakeComment {
                id,
                repo_key: repo_key(owner, name),
                issue_number: number,
                user_id,
                body: text.to_owned(),
                created_at: at,
                updated_at: at,
                last_edit: None,
            };
            state.comments.insert(id, comment.clone());
            // A new comment moves its issue's last update, as on GitHub.
            state.touch_issue(owner, name, number);
            let repo = state.repo(owner, name).expect("checked");
            answer(
                StatusCode::CREATED,
                shapes::comment(urls, state, repo, &comment),
            )
        }
        ("POST", ["graphql"]) => graphql(urls, state, body),
        ("GET", ["repos", owner, name, "pulls"]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let wanted_state = query.get("state").map(String::as_str).unwrap_or("open");
            // `head` is `owner:branch`: the owner is the repository's for its own branches,
            // a fork's owner for a fork's.
            let head = query.get("head").map(|head| match head.split_once(':') {
                Some((head_owner, branch)) => {
                    (Some(head_owner.to_ascii_lowercase()), branch.to_owned())
                }
                None => (None, head.clone()),
            });
            let numbers: Vec<u64> = repo
                .pulls
                .values()
                .rev()
                .filter(|pull| {
                    head.as_ref().is_none_or(|(head_owner, branch)| {
                        let pull_owner = match &pull.head_fork {
                            Some(fork) => fork.split('/').next().unwrap_or_default().to_owned(),
                            None => repo.owner.to_ascii_lowercase(),
                        };
                        &pull.head == branch
                            && head_owner.as_ref().is_none_or(|owner| *owner == pull_owner)
                    })
                })
                .filter(|pull| query.get("base").is_none_or(|base| &pull.base == base))
                .filter(|pull| {
                    wanted_state == "all" || repo.issues[&pull.number].state == wanted_state
                })
                .map(|pull| pull.number)
                .collect();
            let mut numbers = numbers;
            if query.get("sort").map(String::as_str) == Some("updated") {
                numbers.sort_by_key(|number| (repo.issues[number].updated_at, *number));
                if query.get("direction").map(String::as_str) != Some("asc") {
                    numbers.reverse();
                }
            }
            let items = numbers
                .into_iter()
                .filter_map(|number| pull_json(shared, state, owner, name, number, false))
                .collect();
            paginate(shared, path, query, items)
        }
        ("POST", ["repos", owner, name, "pulls"]) => {
            let (Some(title), Some(head), Some(base)) = (
                body.get("title").and_then(Value::as_str),
                body.get("head").and_then(Value::as_str),
                body.get("base").and_then(Value::as_str),
            ) else {
                return validation_failed("title, head and base are required");
            };
            // `fork-owner:branch` (with `head_repo` when its name differs) names a fork's
            // branch; a plain branch, or the repository's own owner, the repository's.
            let (head_fork, head) = match head.split_once(':') {
                Some((head_owner, branch)) if !head_owner.eq_ignore_ascii_case(owner) => {
                    let fork = body
                        .get("head_repo")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("{head_owner}/{name}"));
                    let Some((fork_owner, fork_name)) = fork.split_once('/') else {
                        return validation_failed("head_repo is not owner/name");
                    };
                    (Some(repo_key(fork_owner, fork_name)), branch.to_owned())
                }
                Some((_, branch)) => (None, branch.to_owned()),
                None => (None, head.to_owned()),
            };
            if state.repo(owner, name).is_none() {
                return not_found();
            }
            let head_exists = match &head_fork {
                Some(fork) => {
                    let (fork_owner, fork_name) = fork.split_once('/').expect("a key");
                    git_sha(state, fork_owner, fork_name, &head).is_some()
                }
                None => git_sha(state, owner, name, &head).is_some(),
            };
            if !head_exists {
                return validation_failed(&format!("head {head} does not exist"));
            }
            if git_sha(state, owner, name, base).is_none() {
                return validation_failed(&format!("base {base} does not exist"));
            }
            let repo = state.repo(owner, name).expect("checked");
            let duplicate = repo.pulls.values().any(|pull| {
                pull.head == head
                    && pull.head_fork == head_fork
                    && repo.issues[&pull.number].state == "open"
            });
            if duplicate {
                return validation_failed(&format!(
                    "A pull request already exists for {owner}:{head}."
                ));
            }
            let number = state.open_pull(
                &repo_key(owner, name),
                NewPull {
                    title: title.to_owned(),
                    body: body.get("body").and_then(Value::as_str).map(str::to_owned),
                    author: user_id,
                    head,
                    head_fork,
                    base: base.to_owned(),
                    draft: body.get("draft").and_then(Value::as_bool) == Some(true),
                },
            );
            refresh_pull_heads(state, owner, name);
            answer(
                StatusCode::CREATED,
                pull_json(shared, state, owner, name, number, true).expect("just made"),
            )
        }
        ("GET", ["repos", owner, name, "pulls", number]) => {
            match number
                .parse::<u64>()
                .ok()
                .and_then(|n| pull_json(shared, state, owner, name, n, true))
            {
                Some(value) => answer(StatusCode::OK, value),
                None => not_found(),
            }
        }
        ("POST", ["repos", owner, name, "pulls", number, "reviews"]) => {
            match number.parse::<u64>() {
                Ok(number) => reactions_and_reviews::create_review(
                    urls, state, user_id, owner, name, number, body,
                ),
                Err(_) => not_found(),
            }
        }
        ("POST", ["repos", owner, name, "issues", "comments", id, "reactions"]) => {
            match id.parse::<u64>() {
                Ok(id) => reactions_and_reviews::create_reaction(
                    urls, state, user_id, owner, name, id, body,
                ),
                Err(_) => not_found(),
            }
        }
        ("GET", ["repos", owner, name, "issues", "comments", id, "reactions"]) => {
            match id
                .parse::<u64>()
                .ok()
                .and_then(|id| reactions_and_reviews::reactions_of(urls, state, owner, name, id))
            {
                Some(items) => paginate(shared, path, query, items),
                None => not_found(),
            }
        }
        ("GET", ["repos", owner, name, "pulls", number, "reviews"]) => {
            let Some((repo, number)) = pull_of(state, owner, name, number) else {
                return not_found();
            };
            let key = repo_key(owner, name);
            let items = state
                .reviews
                .values()
                .filter(|review| review.repo_key == key && review.pull_number == number)
                .map(|review| shapes::review(urls, state, repo, review))
                .collect();
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name, "pulls", number, "comments"]) => {
            let Some((repo, number)) = pull_of(state, owner, name, number) else {
                return not_found();
            };
            let key = repo_key(owner, name);
            let items = state
                .review_comments
                .values()
                .filter(|comment| comment.repo_key == key && comment.pull_number == number)
                .map(|comment| shapes::review_comment(urls, state, repo, comment))
                .collect();
            paginate(shared, path, query, items)
        }
        ("GET", ["repos", owner, name, "actions", "jobs", job, "logs"]) => {
            let key = repo_key(owner, name);
            let logged = job
                .parse::<u64>()
                .ok()
                .and_then(|job| state.check_runs.get(&job))
                .filter(|run| run.repo_key == key && run.app_slug == "github-actions")
                .filter(|run| run.log.is_some());
            let Some(run) = logged else {
                return not_found();
            };
            // GitHub redirects to a short-lived download address on another host.
            let mut headers = HeaderMap::new();
            let location = format!("{}{JOB_LOG_DOWNLOADS}{}", urls.api, run.id);
            headers.insert(
                "location",
                HeaderValue::from_str(&location).expect("a header"),
            );
            (StatusCode::FOUND, Value::Null, headers)
        }
        ("GET", ["repos", owner, name, "commits", reference, "check-runs"]) => {
            let Some(repo) = state.repo(owner, name) else {
                return not_found();
            };
            let sha = git_ref_sha(&repo.bare_path, reference)
                .or_else(|| git_sha(state, owner, name, reference))
                .unwrap_or_else(|| (*reference).to_owned());
            let key = repo_key(owner, name);
            // `filter=latest` (GitHub's default): the newest run of each name.
            let mut newest: BTreeMap<&str, &super::state::FakeCheckRun> = BTreeMap::new();
            for run in state
                .check_runs
                .values()
                .filter(|run| run.repo_key == key && run.head_sha == sha)
            {
                newest.insert(run.name.as_str(), run);
            }
            let runs: Vec<Value> = newest
                .values()
                .map(|run| shapes::check_run(urls, repo, run))
                .collect();
            answer(
                StatusCode::OK,
                json!({ "total_count": runs.len(), "check_runs": runs }),
            )
        }
        ("PATCH", ["repos", owner, name, "pulls", number]) => {
            let Some(number) = number.parse::<u64>().ok() else {
                return not_found();
            };
            let head_exists = state
                .repo(owner, name)
                .and_then(|repo| repo.pulls.get(&number))
                .map(|pull| git_sha(state, owner, name, &pull.head).is_some());
            let Some(head_exists) = head_exists else {
                return not_found();
            };
            let repo = state.repo_mut(owner, name).expect("checked");
            let merged = repo.pulls[&number].merged_at.is_some();
            let issue = repo.issues.get_mut(&number).expect("a PR has its issue");
            if let Some(new_state) = body.get("state").and_then(Value::as_str) {
                if merged && new_state != issue.state {
                    return validation_failed(
                        "state cannot be changed. The pull request has been merged.",
                    );
                }
                if new_state == "open" && !head_exists {
                    return validation_failed(
                        "state cannot be changed. The head branch was deleted.",
                    );
                }
                issue.state = new_state.to_owned();
                issue.closed_at = (new_state == "closed").then(now);
            }
            if let Some(title) = body.get("title").and_then(Value::as_str) {
                issue.title = title.to_owned();
            }
            if let Some(text) = body.get("body").and_then(Value::as_str) {
                issue.body = Some(text.to_owned());
            }
            issue.updated_at = now();
            answer(
                StatusCode::OK,
                pull_json(shared, state, owner, name, number, true).expect("exists"),
            )
        }
        _ => not_found(),
    }
}

/// The GraphQL queries Handoff sends: who last edited an issue comment, and the checks
/// of every open PR.
fn graphql(urls: &shapes::Urls, state: &FakeState, body: &Value) -> Answer {
    let query = body
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if check_rollup::is_checks_query(query) {
        return answer(
            StatusCode::OK,
            check_rollup::checks_of_open_pulls(urls, state, &body["variables"]),
        );
    }
    if !(query.contains("node(id: $id)") && query.contains("editor")) {
        return answer(
            StatusCode::OK,
            json!({ "errors": [{ "message": "the fake answers only the last-editor and open-PR checks queries" }] }),
        );
    }
    let id = body["variables"]["id"].as_str().unwrap_or_default();
    let node = match state.comment_by_node_id(id) {
        Some(comment) => match comment.last_edit {
            Some((editor, at)) => json!({
                "lastEditedAt": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "editor": { "login": state.user(editor).login }
            }),
            None => json!({ "lastEditedAt": null, "editor": null }),
        },
        None => Value::Null,
    };
    answer(StatusCode::OK, json!({ "data": { "node": node } }))
}

fn etag_of(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("W/\"{hex}\"")
}

fn rate_limit_headers(headers: &mut HeaderMap, state: &FakeState) {
    let rate = &state.rate_limit;
    let set = |headers: &mut HeaderMap, name: &'static str, value: String| {
        headers.insert(name, HeaderValue::from_str(&value).expect("a header"));
    };
    set(headers, "x-ratelimit-limit", rate.limit.to_string());
    set(
        headers,
        "x-ratelimit-remaining",
        rate.limit.saturating_sub(rate.used).to_string(),
    );
    set(
        headers,
        "x-ratelimit-reset",
        rate.reset_at.timestamp().to_string(),
    );
    set(headers, "x-ratelimit-used", rate.used.to_string());
    set(headers, "x-ratelimit-resource", "core".to_owned());
}

fn remove_field(value: &mut Value, field: &str) {
    match value {
        Value::Object(object) => {
            object.remove(field);
        }
        Value::Array(items) => items.iter_mut().for_each(|item| remove_field(item, field)),
        _ => {}
    }
}

fn device_flow(shared: &Shared, path: &str, body: &Value) -> Answer {
    let mut state = shared.state.lock().expect("state");
    let client_id = body
        .get("client_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match path {
        "/login/device/code" => {
            if !shared
                .oauth_client_ids
                .lock()
                .expect("ids")
                .iter()
                .any(|id| id == client_id)
            {
                return message(StatusCode::NOT_FOUND, "Not Found");
            }
            let number = state.new_id();
            let device_code = format!("device-{number}");
            let user_code = format!("FAKE-{number:04}");
            state.device_codes.insert(
                device_code.clone(),
                super::state::DeviceCodeState {
                    client_id: client_id.to_owned(),
                    user_code: user_code.clone(),
                    approved_token: None,
                    denied: false,
                    polls: 0,
                    tokens_given: 0,
                },
            );
            answer(
                StatusCode::OK,
                json!({
                    "device_code": device_code,
                    "user_code": user_code,
                    "verification_uri": format!("{}/login/device", shared.urls.web),
                    "expires_in": 30,
                    "interval": 1
                }),
            )
        }
        _ => {
            let code = body
                .get("device_code")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match state.device_codes.get_mut(code) {
                Some(entry) if entry.client_id == client_id => {
                    entry.polls += 1;
                    if let Some(token) = entry.approved_token.clone() {
                        entry.tokens_given += 1;
                        answer(
                            StatusCode::OK,
                            json!({ "access_token": token, "token_type": "bearer", "scope": "repo" }),
                        )
                    } else if entry.denied {
                        answer(StatusCode::OK, json!({ "error": "access_denied" }))
                    } else {
                        answer(StatusCode::OK, json!({ "error": "authorization_pending" }))
                    }
                }
                _ => answer(StatusCode::OK, json!({ "error": "incorrect_device_code" })),
            }
        }
    }
}

fn into_response(
    status: StatusCode,
    body: Vec<u8>,
    headers: HeaderMap,
    content_type: &str,
) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_str(content_type).expect("a header"),
    );
    response
}

/// The fake's one handler.
pub async fn handle(shared: Arc<Shared>, request: Request<Body>) -> Response<Body> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query_text = request.uri().query().unwrap_or_default().to_owned();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_owned())
        .unwrap_or_else(|| path.clone());
    let headers = request.headers().clone();
    let body_bytes = to_bytes(request.into_body(), 64 * 1024 * 1024)
        .await
        .unwrap_or_default();

    if let Some(job) = path.strip_prefix(JOB_LOG_DOWNLOADS) {
        // The download a job-logs request redirects to: plain text, and no token
        // wanted (it is another host on GitHub).
        let log = job.parse::<u64>().ok().and_then(|job| {
            let state = shared.state.lock().expect("state");
            state.check_runs.get(&job).and_then(|run| run.log.clone())
        });
        let had_token = headers.contains_key(axum::http::header::AUTHORIZATION);
        shared.requests.lock().expect("log").push(RequestRecord {
            method: method.to_string(),
            path: if had_token {
                format!("{path_and_query} (with a token)")
            } else {
                path_and_query
            },
            status: if log.is_some() { 200 } else { 404 },
            costs_rate_limit: false,
        });
        return match log {
            Some(log) => into_response(
                StatusCode::OK,
                log.into_bytes(),
                HeaderMap::new(),
                "text/plain; charset=utf-8",
            ),
            None => into_response(
                StatusCode::NOT_FOUND,
                b"not found".to_vec(),
                HeaderMap::new(),
                "text/plain",
            ),
        };
    }

    if git_http::is_git_path(&path) {
        // Git over HTTP takes three kinds of fault: an answer that comes slowly, an error
        // status instead of the answer, and an answer lost after the work was done.
        let fault = take_fault(
            &mut shared.faults.lock().expect("faults"),
            method.as_str(),
            &path_and_query,
        );
        let response = match fault {
            Some(Fault::Status(code)) => git_error(code),
            Some(Fault::AnswerLost(code)) => {
                let done =
                    git_http::serve(&shared, &method, &path, &query_text, &headers, body_bytes)
                        .await;
                drop(done);
                git_error(code)
            }
            other => {
                if let Some(Fault::Slow(duration)) = other {
                    tokio::time::sleep(duration).await;
                }
                git_http::serve(&shared, &method, &path, &query_text, &headers, body_bytes).await
            }
        };
        shared.requests.lock().expect("log").push(RequestRecord {
            method: method.to_string(),
            path: path_and_query,
            status: response.status().as_u16(),
            costs_rate_limit: false,
        });
        return response;
    }

    let fault = take_fault(
        &mut shared.faults.lock().expect("faults"),
        method.as_str(),
        &path_and_query,
    );
    if let Some(Fault::Slow(duration)) = &fault {
        tokio::time::sleep(*duration).await;
    }
    let body: Value = if body_bytes.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body_bytes) {
            Ok(value) => value,
            Err(_) => {
                let (status, value, headers) =
                    message(StatusCode::BAD_REQUEST, "Problems parsing JSON");
                return into_response(
                    status,
                    value.to_string().into_bytes(),
                    headers,
                    "application/json; charset=utf-8",
                );
            }
        }
    };

    let (status, value, mut answer_headers, costs) = if path.starts_with("/login/") {
        let (status, value, headers) = device_flow(&shared, &path, &body);
        (status, value, headers, false)
    } else {
        let mut state = shared.state.lock().expect("state");
        let user_id =
            token_of(&headers).and_then(|token| state.user_by_token(&token).map(|user| user.id));
        match (user_id, fault.clone()) {
            (None, _) => {
                let (status, value, headers) = message(StatusCode::UNAUTHORIZED, "Bad credentials");
                (status, value, headers, false)
            }
            (Some(_), Some(Fault::Status(code))) => {
                let status = StatusCode::from_u16(code).expect("a status");
                let (status, value, mut headers) = message(status, "Server Error");
                rate_limit_headers(&mut headers, &state);
                (status, value, headers, true)
            }
            (Some(_), Some(Fault::RateLimited { reset_in })) => {
                let reset_at =
                    chrono::Utc::now() + chrono::Duration::from_std(reset_in).expect("a duration");
                let (status, value, mut headers) = message(
                    StatusCode::FORBIDDEN,
                    "API rate limit exceeded for user. (But here's the good news: Authenticated requests get a higher rate limit.)",
                );
                rate_limit_headers(&mut headers, &state);
                headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
                headers.insert(
                    "x-ratelimit-reset",
                    HeaderValue::from_str(&reset_at.timestamp().to_string()).expect("a header"),
                );
                (status, value, headers, false)
            }
            // GraphQL refuses inside a 200 answer, with an error of type FORBIDDEN.
            (Some(_), Some(Fault::NotAccessible { .. })) if path == "/graphql" => {
                let mut headers = HeaderMap::new();
                rate_limit_headers(&mut headers, &state);
                (
                    StatusCode::OK,
                    check_rollup::not_accessible(),
                    headers,
                    true,
                )
            }
            (Some(_), Some(Fault::NotAccessible { permission })) => {
                let (status, value, mut headers) = message(
                    StatusCode::FORBIDDEN,
                    "Resource not accessible by personal access token",
                );
                headers.insert(
                    "x-accepted-github-permissions",
                    HeaderValue::from_str(&permission).expect("a header"),
                );
                rate_limit_headers(&mut headers, &state);
                (status, value, headers, true)
            }
            (
                Some(_),
                Some(Fault::TooManyRequests {
                    retry_after_seconds,
                }),
            ) => {
                let (status, value, mut headers) = message(
                    StatusCode::TOO_MANY_REQUESTS,
                    "You have exceeded a secondary rate limit.",
                );
                headers.insert(
                    "retry-after",
                    HeaderValue::from_str(&retry_after_seconds.to_string()).expect("a header"),
                );
                (status, value, headers, false)
            }
            (Some(user_id), Some(Fault::AnswerLost(code))) => {
                let query = query_map(&query_text);
                let _done = route(&shared, &mut state, user_id, &method, &path, &query, &body);
                state.rate_limit.used += 1;
                let status = StatusCode::from_u16(code).expect("a status");
                let (status, value, mut headers) = message(status, "Bad Gateway");
                rate_limit_headers(&mut headers, &state);
                (status, value, headers, true)
            }
            (Some(_), Some(Fault::DuplicatePull)) => {
                let (status, value, headers) = validation_failed("A pull request already exists.");
                (status, value, headers, true)
            }
            (Some(user_id), _) => {
                let query = query_map(&query_text);
                let (status, mut value, mut headers) =
                    route(&shared, &mut state, user_id, &method, &path, &query, &body);
                if let Some(Fault::MissingField(field)) = &fault {
                    remove_field(&mut value, field);
                }
                let costs = path != "/rate_limit";
                if costs {
                    state.rate_limit.used += 1;
                }
                rate_limit_headers(&mut headers, &state);
                (status, value, headers, costs)
            }
        }
    };

    let mut status = status;
    let mut bytes = if value.is_null() && status == StatusCode::NO_CONTENT {
        Vec::new()
    } else {
        serde_json::to_vec_pretty(&value).expect("JSON")
    };
    let mut costs = costs;
    let mut content_type = "application/json; charset=utf-8";
    if method == Method::GET && status == StatusCode::OK {
        let etag = etag_of(&bytes);
        let matches = headers
            .get("if-none-match")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|sent| sent == etag);
        answer_headers.insert("etag", HeaderValue::from_str(&etag).expect("a header"));
        if matches && fault.is_none() {
            // A conditional request answered 304 costs nothing against the limit.
            if costs {
                shared.state.lock().expect("state").rate_limit.used -= 1;
                let state = shared.state.lock().expect("state");
                rate_limit_headers(&mut answer_headers, &state);
            }
            costs = false;
            status = StatusCode::NOT_MODIFIED;
            bytes = Vec::new();
        }
    }
    match &fault {
        Some(Fault::Html) => {
            status = StatusCode::OK;
            content_type = "text/html; charset=utf-8";
            bytes = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1><p>The proxy could not reach the upstream.</p></body></html>".to_vec();
            answer_headers.remove("etag");
        }
        Some(Fault::Truncated) => {
            bytes.truncate(bytes.len() / 2);
            answer_headers.remove("etag");
        }
        _ => {}
    }
    shared.requests.lock().expect("log").push(RequestRecord {
        method: method.to_string(),
        path: path_and_query,
        status: status.as_u16(),
        costs_rate_limit: costs,
    });
    into_response(status, bytes, answer_headers, content_type)
}
