//! What the fake GitHub knows: users and their tokens, repositories (each a real bare
//! git repository), issues and pull requests (sharing one numbering, as on GitHub),
//! comments, and the device-flow codes handed out.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{DateTime, SubsecRound as _, Utc};

#[derive(Debug, Clone)]
pub struct FakeUser {
    pub id: u64,
    pub login: String,
    pub token: String,
    pub is_bot: bool,
    /// What `X-OAuth-Scopes` says for the user's token: a classic token's scopes
    /// (`"repo"` unless a test sets others), or `None` for a fine-grained token, which
    /// GitHub answers without the header.
    pub token_scopes: Option<String>,
    /// An organization: an account nobody signs in as, with members.
    pub is_organization: bool,
}

impl FakeUser {
    /// The address GitHub links this account's commits by (its no-reply address).
    pub fn email(&self) -> String {
        format!("{}+{}@users.noreply.github.invalid", self.id, self.login)
    }
}

/// A user's membership of an organization.
#[derive(Debug, Clone)]
pub struct FakeMembership {
    pub organization: u64,
    pub user: u64,
    /// `admin` or `member`.
    pub role: String,
    /// Whether the member may make repositories (and so forks) in it.
    pub can_create_repository: bool,
}

#[derive(Debug, Clone)]
pub struct FakeIssue {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub user_id: u64,
    pub labels: Vec<String>,
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    /// Set for the issue side of a pull request.
    pub is_pull: bool,
}

#[derive(Debug, Clone)]
pub struct FakePull {
    pub id: u64,
    pub number: u64,
    pub head: String,
    /// The repository the head branch lives in when it is a fork (its key); `None` for
    /// a branch of the repository itself.
    pub head_fork: Option<String>,
    pub base: String,
    pub merged_at: Option<DateTime<Utc>>,
    pub merge_commit_sha: Option<String>,
    /// Opened as a draft (not ready for review).
    pub draft: bool,
    /// The users asked to review it (ids) and the teams (slugs).
    pub requested_reviewers: Vec<u64>,
    pub requested_teams: Vec<String>,
}

/// What a new pull request is made of.
#[derive(Debug, Clone)]
pub struct NewPull {
    pub title: String,
    pub body: Option<String>,
    pub author: u64,
    pub head: String,
    /// The fork the head branch lives in (its key), if it is not the repository itself.
    pub head_fork: Option<String>,
    pub draft: bool,
    pub base: String,
}

#[derive(Debug, Clone)]
pub struct FakeComment {
    pub id: u64,
    pub repo_key: String,
    pub issue_number: u64,
    pub user_id: u64,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Who edited it last and when (GraphQL's `editor` and `lastEditedAt`).
    pub last_edit: Option<(u64, DateTime<Utc>)>,
}

/// A review of a pull request (its body; inline comments are [`FakeReviewComment`]s).
#[derive(Debug, Clone)]
pub struct FakeReview {
    pub id: u64,
    pub repo_key: String,
    pub pull_number: u64,
    pub user_id: u64,
    pub body: String,
    /// `APPROVED`, `CHANGES_REQUESTED` or `COMMENTED`.
    pub state: String,
    pub commit_id: String,
    pub submitted_at: DateTime<Utc>,
}

/// A reaction someone put on an issue comment.
#[derive(Debug, Clone)]
pub struct FakeReaction {
    pub id: u64,
    pub comment_id: u64,
    pub user_id: u64,
    pub content: String,
    pub created_at: DateTime<Utc>,
}

/// An inline comment on a line of a pull request's diff.
#[derive(Debug, Clone)]
pub struct FakeReviewComment {
    pub id: u64,
    pub repo_key: String,
    pub pull_number: u64,
    pub user_id: u64,
    pub body: String,
    pub path: String,
    pub line: u64,
    pub commit_id: String,
    pub created_at: DateTime<Utc>,
}

/// A check run an app (CI) reported on a commit.
#[derive(Debug, Clone)]
pub struct FakeCheckRun {
    pub id: u64,
    pub repo_key: String,
    pub head_sha: String,
    pub name: String,
    /// `queued`, `in_progress` or `completed`.
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub app_slug: String,
    pub started_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The job's log, for a GitHub Actions job (served through a redirect, as GitHub
    /// serves it).
    pub log: Option<String>,
}

#[derive(Debug, Clone)]
pub struct FakeRepo {
    pub id: u64,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub bare_path: PathBuf,
    pub created_at: DateTime<Utc>,
    pub next_number: u64,
    /// Issues and the issue side of pull requests, by number.
    pub issues: BTreeMap<u64, FakeIssue>,
    pub pulls: BTreeMap<u64, FakePull>,
    pub labels: BTreeMap<String, u64>,
    /// Users with write access besides the owner.
    pub collaborators: Vec<u64>,
    /// Whether the repository has issues turned on.
    pub has_issues: bool,
    /// Branches under classic branch protection.
    pub protected_branches: Vec<String>,
    /// Ruleset rules: a branch pattern (`name`, or `prefix/*`) and the rule as
    /// `GET /repos/{o}/{r}/rules/branches/{branch}` lists it.
    pub branch_rules: Vec<(String, serde_json::Value)>,
    /// The repository this one is a fork of (its key), if it is one.
    pub fork_of: Option<String>,
    /// For a fork GitHub is still copying: how many more requests for its branches or
    /// its git data find nothing yet (GitHub makes forks "asynchronously").
    pub copying_for: u32,
}

#[derive(Debug, Clone)]
pub struct DeviceCodeState {
    pub client_id: String,
    pub user_code: String,
    /// The token the device gets once the owner approved it.
    pub approved_token: Option<String>,
    pub denied: bool,
    /// How many times the device asked for its token.
    pub polls: u32,
    /// How many times the device was given the token (after approval).
    pub tokens_given: u32,
}

#[derive(Debug, Default)]
pub struct FakeState {
    pub next_id: u64,
    pub users: Vec<FakeUser>,
    pub repos: BTreeMap<String, FakeRepo>,
    pub comments: BTreeMap<u64, FakeComment>,
    pub reviews: BTreeMap<u64, FakeReview>,
    pub reactions: BTreeMap<u64, FakeReaction>,
    pub review_comments: BTreeMap<u64, FakeReviewComment>,
    pub check_runs: BTreeMap<u64, FakeCheckRun>,
    pub memberships: Vec<FakeMembership>,
    pub device_codes: BTreeMap<String, DeviceCodeState>,
    pub rate_limit: RateLimitState,
}

#[derive(Debug, Clone)]
pub struct RateLimitState {
    pub limit: u64,
    pub used: u64,
    pub reset_at: DateTime<Utc>,
}

impl Default for RateLimitState {
    fn default() -> Self {
        RateLimitState {
            limit: 5000,
            used: 0,
            reset_at: Utc::now() + chrono::Duration::hours(1),
        }
    }
}

/// GitHub's times have whole seconds.
pub fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(0)
}

