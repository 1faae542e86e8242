//! The fake's answer to the GraphQL query for the checks of every open PR: the open PRs
//! newest update first, a hundred a page (the cursor is the index of the next one), each
//! with its head commit and that commit's newest check run of each name, as GitHub's
//! `statusCheckRollup` gives them (enum words in capitals). A token that may not read
//! checks gets GitHub's GraphQL refusal: an answer with an error of type FORBIDDEN.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::super::bare_repository::git_ref_sha;
use super::super::shapes::{self, Urls};
use super::super::state::{repo_key, FakeCheckRun, FakeState};

/// Open PRs a page.
const PAGE: usize = 100;

/// Whether `query` is the checks-of-open-PRs query.
pub fn is_checks_query(query: &str) -> bool {
    query.contains("statusCheckRollup") && query.contains("pullRequests(states: OPEN")
}

/// GitHub's answer when the token may not read what the query asks.
pub fn not_accessible() -> Value {
    json!({
        "data": { "repository": null },
        "errors": [{
            "type": "FORBIDDEN",
            "path": ["repository", "pullRequests"],
            "locations": [{ "line": 2, "column": 3 }],
            "message": "Resource not accessible by personal access token"
        }]
    })
}

fn capitals(word: &str) -> String {
    word.to_ascii_uppercase()
}

fn check_run_node(urls: &Urls, owner: &str, name: &str, run: &FakeCheckRun) -> Value {
    json!({
        "__typename": "CheckRun",
        "databaseId": run.id,
        "name": run.name,
        "status": capitals(&run.status),
        "conclusion": run.conclusion.as_deref().map(capitals),
        "url": format!("{}/{owner}/{name}/runs/{}", urls.web, run.id),
        "completedAt": run.completed_at.as_ref().map(shapes::time),
        "title": run.title,
        "summary": run.summary,
        "text": null,
        "checkSuite": { "app": { "slug": run.app_slug, "name": run.app_slug } }
    })
}

/// The answer to the checks query with `variables` (`owner`, `name`, `after`).
pub fn checks_of_open_pulls(urls: &Urls, state: &FakeState, variables: &Value) -> Value {
    let owner = variables["owner"].as_str().unwrap_or_default();
    let name = variables["name"].as_str().unwrap_or_default();
    let Some(repo) = state.repo(owner, name) else {
        return json!({
            "data": { "repository": null },
            "errors": [{
                "type": "NOT_FOUND",
                "path": ["repository"],
                "message": format!("Could not resolve to a Repository with the name '{owner}/{name}'.")
            }]
        });
    };
    let key = repo_key(owner, name);
    let mut open: Vec<_> = repo
        .issues
        .values()
        .filter(|issue| issue.is_pull && issue.state == "open")
        .filter(|issue| {
            repo.pulls
                .get(&issue.number)
                .is_some_and(|pull| pull.merged_at.is_none())
        })
        .collect();
    open.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then(b.number.cmp(&a.number))
    });
    let start: usize = variables["after"]
        .as_str()
        .and_then(|cursor| cursor.parse().ok())
        .unwrap_or(0);
    let page: Vec<_> = open.iter().skip(start).take(PAGE).collect();
    let next = start + page.len();
    let nodes: Vec<Value> = page
        .iter()
        .map(|issue| {
            let head = git_ref_sha(&repo.bare_path, &format!("refs/pull/{}/head", issue.number))
                .unwrap_or_default();
            // The newest run of each name, as the check-runs listing gives them.
            let mut newest: BTreeMap<&str, &FakeCheckRun> = BTreeMap::new();
            for run in state
                .check_runs
                .values()
                .filter(|run| run.repo_key == key && run.head_sha == head)
            {
                newest.insert(run.name.as_str(), run);
            }
            let rollup = if newest.is_empty() {
                Value::Null
            } else {
                json!({
                    "contexts": {
                        "nodes": newest
                            .values()
                            .map(|run| check_run_node(urls, &repo.owner, &repo.name, run))
                            .collect::<Vec<_>>()
                    }
                })
            };
            json!({
                "number": issue.number,
                "commits": { "nodes": [{ "commit": { "oid": head, "statusCheckRollup": rollup } }] }
            })
        })
        .collect();
    json!({
        "data": {
            "repository": {
                "pullRequests": {
                    "pageInfo": {
                        "hasNextPage": next < open.len(),
                        "endCursor": (!page.is_empty()).then(|| next.to_string())
                    },
                    "nodes": nodes
                }
            }
        }
    })
}
