//! An open pull request on the fake as people change it on github.com (marked a draft
//! or ready for review; opened by a bot, or from a fork) and what was asked of it
//! (labels, reviewers).

use super::state::now;
use super::FakeGithub;

impl FakeGithub {
    /// Marks PR `number` a draft (`true`) or ready for review.
    pub fn set_pull_draft(&self, full_name: &str, number: u64, draft: bool) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state
            .repo_mut(owner, name)
            .expect("the repository is on the fake");
        repo.pulls
            .get_mut(&number)
            .expect("the PR is on the fake")
            .draft = draft;
        if let Some(issue) = repo.issues.get_mut(&number) {
            issue.updated_at = now();
        }
    }

    /// Makes PR `number` look opened by `login` (a bot such as `dependabot[bot]`, which
    /// is signed up if new) from the fork `head_fork` (`owner/name`) when given.
    pub fn create_pull_as(
        &self,
        full_name: &str,
        number: u64,
        login: &str,
        head_fork: Option<&str>,
    ) {
        let user_id = self.user_id_signing_up(login);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state
            .repo_mut(owner, name)
            .expect("the repository is on the fake");
        let issue = repo.issues.get_mut(&number).expect("the PR is on the fake");
        issue.user_id = user_id;
        issue.updated_at = now();
        if let Some(fork) = head_fork {
            repo.pulls
                .get_mut(&number)
                .expect("the PR is on the fake")
                .head_fork = Some(fork.to_ascii_lowercase());
        }
    }
}

impl FakeGithub {
    /// The labels on issue or PR `number`.
    pub fn labels_of(&self, full_name: &str, number: u64) -> Vec<String> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state
            .repo(owner, name)
            .expect("the repository is on the fake")
            .issues[&number]
            .labels
            .clone()
    }

    /// Who was asked to review PR `number`: logins, then team slugs.
    pub fn requested_reviewers(&self, full_name: &str, number: u64) -> (Vec<String>, Vec<String>) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        let pull = &state
            .repo(owner, name)
            .expect("the repository is on the fake")
            .pulls[&number];
        let logins = pull
            .requested_reviewers
            .iter()
            .map(|id| state.user(*id).login.clone())
            .collect();
        (logins, pull.requested_teams.clone())
    }
}
