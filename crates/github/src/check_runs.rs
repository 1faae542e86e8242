//! The check runs of a commit (CI and other apps), read conditionally: their summary is
//! a PR's check status, and a failing one on a feedback PR becomes a follow-up
//! candidate.

use std::collections::BTreeMap;

use super::client::GithubClient;
use super::error::GithubError;
use super::sync_steps::in_flight;
use super::wire::{WireCheckRun, WireCheckRuns};
use handoff_domain::{Repo, RepoName};
use handoff_store::{Store, StoreError};

/// The most check runs read for one commit (GitHub's largest page).
const CHECK_RUNS_PER_COMMIT: u32 = 100;

impl GithubClient {
    /// The check runs of commit `sha` (the newest of each name, as GitHub lists them).
    pub async fn check_runs(
        &self,
        store: &Store,
        repo: &RepoName,
        sha: &str,
    ) -> Result<(Vec<WireCheckRun>, bool), GithubError> {
        let path = format!(
            "/repos/{}/{}/commits/{sha}/check-runs?filter=latest&per_page={CHECK_RUNS_PER_COMMIT}",
            repo.owner, repo.name
        );
        let answer = self.get_conditional(store, &path).await?;
        let runs: WireCheckRuns = self.parse_json(
            &http::Method::GET,
            &path,
            &http::HeaderMap::new(),
            answer.body.as_bytes(),
        )?;
        if runs.total_count > u64::from(CHECK_RUNS_PER_COMMIT) {
            tracing::warn!(
                %repo, sha, total = runs.total_count,
                "a commit has more check runs than one page holds: only the first are read"
            );
        }
        Ok((runs.check_runs, answer.changed))
    }
}

/// The check runs of each commit in `heads` (each commit asked once, a few requests in
/// flight at a time), for a sync pass. A commit whose checks cannot be read is left out
/// and the pass's `errors` get one line saying so; only a failing store stops it.
///
/// A token that lacks the permission to read checks (a fine-grained token without
/// "Checks: read") is no error: the checks are left out, the repository is marked (Check
/// setup names the permission), and the log says so once, when it begins and when it
/// ends, not at every sync.
async fn check_runs_of_commits<'a>(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    heads: impl IntoIterator<Item = &'a str>,
    errors: &mut Vec<String>,
) -> Result<BTreeMap<&'a str, Vec<WireCheckRun>>, StoreError> {
    let name = &repo.name;
    let mut heads: Vec<&str> = heads.into_iter().collect();
    heads.sort_unstable();
    heads.dedup();
    let answers = in_flight(
        heads
            .iter()
            .map(|sha| client.check_runs(store, name, sha))
            .collect(),
    )
    .await;
    let mut runs_at = BTreeMap::new();
    let mut unreadable = None;
    let mut not_permitted = false;
    for (sha, answer) in heads.iter().zip(answers) {
        match answer {
            Ok((runs, _)) => {
                runs_at.insert(*sha, runs);
            }
            Err(GithubError::Store(error)) => return Err(error),
            Err(error) if error.is_permission_missing() => not_permitted = true,
            Err(error) => unreadable = Some(error),
        }
    }
    if let Some(error) = unreadable {
        tracing::warn!(repo = %name, %error, "check runs could not be read");
        errors.push(format!("{name}: check runs could not be read: {error}"));
    }
    // Asked about at least one commit: whether the token may read checks is known.
    if !heads.is_empty()
        && store
            .repositories()
            .set_checks_unreadable(repo.id, not_permitted)
            .await?
    {
        if not_permitted {
            tracing::warn!(repo = %name, "the token may not read this repository's checks (a fine-grained token needs the Checks: read permission): its pull requests show no checks until it may, and the rest syncs");
        } else {
            tracing::info!(repo = %name, "the token may read this repository's checks again");
        }
    }
    Ok(runs_at)
}

/// From how many head commits a pass asks GraphQL for the checks of every open PR at
/// once instead of each commit by REST: a REST answer that did not change is free
/// against the rate limit, a GraphQL query never is, so a few commits are asked one
/// by one.
const ONE_QUERY_FROM_COMMITS: usize = 3;

/// The most pages of open PRs one pass reads for their checks (100 a page).
const ROLLUP_PAGES_AT_MOST: usize = 50;

