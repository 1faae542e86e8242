//! Whose commits a PR's head holds. Code the owner did not write must never run on the
//! owner's machine, and the agent's own configuration in such a tree (hooks, MCP
//! servers, settings) must not steer the agent; so before a run starts on a branch, its
//! commits are sorted into the owner's and everyone else's.
//!
//! A commit is the owner's when GitHub links both its author and its committer to the
//! signed-in account (the committer may also be GitHub's own `web-flow`, which commits
//! what the owner does in github.com's editor or with its buttons), or when Handoff
//! pushed it itself for one of the owner's runs (its commits carry the agent's name,
//! which no account owns). GitHub links a commit to an account by the e-mail address in
//! it, so a collaborator with push access could pass for the owner by writing the
//! owner's address into a commit; a fork or another author is never taken for the owner
//! however its commits read.

use std::collections::{HashMap, HashSet};

/// The committer GitHub names for what is done in github.com's own editor and buttons.
pub const GITHUB_WEB_COMMITTER: &str = "web-flow";

/// The most commits GitHub lists for one PR; a longer one cannot be read whole.
pub const MOST_LISTED_PULL_REQUEST_COMMITS: usize = 250;

/// One commit of a PR's head, as GitHub lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadCommit {
    pub sha: String,
    pub parents: Vec<String>,
    /// The account GitHub links the commit's author to, if any.
    pub author_login: Option<String>,
    /// The account GitHub links the commit's committer to, if any.
    pub committer_login: Option<String>,
    /// The author's name as the commit writes it.
    pub author_name: String,
}

impl HeadCommit {
    fn short_sha(&self) -> &str {
        self.sha.get(..7).unwrap_or(&self.sha)
    }

    /// `abc1234 by @mallory`, or `abc1234 by "Some Name" (no GitHub account)`.
    fn described(&self) -> String {
        match (&self.author_login, &self.committer_login) {
            (Some(author), Some(committer)) if !author.eq_ignore_ascii_case(committer) => {
                format!(
                    "{} by @{author}, committed by @{committer}",
                    self.short_sha()
                )
            }
            (Some(author), _) => format!("{} by @{author}", self.short_sha()),
            (None, _) => format!(
                "{} by {:?} (no GitHub account)",
                self.short_sha(),
                self.author_name
            ),
        }
    }
}

/// Commits Handoff pushed for the owner: everything after `start_sha` up to and
/// including `end_sha` (a run's), or `end_sha` alone when there is no start (one commit
/// Handoff wrote on the host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffPush {
    pub start_sha: Option<String>,
    pub end_sha: String,
}

/// What a PR's head holds that the owner did not write, if anything: a sentence naming
/// the commits (at most five, then how many more), or why they cannot all be read.
pub fn strangers_commits(
    commits: &[HeadCommit],
    owner: &str,
    pushes: &[HandoffPush],
) -> Option<String> {
    if commits.len() >= MOST_LISTED_PULL_REQUEST_COMMITS {
        return Some(format!(
            "its head holds {MOST_LISTED_PULL_REQUEST_COMMITS} commits or more, and GitHub \
             lists no more than that, so who wrote each cannot be told"
        ));
    }
    let handoffs = pushed_by_handoff(commits, pushes);
    let strangers: Vec<&HeadCommit> = commits
        .iter()
        .filter(|commit| !handoffs.contains(commit.sha.as_str()))
        .filter(|commit| !is_the_owners(commit, owner))
        .collect();
    if strangers.is_empty() {
        return None;
    }
    let mut named: Vec<String> = strangers.iter().take(5).map(|c| c.described()).collect();
    if strangers.len() > 5 {
        named.push(format!("and {} more", strangers.len() - 5));
    }
    Some(format!(
        "its head holds {} commit{} by someone other than @{owner}: {}",
        strangers.len(),
        if strangers.len() == 1 { "" } else { "s" },
        named.join(", ")
    ))
}

fn is_the_owners(commit: &HeadCommit, owner: &str) -> bool {
    let is_owner = |login: &Option<String>| {
        login
            .as_deref()
            .is_some_and(|login| login.eq_ignore_ascii_case(owner))
    };
    is_owner(&commit.author_login)
        && (is_owner(&commit.committer_login)
            || commit.committer_login.as_deref() == Some(GITHUB_WEB_COMMITTER))
}

