//! The fake GitHub the tests rely on answers as GitHub's published API description says:
//! every answer it serves for the paths Handoff uses is checked against the official
//! schemas, and its protocol behaviour (ETag/304, pagination, auth, git over HTTP) is
//! checked too.

use handoff_test_support as support;

use handoff::github::{GithubClient, GithubEndpoints, RequestPolicy};
use handoff::secrets::Secret;
use http::{HeaderMap, Method};
use serde_json::{json, Value};
use support::fake_github::{FakeGithub, OWNER};
use support::openapi_schema::{github_description, path_template, response_schema, violations};

const REPO: &str = "octocat/hello-world";

fn client(fake: &FakeGithub, token: &str) -> GithubClient {
    GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(token),
        RequestPolicy {
            attempts: 1,
            ..RequestPolicy::default()
        },
    )
    .unwrap()
}

/// Sends a request and checks its answer against the description.
async fn conforming(
    client: &GithubClient,
    description: &Value,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Value {
    let answer = client
        .send(method.clone(), path, body.as_ref(), HeaderMap::new())
        .await
        .unwrap_or_else(|error| panic!("{method} {path}: {error}"));
    let status = answer.status.as_u16();
    let bare_path = path.split('?').next().unwrap();
    let template = path_template(description, bare_path)
        .unwrap_or_else(|| panic!("{bare_path} is not in the description"));
    if status == 204 {
        assert!(answer.body.is_empty());
        return Value::Null;
    }
    let schema = response_schema(description, method.as_str(), &template, status)
        .unwrap_or_else(|| panic!("no schema for {method} {template} {status}"));
    let value: Value = serde_json::from_slice(&answer.body).expect("JSON");
    let problems = violations(schema, &value);
    assert!(
        problems.is_empty(),
        "{method} {path} ({template}) breaks the schema:\n{}",
        problems.join("\n")
    );
    value
}

#[tokio::test]
async fn every_answer_the_fake_serves_conforms_to_githubs_description() {
    let description = github_description();
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let visitor_token = fake.add_user("visitor");
    let issue = fake.create_issue(
        REPO,
        "visitor",
        "Button too small",
        "Make it bigger",
        &["feedback"],
    );
    fake.add_comment(REPO, issue, "visitor", "Please hurry");
    fake.create_branch(REPO, "feedback/f2c-fb-1", "main");
    let github = client(&fake, fake.owner_token());
    let checked = |method: Method, path: &str, body: Option<Value>| {
        let github = github.clone();
        let description = description.clone();
        let path = path.to_owned();
        async move { conforming(&github, &description, method, &path, body).await }
    };

    checked(Method::GET, "/user", None).await;
    checked(Method::GET, "/rate_limit", None).await;
    checked(Method::GET, &format!("/repos/{REPO}"), None).await;
    checked(Method::GET, &format!("/repos/{REPO}/branches/main"), None).await;
    checked(
        Method::GET,
        &format!("/repos/{REPO}/git/ref/heads/main"),
        None,
    )
    .await;
    checked(
        Method::GET,
        &format!("/repos/{REPO}/issues?labels=feedback&state=all"),
        None,
    )
    .await;
    checked(Method::GET, &format!("/repos/{REPO}/issues/{issue}"), None).await;
    let created_issue = checked(
        Method::POST,
        &format!("/repos/{REPO}/issues"),
        Some(json!({ "title": "QA failure", "body": "details", "labels": ["qa"] })),
    )
    .await;
    checked(
        Method::PATCH,
        &format!("/repos/{REPO}/issues/{}", created_issue["number"]),
        Some(json!({ "state": "closed" })),
    )
    .await;
    // The labels a repository asks for on the PRs Handoff opens (made when new).
    checked(
        Method::POST,
        &format!("/repos/{REPO}/issues/{}/labels", created_issue["number"]),
        Some(json!({ "labels": ["handoff", "qa"] })),
    )
    .await;
    checked(
        Method::GET,
        &format!("/repos/{REPO}/issues/{issue}/comments"),
        None,
    )
    .await;
    let comment = checked(
        Method::POST,
        &format!("/repos/{REPO}/issues/{issue}/comments"),
        Some(json!({ "body": "from the owner" })),
    )
    .await;
    let comment_path = format!("/repos/{REPO}/issues/comments/{}", comment["id"]);
    checked(Method::GET, &comment_path, None).await;
    checked(
        Method::PATCH,
        &comment_path,
        Some(json!({ "body": "edited" })),
    )
    .await;
    checked(Method::DELETE, &comment_path, None).await;

    let pull = checked(
        Method::POST,
        &format!("/repos/{REPO}/pulls"),
        Some(json!({ "title": "Bigger button", "head": "feedback/f2c-fb-1", "base": "main", "body": "Fixes #1" })),
    )
    .await;
    let number = pull["number"].as_u64().unwrap();
    checked(
        Method::GET,
        &format!("/repos/{REPO}/pulls?state=all&head={OWNER}:feedback/f2c-fb-1"),
        None,
    )
    .await;
    checked(Method::GET, &format!("/repos/{REPO}/pulls/{number}"), None).await;
    checked(
        Method::PATCH,
        &format!("/repos/{REPO}/pulls/{number}"),
        Some(json!({ "state": "closed" })),
    )
    .await;
    checked(
        Method::PATCH,
        &format!("/repos/{REPO}/pulls/{number}"),
        Some(json!({ "state": "open" })),
    )
    .await;
    // The issues list holds PRs too, with their `pull_request` field.
    let listed = checked(
        Method::GET,
        &format!("/repos/{REPO}/issues?state=all"),
        None,
    )
    .await;
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .any(|item| item.get("pull_request").is_some()));
    // A PR's commits, with the accounts GitHub links them to (the owner's, and `{}`
    // for an address no account has).
    fake.push_commit(REPO, "feedback/f2c-fb-1", "By hand", &[("a.txt", "a\n")]);
    let commits = checked(
        Method::GET,
        &format!("/repos/{REPO}/pulls/{number}/commits?per_page=100"),
        None,
    )
    .await;
    assert_eq!(commits[0]["author"]["login"], OWNER, "{commits}");
    // A reaction on a comment (given again, it is the same one: 200), the comment's
    // reactions, and a review a visitor submits (the owner may not request changes
    // on a PR of the owner's own: see the error answers).
    let command = fake.add_comment(REPO, number, OWNER, "@handoff review");
    let reactions = format!("/repos/{REPO}/issues/comments/{command}/reactions");
    let given = checked(Method::POST, &reactions, Some(json!({ "content": "eyes" }))).await;
    let again = checked(Method::POST, &reactions, Some(json!({ "content": "eyes" }))).await;
    assert_eq!(given["id"], again["id"]);
    let listed = checked(Method::GET, &reactions, None).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let review = conforming(
        &client(&fake, &visitor_token),
        &description,
        Method::POST,
        &format!("/repos/{REPO}/pulls/{number}/reviews"),
        Some(json!({ "event": "REQUEST_CHANGES", "body": "Smaller, please." })),
    )
    .await;
    assert_eq!(review["state"], "CHANGES_REQUESTED");
    fake.merge_pull(REPO, number);
    let merged = checked(Method::GET, &format!("/repos/{REPO}/pulls/{number}"), None).await;
    assert_eq!(merged["merged"], true);

    // A fork for the agent's branches in an organization the owner may make
    // repositories in, the list of forks, and the owner's organizations.
    fake.add_organization("octo-agents", &[(OWNER, "admin", true)]);
    let fork = checked(
        Method::POST,
        &format!("/repos/{REPO}/forks"),
        Some(json!({ "organization": "octo-agents", "default_branch_only": false })),
    )
    .await;
    assert_eq!(fork["full_name"], "octo-agents/hello-world");
    assert_eq!(fork["parent"]["full_name"], REPO);
    checked(Method::GET, "/repos/octo-agents/hello-world", None).await;
    let forks = checked(Method::GET, &format!("/repos/{REPO}/forks"), None).await;
    assert_eq!(forks.as_array().unwrap().len(), 1, "{forks}");
    let memberships = checked(Method::GET, "/user/memberships/orgs", None).await;
    assert_eq!(
        memberships[0]["permissions"]["can_create_repository"], true,
        "{memberships}"
    );
}