/// The checks of every open PR's head commit, newest PRs first, a hundred PRs a page.
const CHECKS_OF_OPEN_PULLS: &str = "query($owner: String!, $name: String!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequests(states: OPEN, first: 100, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number
        commits(last: 1) {
          nodes {
            commit {
              oid
              statusCheckRollup {
                contexts(first: 100) {
                  nodes {
                    __typename
                    ... on CheckRun {
                      databaseId name status conclusion url completedAt title summary text
                      checkSuite { app { slug name } }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}";

mod rollup_wire {
    //! The parts of the GraphQL answer the checks query reads.
    use chrono::{DateTime, Utc};
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    pub struct Answer {
        pub repository: Option<Repository>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Repository {
        pub pull_requests: Connection<PullRequest>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Connection<T> {
        #[serde(default = "Vec::new")]
        pub nodes: Vec<Option<T>>,
        #[serde(default)]
        pub page_info: Option<PageInfo>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct PageInfo {
        pub has_next_page: bool,
        pub end_cursor: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    pub struct PullRequest {
        pub number: u64,
        pub commits: Connection<CommitNode>,
    }

    #[derive(Debug, Deserialize)]
    pub struct CommitNode {
        pub commit: Commit,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Commit {
        pub oid: String,
        pub status_check_rollup: Option<Rollup>,
    }

    #[derive(Debug, Deserialize)]
    pub struct Rollup {
        pub contexts: Connection<Context>,
    }

    /// A check run, or a commit status (which the check-runs listing leaves out too).
    #[derive(Debug, Deserialize)]
    #[serde(tag = "__typename")]
    pub enum Context {
        CheckRun(Box<CheckRun>),
        #[serde(other)]
        Other,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CheckRun {
        pub database_id: Option<u64>,
        pub name: String,
        pub status: String,
        pub conclusion: Option<String>,
        pub url: Option<String>,
        pub completed_at: Option<DateTime<Utc>>,
        pub title: Option<String>,
        pub summary: Option<String>,
        pub text: Option<String>,
        pub check_suite: Option<CheckSuite>,
    }

    #[derive(Debug, Deserialize)]
    pub struct CheckSuite {
        pub app: Option<App>,
    }

    #[derive(Debug, Deserialize)]
    pub struct App {
        pub slug: Option<String>,
        pub name: Option<String>,
    }
}

/// A check run as GraphQL gives it, as the REST listing would (GraphQL's enum words are
/// in capitals).
fn check_run_of(head_sha: &str, run: rollup_wire::CheckRun) -> Option<WireCheckRun> {
    let app = run.check_suite.and_then(|suite| suite.app);
    Some(WireCheckRun {
        id: run.database_id?,
        name: run.name,
        head_sha: head_sha.to_owned(),
        status: run.status.to_ascii_lowercase(),
        conclusion: run.conclusion.map(|word| word.to_ascii_lowercase()),
        html_url: run.url,
        completed_at: run.completed_at,
        output: super::wire::WireCheckOutput {
            title: run.title,
            summary: run.summary,
            text: run.text,
        },
        app: app.map(|app| super::wire::WireCheckApp {
            slug: app.slug,
            name: app.name,
        }),
    })
}

/// The check runs of the head commits of the open PRs in `wanted` (number, head), read
/// from GraphQL's check rollup of every open PR at once: a page of a hundred PRs a
/// request, however many are busy, until every wanted PR was seen.
async fn check_runs_by_rollup<'a>(
    client: &GithubClient,
    repo: &RepoName,
    wanted: &[(u64, &'a str)],
) -> Result<BTreeMap<&'a str, Vec<WireCheckRun>>, GithubError> {
    let mut runs_at = BTreeMap::new();
    let mut after: Option<String> = None;
    for _ in 0..ROLLUP_PAGES_AT_MOST {
        let data = client
            .graphql(
                CHECKS_OF_OPEN_PULLS,
                serde_json::json!({ "owner": repo.owner, "name": repo.name, "after": after }),
            )
            .await?;
        let answer: rollup_wire::Answer =
            serde_json::from_value(data).map_err(|error| GithubError::Unprocessable {
                request: "POST /graphql (checks of open PRs)".to_owned(),
                message: error.to_string(),
            })?;
        let Some(repository) = answer.repository else {
            break;
        };
        let pulls = repository.pull_requests;
        for pull in pulls.nodes.into_iter().flatten() {
            let Some((_, head)) = wanted.iter().find(|(number, _)| *number == pull.number) else {
                continue;
            };
            let Some(commit) = pull.commits.nodes.into_iter().flatten().next() else {
                continue;
            };
            // The PR moved since the mirror saw it: its checks are read once its new
            // head is mirrored.
            if commit.commit.oid != *head {
                continue;
            }
            let runs = commit
                .commit
                .status_check_rollup
                .map(|rollup| rollup.contexts.nodes)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .filter_map(|context| match context {
                    rollup_wire::Context::CheckRun(run) => check_run_of(head, *run),
                    rollup_wire::Context::Other => None,
                })
                .collect();
            runs_at.insert(*head, runs);
        }
        let seen_all = wanted.iter().all(|(_, head)| runs_at.contains_key(head));
        match pulls.page_info {
            Some(page) if page.has_next_page && !seen_all => after = page.end_cursor,
            _ => break,
        }
    }
    Ok(runs_at)
}

/// The check runs of the head commits of the open PRs in `wanted` (number, head), for a
/// sync pass: of GraphQL, all open PRs at once, when there are many; of REST, one
/// commit at a time, when there are few or GraphQL refuses (an older GitHub Enterprise,
/// or a token that may not read checks, which REST then names).
pub(super) async fn check_runs_of_open_pulls<'a>(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    wanted: &[(u64, &'a str)],
    errors: &mut Vec<String>,
) -> Result<BTreeMap<&'a str, Vec<WireCheckRun>>, StoreError> {
    let mut heads: Vec<&str> = wanted.iter().map(|(_, head)| *head).collect();
    heads.sort_unstable();
    heads.dedup();
    if heads.len() < ONE_QUERY_FROM_COMMITS {
        return check_runs_of_commits(client, store, repo, heads, errors).await;
    }
    match check_runs_by_rollup(client, &repo.name, wanted).await {
        Ok(mut runs_at) => {
            // What the rollup did not hold (a PR that moved) is asked of REST.
            let missing: Vec<&str> = heads
                .iter()
                .copied()
                .filter(|head| !runs_at.contains_key(head))
                .collect();
            if !missing.is_empty() {
                runs_at.extend(check_runs_of_commits(client, store, repo, missing, errors).await?);
            } else if store
                .repositories()
                .set_checks_unreadable(repo.id, false)
                .await?
            {
                tracing::info!(repo = %repo.name, "the token may read this repository's checks again");
            }
            Ok(runs_at)
        }
        Err(GithubError::Store(error)) => Err(error),
        Err(error) => {
            tracing::debug!(repo = %repo.name, %error, "the checks of the open PRs were not given at once: asking each commit");
            check_runs_of_commits(client, store, repo, heads, errors).await
        }
    }
}
