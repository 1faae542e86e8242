//! Forks and organizations on the fake, as GitHub has them: `POST /repos/{o}/{r}/forks`
//! makes a fork in the signed-in account or in an organization it may make repositories
//! in, answers 202 with the new fork at once though its git data comes a moment later
//! (GitHub forks "asynchronously"), answers with the existing fork when there is one,
//! and answers with the repository itself when an account asks to fork its own
//! repository into itself (GitHub makes no fork then, and says nothing); organizations
//! with their members (`GET /user/memberships/orgs`).

use std::path::Path;

use serde_json::{json, Value};

use super::shapes::{node_id, user, Urls};
use super::state::{now, repo_key, FakeMembership, FakeRepo, FakeState, FakeUser};
use super::{git, FakeGithub};

/// How many requests for a new fork's branches or git data find nothing yet.
pub const COPYING_REQUESTS: u32 = 2;

/// Why a fork is not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkRefusal {
    /// No such repository (or none the account may see).
    NoRepository,
    /// The organization named is none GitHub knows.
    NoOrganization,
    /// The account may not make repositories in that organization.
    MayNotCreateIn(String),
}

/// Forks repository `base_key` into `fork_owner`'s account (a bare clone of every
/// branch), or finds the fork it already has there; returns the fork's key. A new fork's
/// git data is there only after [`COPYING_REQUESTS`] requests when `copying` is set.
pub fn fork_into(
    git_root: &Path,
    state: &mut FakeState,
    base_key: &str,
    fork_owner: &str,
    copying: bool,
) -> String {
    let base = state.repos.get(base_key).expect("the repository").clone();
    if let Some((key, _)) = state.repos.iter().find(|(_, repo)| {
        repo.fork_of.as_deref() == Some(base_key) && repo.owner.eq_ignore_ascii_case(fork_owner)
    }) {
        return key.clone();
    }
    // A repository of that name that is no fork of this one: GitHub picks another name.
    let mut name = base.name.clone();
    let mut suffix = 0;
    while state.repos.contains_key(&repo_key(fork_owner, &name)) {
        suffix += 1;
        name = format!("{}-{suffix}", base.name);
    }
    let fork_bare = git_root.join(fork_owner).join(format!("{name}.git"));
    if !fork_bare.exists() {
        std::fs::create_dir_all(fork_bare.parent().expect("a parent")).expect("folders");
        git(
            git_root,
            &[
                "clone",
                "--quiet",
                "--bare",
                base.bare_path.to_str().expect("UTF-8 path"),
                fork_bare.to_str().expect("UTF-8 path"),
            ],
        );
        git(&fork_bare, &["config", "http.receivepack", "true"]);
    }
    let id = state.new_id();
    let key = repo_key(fork_owner, &name);
    state.repos.insert(
        key.clone(),
        FakeRepo {
            id,
            owner: fork_owner.to_owned(),
            name,
            default_branch: base.default_branch.clone(),
            bare_path: fork_bare,
            created_at: now(),
            next_number: 1,
            issues: Default::default(),
            pulls: Default::default(),
            labels: Default::default(),
            collaborators: Vec::new(),
            has_issues: false,
            protected_branches: Vec::new(),
            branch_rules: Vec::new(),
            fork_of: Some(base_key.to_owned()),
            copying_for: if copying { COPYING_REQUESTS } else { 0 },
        },
    );
    key
}

/// What `POST /repos/{owner}/{name}/forks` does for `user_id` with `organization`:
/// the key of the repository to answer with (the fork, or the repository itself when
/// its owner asks for a fork of their own in their own account).
pub fn create_fork(
    git_root: &Path,
    state: &mut FakeState,
    user_id: u64,
    owner: &str,
    name: &str,
    organization: Option<&str>,
) -> Result<String, ForkRefusal> {
    let base_key = repo_key(owner, name);
    if !state.repos.contains_key(&base_key) {
        return Err(ForkRefusal::NoRepository);
    }
    let login = state.user(user_id).login.clone();
    let fork_owner = match organization {
        None => {
            if owner.eq_ignore_ascii_case(&login) {
                // GitHub makes no fork of an account's repository in that account, and
                // answers with the repository itself.
                return Ok(base_key);
            }
            login
        }
        Some(organization) => {
            let Some(org) = state
                .user_by_login(organization)
                .filter(|account| account.is_organization)
                .cloned()
            else {
                return Err(ForkRefusal::NoOrganization);
            };
            let may = state.memberships.iter().any(|membership| {
                membership.organization == org.id
                    && membership.user == user_id
                    && membership.can_create_repository
            });
            if !may {
                return Err(ForkRefusal::MayNotCreateIn(org.login));
            }
            org.login
        }
    };
    Ok(fork_into(git_root, state, &base_key, &fork_owner, true))
}