#[tokio::test]
async fn the_fakes_error_answers_conform_too() {
    let description = github_description();
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let github = client(&fake, fake.owner_token());

    let duplicate = {
        fake.create_branch(REPO, "topic", "main");
        let body = json!({ "title": "t", "head": "topic", "base": "main" });
        github
            .send(
                Method::POST,
                &format!("/repos/{REPO}/pulls"),
                Some(&body),
                HeaderMap::new(),
            )
            .await
            .unwrap();
        github
            .send(
                Method::POST,
                &format!("/repos/{REPO}/pulls"),
                Some(&body),
                HeaderMap::new(),
            )
            .await
    };
    let error = duplicate.unwrap_err();
    assert!(
        error.to_string().contains("A pull request already exists"),
        "{error}"
    );

    let too_long = "x".repeat(65_537);
    let issue = fake.create_issue(REPO, OWNER, "t", "b", &[]);
    let error = github
        .send(
            Method::POST,
            &format!("/repos/{REPO}/issues/{issue}/comments"),
            Some(&json!({ "body": too_long })),
            HeaderMap::new(),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Body is too long"), "{error}");

    // The 422 answer itself has the shape the description gives it.
    let bearer = format!("Bearer {}", fake.owner_token());
    let body = json!({ "body": "x".repeat(65_537) }).to_string();
    let raw = support::raw_http::request(
        &fake.api_base(),
        "POST",
        &format!("/repos/{REPO}/issues/{issue}/comments"),
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(raw.status, 422);
    let schema = response_schema(
        &description,
        "post",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        422,
    )
    .unwrap();
    let problems = violations(schema, &raw.json());
    assert!(problems.is_empty(), "{problems:?}");

    let raw = support::raw_http::request(
        &fake.api_base(),
        "GET",
        &format!("/repos/{REPO}/issues/comments/999999"),
        &[("Authorization", &bearer)],
        None,
    )
    .await;
    assert_eq!(raw.status, 404);
    let schema = response_schema(
        &description,
        "get",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        404,
    )
    .unwrap();
    assert!(
        violations(schema, &raw.json()).is_empty(),
        "{:?}",
        violations(schema, &raw.json())
    );

    // A review requesting changes on, or approving, a PR of one's own: GitHub's 422.
    fake.create_branch(REPO, "own", "main");
    fake.push_commit(REPO, "own", "Own change", &[("own.txt", "own\n")]);
    let own = fake.create_pull(REPO, OWNER, "own", "Own change");
    for (event, refusal) in [
        (
            "REQUEST_CHANGES",
            "Can not request changes on your own pull request",
        ),
        ("APPROVE", "Can not approve your own pull request"),
    ] {
        let body = json!({ "event": event, "body": "Do better." }).to_string();
        let raw = support::raw_http::request(
            &fake.api_base(),
            "POST",
            &format!("/repos/{REPO}/pulls/{own}/reviews"),
            &[
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
            ],
            Some(body.as_bytes()),
        )
        .await;
        assert_eq!(raw.status, 422, "{event}");
        assert!(raw.json()["errors"][0]
            .as_str()
            .is_some_and(|text| text.contains(refusal)));
        let schema = response_schema(
            &description,
            "post",
            "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
            422,
        )
        .unwrap();
        let problems = violations(schema, &raw.json());
        assert!(problems.is_empty(), "{event}: {problems:?}");
    }

    // A fork into an organization GitHub does not know, and into one the owner may
    // not make repositories in: GitHub's 422 and 403, in their described shapes.
    fake.add_organization(
        "not-ours",
        &[("someone-else", "admin", true), (OWNER, "member", false)],
    );
    for (organization, status) in [("no-such-org", 422), ("not-ours", 403)] {
        let body = json!({ "organization": organization }).to_string();
        let raw = support::raw_http::request(
            &fake.api_base(),
            "POST",
            &format!("/repos/{REPO}/forks"),
            &[
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
            ],
            Some(body.as_bytes()),
        )
        .await;
        assert_eq!(raw.status, status, "{organization}");
        let schema =
            response_schema(&description, "post", "/repos/{owner}/{repo}/forks", status).unwrap();
        let problems = violations(schema, &raw.json());
        assert!(problems.is_empty(), "{organization}: {problems:?}");
    }
}

#[test]
fn the_schema_check_catches_answers_that_break_the_description() {
    let description = github_description();
    let schema = response_schema(
        &description,
        "get",
        "/repos/{owner}/{repo}/issues/comments/{comment_id}",
        200,
    )
    .unwrap();
    let no_user = json!({ "id": 1, "node_id": "x", "html_url": "http://x/1", "issue_url": "http://x/i", "url": "http://x/c", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z" });
    let problems = violations(schema, &no_user);
    assert!(
        problems.iter().any(|p| p.contains("\"user\"")),
        "{problems:?}"
    );
    let mut wrong_type = no_user.clone();
    wrong_type["id"] = json!("one");
    wrong_type["created_at"] = json!("yesterday");
    let problems = violations(schema, &wrong_type);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("$.id: expected integer")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("not a date-time")),
        "{problems:?}"
    );
    assert_eq!(
        path_template(&description, "/repos/o/r/issues/comments/5").as_deref(),
        Some("/repos/{owner}/{repo}/issues/comments/{comment_id}")
    );
    assert_eq!(
        path_template(&description, "/repos/o/r/git/ref/heads/feature/x").as_deref(),
        Some("/repos/{owner}/{repo}/git/ref/{ref}")
    );
}

#[tokio::test]
async fn an_unchanged_answer_is_a_free_304() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let github = client(&fake, fake.owner_token());
    let first = github
        .send(
            Method::GET,
            &format!("/repos/{REPO}"),
            None,
            HeaderMap::new(),
        )
        .await
        .unwrap();
    let etag = first.headers.get("etag").unwrap().clone();
    let mut headers = HeaderMap::new();
    headers.insert("if-none-match", etag);

    let second = github
        .send(Method::GET, &format!("/repos/{REPO}"), None, headers)
        .await
        .unwrap();

    assert_eq!(second.status.as_u16(), 304);
    assert!(second.body.is_empty());
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].costs_rate_limit);
    assert!(!requests[1].costs_rate_limit);
}