/// The key of a repository: lowercase `owner/name` (GitHub's names ignore case).
pub fn repo_key(owner: &str, name: &str) -> String {
    format!(
        "{}/{}",
        owner.to_ascii_lowercase(),
        name.to_ascii_lowercase()
    )
}

impl FakeState {
    pub fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        1000 + self.next_id
    }

    pub fn user_by_token(&self, token: &str) -> Option<&FakeUser> {
        self.users.iter().find(|user| user.token == token)
    }

    pub fn user(&self, id: u64) -> &FakeUser {
        self.users
            .iter()
            .find(|user| user.id == id)
            .expect("a known user")
    }

    /// Opens a pull request (and its issue side, which shares its number) in the
    /// repository `key`; returns its number.
    pub fn open_pull(&mut self, key: &str, new: NewPull) -> u64 {
        let pull_id = self.new_id();
        let issue_id = self.new_id();
        let repo = self.repos.get_mut(key).expect("a fake repository");
        let number = repo.next_number;
        repo.next_number += 1;
        let at = now();
        repo.issues.insert(
            number,
            FakeIssue {
                id: issue_id,
                number,
                title: new.title,
                body: new.body,
                user_id: new.author,
                labels: Vec::new(),
                state: "open".to_owned(),
                created_at: at,
                updated_at: at,
                closed_at: None,
                is_pull: true,
            },
        );
        repo.pulls.insert(
            number,
            FakePull {
                id: pull_id,
                number,
                head: new.head,
                head_fork: new.head_fork,
                base: new.base,
                merged_at: None,
                merge_commit_sha: None,
                draft: new.draft,
                requested_reviewers: Vec::new(),
                requested_teams: Vec::new(),
            },
        );
        number
    }

    /// Moves issue or PR `number`'s last update to now, as GitHub does when a review or
    /// an inline comment lands on a PR.
    pub fn touch_issue(&mut self, owner: &str, name: &str, number: u64) {
        if let Some(issue) = self
            .repo_mut(owner, name)
            .and_then(|repo| repo.issues.get_mut(&number))
        {
            issue.updated_at = now();
        }
    }

    /// Removes comment `id`; its issue's last update moves (the thread changed).
    pub fn delete_comment(&mut self, id: u64) {
        if let Some(comment) = self.comments.remove(&id) {
            if let Some((owner, name)) = comment.repo_key.split_once('/') {
                let (owner, name) = (owner.to_owned(), name.to_owned());
                self.touch_issue(&owner, &name, comment.issue_number);
            }
        }
    }

    /// A comment by its GraphQL id (`IC_kw…`).
    pub fn comment_by_node_id(&self, node_id: &str) -> Option<&FakeComment> {
        let id: u64 = node_id.strip_prefix("IC_kw")?.parse().ok()?;
        self.comments.get(&id)
    }

    pub fn user_by_login(&self, login: &str) -> Option<&FakeUser> {
        self.users
            .iter()
            .find(|user| user.login.eq_ignore_ascii_case(login))
    }

    pub fn repo(&self, owner: &str, name: &str) -> Option<&FakeRepo> {
        self.repos.get(&repo_key(owner, name))
    }

    pub fn repo_mut(&mut self, owner: &str, name: &str) -> Option<&mut FakeRepo> {
        self.repos.get_mut(&repo_key(owner, name))
    }

    /// Comments of one issue or PR, oldest first.
    pub fn comments_of(&self, key: &str, number: u64) -> Vec<&FakeComment> {
        self.comments
            .values()
            .filter(|comment| comment.repo_key == key && comment.issue_number == number)
            .collect()
    }
}