/// Whether a request for repository `key`'s branches or git data comes while GitHub
/// is still copying it (it then finds nothing, and one fewer will).
pub fn still_copying(state: &mut FakeState, key: &str) -> bool {
    match state.repos.get_mut(key) {
        Some(repo) if repo.copying_for > 0 => {
            repo.copying_for -= 1;
            true
        }
        _ => false,
    }
}

/// An "Organization Simple".
pub fn organization_simple(urls: &Urls, org: &FakeUser) -> Value {
    let api = format!("{}/orgs/{}", urls.api, org.login);
    json!({
        "login": org.login,
        "id": org.id,
        "node_id": node_id("O", org.id),
        "url": api,
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events"),
        "hooks_url": format!("{api}/hooks"),
        "issues_url": format!("{api}/issues"),
        "members_url": format!("{api}/members{{/member}}"),
        "public_members_url": format!("{api}/public_members{{/member}}"),
        "avatar_url": format!("{}/avatars/{}", urls.web, org.login),
        "description": null
    })
}

/// `user_id`'s memberships, each an "Org Membership".
pub fn memberships_of(urls: &Urls, state: &FakeState, user_id: u64) -> Vec<Value> {
    state
        .memberships
        .iter()
        .filter(|membership| membership.user == user_id)
        .map(|membership| {
            let org = state.user(membership.organization);
            json!({
                "url": format!("{}/orgs/{}/memberships/{}", urls.api, org.login, state.user(user_id).login),
                "state": "active",
                "role": membership.role,
                "organization_url": format!("{}/orgs/{}", urls.api, org.login),
                "organization": organization_simple(urls, org),
                "user": user(urls, state.user(user_id)),
                "permissions": { "can_create_repository": membership.can_create_repository }
            })
        })
        .collect()
}

impl FakeGithub {
    /// Forks `full_name` into `fork_owner`'s account (signed up when new; a bare clone
    /// with every branch), ready at once, unless that fork exists; returns the fork's
    /// `owner/name`.
    pub fn create_fork(&self, full_name: &str, fork_owner: &str) -> String {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        // The account the fork goes to (signed up when new).
        self.user_id_signing_up(fork_owner);
        let mut state = self.shared.state.lock().expect("state");
        let key = fork_into(
            &self.shared.git_root,
            &mut state,
            &repo_key(owner, name),
            fork_owner,
            false,
        );
        let fork = state.repos.get(&key).expect("the fork");
        format!("{}/{}", fork.owner, fork.name)
    }

    /// Makes organization `login` with `members` (a user's login, `admin` or `member`,
    /// and whether they may make repositories there), each signed up if new.
    pub fn add_organization(&self, login: &str, members: &[(&str, &str, bool)]) {
        let member_ids: Vec<u64> = members
            .iter()
            .map(|(member, _, _)| self.user_id_signing_up(member))
            .collect();
        let mut state = self.shared.state.lock().expect("state");
        let id = state.new_id();
        state.users.push(FakeUser {
            id,
            login: login.to_owned(),
            // Nobody signs in as an organization.
            token: format!("no-token-for-organization-{id}"),
            is_bot: false,
            token_scopes: None,
            is_organization: true,
        });
        for ((_, role, can_create_repository), user) in members.iter().zip(member_ids) {
            state.memberships.push(FakeMembership {
                organization: id,
                user,
                role: (*role).to_owned(),
                can_create_repository: *can_create_repository,
            });
        }
    }

    /// The fork `full_name` is of (`owner/name`), if it is one.
    pub fn parent_of(&self, full_name: &str) -> Option<String> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        let parent = state.repo(owner, name)?.fork_of.clone()?;
        let parent = state.repos.get(&parent)?;
        Some(format!("{}/{}", parent.owner, parent.name))
    }
}