#[tokio::test]
async fn lists_are_paginated_with_link_headers() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let issue = fake.create_issue(REPO, OWNER, "busy", "thread", &[]);
    for n in 0..150 {
        fake.add_comment(REPO, issue, OWNER, &format!("comment {n}"));
    }
    let github = client(&fake, fake.owner_token());

    let first = github
        .send(
            Method::GET,
            &format!("/repos/{REPO}/issues/{issue}/comments?per_page=100"),
            None,
            HeaderMap::new(),
        )
        .await
        .unwrap();

    let page: Vec<Value> = serde_json::from_slice(&first.body).unwrap();
    assert_eq!(page.len(), 100);
    let link = first.headers.get("link").unwrap().to_str().unwrap();
    let next = handoff::github::link_header::next_page_url(link).unwrap();
    assert!(next.contains("page=2"), "{next}");
    let second = github
        .send(Method::GET, &next, None, HeaderMap::new())
        .await
        .unwrap();
    let page: Vec<Value> = serde_json::from_slice(&second.body).unwrap();
    assert_eq!(page.len(), 50);
    assert_eq!(page[49]["body"], "comment 149");
}

#[tokio::test]
async fn a_bad_token_gets_401() {
    let fake = FakeGithub::start().await;
    let github = client(&fake, "ghp_not_a_real_token");
    let error = github.get_json::<Value>("/user").await.unwrap_err();
    assert!(
        matches!(error, handoff::github::GithubError::Unauthorized { .. }),
        "{error:?}"
    );
}

