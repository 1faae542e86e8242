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
}

impl WireComment {
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
    pub head: WireBranchRef,
    pub base: WireBranchRef,
}

impl WirePull {
    /// Whether the PR's branch lives in `repo` itself (not in a fork).
    pub fn head_is_in(&self, repo: &crate::domain::RepoName) -> bool {
        self.head
            .repo
            .as_ref()
            .is_some_and(|head| head.full_name.eq_ignore_ascii_case(&repo.full_name()))
    }

    pub fn state(&self) -> crate::domain::PullRequestState {
        use crate::domain::PullRequestState;
        if self.merged_at.is_some() {
            PullRequestState::Merged
        } else if self.state == "closed" {
            PullRequestState::Closed
        } else {
            PullRequestState::Open
        }
    }
}
