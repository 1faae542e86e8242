//! A repository's collaborators on the fake: the people GitHub lets a PR request a
//! review from (besides the repository's owner); and users signed up as they are named.

use super::FakeGithub;

impl FakeGithub {
    /// The id of user `login`, signed up first when new.
    pub(super) fn user_id_signing_up(&self, login: &str) -> u64 {
        let known = self
            .shared
            .state
            .lock()
            .expect("state")
            .user_by_login(login)
            .is_some();
        if !known {
            self.add_user(login);
        }
        self.user_id(login)
    }

    /// Makes `login` (signed up if new) a collaborator of `full_name`.
    pub fn add_collaborator(&self, full_name: &str, login: &str) {
        let user_id = self.user_id_signing_up(login);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state
            .repo_mut(owner, name)
            .expect("the repository is on the fake");
        if !repo.collaborators.contains(&user_id) {
            repo.collaborators.push(user_id);
        }
    }
}
