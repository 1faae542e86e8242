//! Whether GitHub would take a push to a branch, asked before Handoff pushes: the
//! repository's default branch as it is now, classic branch protection, and the rules
//! of the rulesets that apply to the branch (`GET /repos/{o}/{r}/rules/branches/{b}`,
//! readable without admin rights). A branch GitHub guards is never pushed to; the run
//! says which guard stopped it.

use serde::Deserialize;

use super::client::GithubClient;
use super::error::GithubError;
use super::issues::query_value;
use handoff_domain::RepoName;
use handoff_store::Store;

/// What keeps Handoff from pushing to a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchGuard {
    /// It is the repository's default branch on GitHub now.
    DefaultBranch,
    /// Classic branch protection.
    Protected,
    /// A ruleset's rule that a plain push of new commits cannot pass.
    Rule {
        rule: String,
        ruleset_source: String,
    },
}

impl std::fmt::Display for BranchGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BranchGuard::DefaultBranch => f.write_str("it is the repository's default branch"),
            BranchGuard::Protected => f.write_str("GitHub's branch protection guards it"),
            BranchGuard::Rule {
                rule,
                ruleset_source,
            } => write!(
                f,
                "a ruleset of {ruleset_source} applies the rule `{rule}` to it"
            ),
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireRepository {
    default_branch: String,
}

#[derive(Debug, Deserialize)]
struct WireBranch {
    #[serde(default)]
    protected: bool,
}

#[derive(Debug, Deserialize)]
struct WireRule {
    #[serde(rename = "type")]
    rule_type: String,
    #[serde(default)]
    ruleset_source: Option<String>,
}

/// Rules a push of new commits to an existing or new branch does not pass: pushes
/// restricted, changes only through a pull request, checks or deployments required
/// first, signed commits required (Handoff's are not signed), creation restricted.
fn blocks_a_push(rule_type: &str, branch_exists: bool) -> bool {
    match rule_type {
        "update"
        | "pull_request"
        | "required_status_checks"
        | "required_deployments"
        | "required_signatures" => true,
        "creation" => !branch_exists,
        _ => false,
    }
}

impl GithubClient {
    /// The repository's default branch as GitHub has it now.
    pub async fn default_branch(&self, repo: &RepoName) -> Result<String, GithubError> {
        let found: WireRepository = self
            .get_json(&format!("/repos/{}/{}", repo.owner, repo.name))
            .await?;
        Ok(found.default_branch)
    }

    /// What guards `branch` against Handoff's push, if anything.
    pub async fn branch_guard(
        &self,
        store: &Store,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<BranchGuard>, GithubError> {
        if self.default_branch(repo).await? == branch {
            return Ok(Some(BranchGuard::DefaultBranch));
        }
        let path = format!(
            "/repos/{}/{}/branches/{}",
            repo.owner,
            repo.name,
            query_value(branch)
        );
        let branch_exists = match self.get_json::<WireBranch>(&path).await {
            Ok(found) if found.protected => return Ok(Some(BranchGuard::Protected)),
            Ok(_) => true,
            Err(GithubError::NotFound { .. }) => false,
            Err(error) => return Err(error),
        };
        let rules: Vec<WireRule> = match self
            .get_all_pages(
                store,
                &format!(
                    "/repos/{}/{}/rules/branches/{}?per_page=100",
                    repo.owner,
                    repo.name,
                    query_value(branch)
                ),
            )
            .await
        {
            Ok((rules, _)) => rules,
            // A GitHub Enterprise Server without rulesets.
            Err(GithubError::NotFound { .. }) => Vec::new(),
            Err(error) => return Err(error),
        };
        Ok(rules
            .into_iter()
            .find(|rule| blocks_a_push(&rule.rule_type, branch_exists))
            .map(|rule| BranchGuard::Rule {
                rule: rule.rule_type,
                ruleset_source: rule
                    .ruleset_source
                    .unwrap_or_else(|| "the repository".to_owned()),
            }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_that_only_guard_history_or_deletion_let_a_push_of_new_commits_pass() {
        for passing in ["non_fast_forward", "deletion", "required_linear_history"] {
            assert!(!blocks_a_push(passing, true), "{passing}");
        }
        for blocking in [
            "update",
            "pull_request",
            "required_signatures",
            "required_status_checks",
        ] {
            assert!(blocks_a_push(blocking, true), "{blocking}");
        }
        assert!(blocks_a_push("creation", false));
        assert!(!blocks_a_push("creation", true));
    }
}