#[test]
fn git_clones_and_pushes_over_http_with_the_token() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGithub::start());
    fake.create_repo(REPO, "main");
    let work = tempfile::tempdir().unwrap();
    let url_with_token = fake.git_url(REPO).replace(
        "http://",
        &format!("http://x-access-token:{}@", fake.owner_token()),
    );
    let git = |arguments: &[&str], directory: &std::path::Path| {
        let output = std::process::Command::new("git")
            .args(arguments)
            .current_dir(directory)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // The fake's server runs on the runtime's worker threads while git blocks here.
    let (cloned, error) = git(&["clone", "--quiet", &url_with_token, "clone"], work.path());
    assert!(cloned, "{error}");
    let clone = work.path().join("clone");
    std::fs::write(clone.join("NEW.md"), "new\n").unwrap();
    assert!(git(&["add", "NEW.md"], &clone).0);
    assert!(git(&["commit", "--quiet", "-m", "add"], &clone).0);
    let (pushed, error) = git(
        &["push", "--quiet", "origin", "HEAD:refs/heads/topic"],
        &clone,
    );
    assert!(pushed, "{error}");
    assert!(fake.branch_sha(REPO, "topic").is_some());

    let anonymous = fake.git_url(REPO);
    let (cloned, _) = git(&["clone", "--quiet", &anonymous, "anonymous"], work.path());
    assert!(!cloned, "no token, no clone");
}
