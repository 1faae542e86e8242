//! Closing and reopening an issue on the fake, as someone does on github.com: its state,
//! its closing time and its last update change.

use super::state::now;
use super::FakeGithub;

impl FakeGithub {
    /// Closes issue `number` (`closed: true`) or reopens it.
    pub fn set_issue_closed(&self, full_name: &str, number: u64, closed: bool) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let issue = state
            .repo_mut(owner, name)
            .and_then(|repo| repo.issues.get_mut(&number))
            .expect("the issue is on the fake");
        let at = now();
        issue.state = if closed { "closed" } else { "open" }.to_owned();
        issue.closed_at = closed.then_some(at);
        issue.updated_at = at;
    }
}
