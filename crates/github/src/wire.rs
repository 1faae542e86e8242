//! The parts of GitHub's answers Handoff reads. Only the fields used are declared, so an
//! answer that grows new fields still reads; one that lacks a used field is a clear
//! [`super::GithubError::MalformedAnswer`].

use chrono::{DateTime, Utc};
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireUser {
    pub login: String,
    #[serde(rename = "type", default)]
    pub account_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireComment {
    pub id: u64,
    /// The GraphQL id, to ask who last edited the comment.
    #[serde(default)]
    pub node_id: String,
    #[serde(default)]
    pub body: Option<String>,
    pub user: Option<WireUser>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub html_url: String,
    /// The API address of the issue or PR the comment is on.
    #[serde(default)]
    pub issue_url: String,
}

impl WireComment {
    /// The number of the issue or PR the comment is on.
    pub fn issue_number(&self) -> Option<u64> {
        self.issue_url.rsplit('/').next()?.parse().ok()
    }

    pub fn body_text(&self) -> &str {
        self.body.as_deref().unwrap_or_default()
    }

    pub fn author(&self) -> Option<&str> {
        self.user.as_ref().map(|user| user.login.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireLabel {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WireIssue {
    pub number: u64,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    pub user: Option<WireUser>,
    pub state: String,
    #[serde(default)]
    pub labels: Vec<WireLabel>,
    /// Present when the "issue" is a pull request (the issues API lists both).
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
    pub html_url: String,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireRepoRef {
    pub full_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireBranchRef {
    #[serde(rename = "ref")]
    pub name: String,
    pub sha: String,
    /// The repository the branch lives in: the base repository, a fork, or `None` when
    /// the fork was deleted.
    #[serde(default)]
    pub repo: Option<WireRepoRef>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WirePull {
    pub number: u64,
    pub html_url: String,
    pub state: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub user: Option<WireUser>,
    #[serde(default)]
    pub merged_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub updated_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub body: Option<String>,
    pub head: WireBranchRef,
    pub base: WireBranchRef,
    /// Whether it merges into its base without conflicts; only the one-PR answer says,
    /// and `null` while GitHub is still working it out.
    #[serde(default)]
    pub mergeable: Option<bool>,
}

impl WirePull {
    /// Whether the PR's branch lives in `repo` itself (not in a fork).
    pub fn head_is_in(&self, repo: &handoff_domain::RepoName) -> bool {
        self.head
            .repo
            .as_ref()
            .is_some_and(|head| head.full_name.eq_ignore_ascii_case(&repo.full_name()))
    }

    /// The PR as the mirror keeps it.
    pub fn mirrored(&self) -> handoff_domain::MirroredPullRequest {
        handoff_domain::MirroredPullRequest {
            number: self.number,
            title: self.title.clone(),
            author_login: self.user.as_ref().map(|user| user.login.clone()),
            head_ref: self.head.name.clone(),
            head_repo: self.head.repo.as_ref().map(|repo| repo.full_name.clone()),
            head_sha: self.head.sha.clone(),
            base_ref: self.base.name.clone(),
            state: self.state(),
            draft: self.draft,
            github_updated_at: self.updated_at.unwrap_or_else(Utc::now),
        }
    }

    pub fn state(&self) -> handoff_domain::PullRequestState {
        use handoff_domain::PullRequestState;
        if self.merged_at.is_some() {
            PullRequestState::Merged
        } else if self.state == "closed" {
            PullRequestState::Closed
        } else {
            PullRequestState::Open
        }
    }
}

/// A review of a PR: its body is what the reviewer wrote above the inline comments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireReview {
    pub id: u64,
    pub user: Option<WireUser>,
    #[serde(default)]
    pub body: Option<String>,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`.
    pub state: String,
    #[serde(default)]
    pub submitted_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub html_url: String,
}

/// An inline review comment, on a line of a PR's diff.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireReviewComment {
    pub id: u64,
    pub user: Option<WireUser>,
    pub body: String,
    pub path: String,
    #[serde(default)]
    pub line: Option<u64>,
    #[serde(default)]
    pub original_line: Option<u64>,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub html_url: String,
}

/// The app that reported a check run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireCheckApp {
    #[serde(default)]
    pub slug: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

/// What a check run wrote about itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
pub struct WireCheckOutput {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

/// One check run of a commit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireCheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub completed_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub output: WireCheckOutput,
    #[serde(default)]
    pub app: Option<WireCheckApp>,
}

impl WireCheckRun {
    pub fn state(&self) -> handoff_domain::pull_request::CheckRunState<'_> {
        handoff_domain::pull_request::CheckRunState {
            status: &self.status,
            conclusion: self.conclusion.as_deref(),
        }
    }

    /// Who reported it: the app's name, else the check's own.
    pub fn reporter(&self) -> &str {
        self.app
            .as_ref()
            .and_then(|app| app.slug.as_deref().or(app.name.as_deref()))
            .unwrap_or(&self.name)
    }
}

/// The answer listing a commit's check runs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WireCheckRuns {
    pub total_count: u64,
    pub check_runs: Vec<WireCheckRun>,
}