/// The commits of `commits` that one of `pushes` brought: from each push's end, back
/// through parents that are in the list, until its start.
fn pushed_by_handoff<'a>(commits: &'a [HeadCommit], pushes: &[HandoffPush]) -> HashSet<&'a str> {
    let by_sha: HashMap<&str, &HeadCommit> = commits
        .iter()
        .map(|commit| (commit.sha.as_str(), commit))
        .collect();
    let mut found = HashSet::new();
    for push in pushes {
        let mut waiting = vec![push.end_sha.as_str()];
        while let Some(sha) = waiting.pop() {
            if push.start_sha.as_deref() == Some(sha) {
                continue;
            }
            let Some(commit) = by_sha.get(sha) else {
                continue;
            };
            if found.insert(commit.sha.as_str()) && push.start_sha.is_some() {
                waiting.extend(commit.parents.iter().map(String::as_str));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(
        sha: &str,
        parent: &str,
        author: Option<&str>,
        committer: Option<&str>,
    ) -> HeadCommit {
        HeadCommit {
            sha: sha.to_owned(),
            parents: vec![parent.to_owned()],
            author_login: author.map(str::to_owned),
            committer_login: committer.map(str::to_owned),
            author_name: "Someone".to_owned(),
        }
    }

    #[test]
    fn the_owners_own_commits_and_their_web_edits_are_the_owners() {
        let commits = [
            commit("a000000001", "base", Some("octocat"), Some("octocat")),
            commit(
                "b000000002",
                "a000000001",
                Some("OctoCat"),
                Some("web-flow"),
            ),
        ];
        assert_eq!(strangers_commits(&commits, "octocat", &[]), None);
    }

    #[test]
    fn another_authors_commit_is_named_with_who_wrote_it() {
        let commits = [
            commit("a000000001", "base", Some("octocat"), Some("octocat")),
            commit("b000000002", "a000000001", Some("mallory"), Some("mallory")),
        ];
        let found = strangers_commits(&commits, "octocat", &[]).unwrap();
        assert!(
            found.contains("1 commit by someone other than @octocat"),
            "{found}"
        );
        assert!(found.contains("b000000 by @mallory"), "{found}");
        assert!(!found.contains("a000000"), "{found}");
    }

    #[test]
    fn the_owners_name_committed_by_someone_else_is_not_the_owners() {
        let commits = [commit(
            "a000000001",
            "base",
            Some("octocat"),
            Some("mallory"),
        )];
        let found = strangers_commits(&commits, "octocat", &[]).unwrap();
        assert!(
            found.contains("by @octocat, committed by @mallory"),
            "{found}"
        );
    }

    #[test]
    fn commits_linked_to_no_account_are_someone_elses_unless_handoff_pushed_them() {
        let agent = |sha: &str, parent: &str| HeadCommit {
            author_name: "Handoff agent".to_owned(),
            ..commit(sha, parent, None, None)
        };
        let commits = [
            agent("a000000001", "base"),
            agent("b000000002", "a000000001"),
            commit("c000000003", "b000000002", Some("octocat"), Some("octocat")),
            agent("d000000004", "c000000003"),
        ];
        let pushed = [HandoffPush {
            start_sha: Some("base".to_owned()),
            end_sha: "b000000002".to_owned(),
        }];
        let found = strangers_commits(&commits, "octocat", &pushed).unwrap();
        assert!(
            found.contains("d000000 by \"Handoff agent\" (no GitHub account)"),
            "a commit that only looks like the agent's is not taken for it: {found}"
        );
        assert!(
            !found.contains("a000000") && !found.contains("b000000"),
            "{found}"
        );
        let pushed_too = [
            pushed[0].clone(),
            HandoffPush {
                start_sha: None,
                end_sha: "d000000004".to_owned(),
            },
        ];
        assert_eq!(strangers_commits(&commits, "octocat", &pushed_too), None);
        let one_commit_only = [HandoffPush {
            start_sha: None,
            end_sha: "b000000002".to_owned(),
        }];
        let found = strangers_commits(&commits, "octocat", &one_commit_only).unwrap();
        assert!(
            found.contains("a000000") && !found.contains("b000000"),
            "a single commit Handoff wrote vouches for none before it: {found}"
        );
    }

    #[test]
    fn many_strangers_are_counted_and_a_list_github_cuts_short_is_never_trusted() {
        let commits: Vec<HeadCommit> = (0..8)
            .map(|n| {
                commit(
                    &format!("{n}00000000{n}"),
                    "base",
                    Some("mallory"),
                    Some("mallory"),
                )
            })
            .collect();
        let found = strangers_commits(&commits, "octocat", &[]).unwrap();
        assert!(found.contains("8 commits"), "{found}");
        assert!(found.ends_with("and 3 more"), "{found}");
        let long: Vec<HeadCommit> = (0..MOST_LISTED_PULL_REQUEST_COMMITS)
            .map(|n| {
                commit(
                    &format!("{n:010}"),
                    "base",
                    Some("octocat"),
                    Some("octocat"),
                )
            })
            .collect();
        let found = strangers_commits(&long, "octocat", &[]).unwrap();
        assert!(found.contains("cannot be told"), "{found}");
    }
}
