//! A fake GitHub for the tests: an HTTP server in the test process that keeps state and
//! speaks the REST paths Handoff uses (shaped per GitHub's published description), with
//! ETags and 304s, rate limits, pagination, injectable faults, GitHub's device-flow
//! sign-in, and real bare git repositories served over HTTP by `git http-backend`.
//!
//! Tests drive it through [`FakeGithub`]: make repositories, issues, comments; edit or
//! delete a comment behind Handoff's back; merge or close a PR; inject faults; read the
//! request log.

mod bare_repository;
mod collaborators;
mod faults;
mod forks;
mod git_http;
mod issue_state;
mod pull_commits;
mod pull_state;
mod rest;
mod shapes;
mod state;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

pub use faults::{Fault, FaultRule};
pub use shapes::Urls;
use state::{now, repo_key, FakeComment, FakeIssue, FakeRepo, FakeState, FakeUser};

/// One request the fake answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    pub status: u16,
    /// Counted against the rate limit (a 304 is not).
    pub costs_rate_limit: bool,
}

pub struct Shared {
    pub state: Mutex<FakeState>,
    pub faults: Mutex<Vec<FaultRule>>,
    pub requests: Mutex<Vec<RequestRecord>>,
    pub oauth_client_ids: Mutex<Vec<String>>,
    pub urls: Urls,
    pub git_root: PathBuf,
}

/// The login and token of the repositories' owner, made at start.
pub const OWNER: &str = "octocat";

/// A running fake GitHub. Dropping it stops the server and removes its repositories.
pub struct FakeGithub {
    shared: Arc<Shared>,
    address: SocketAddr,
    owner_token: String,
    server: tokio::task::JoinHandle<()>,
    _root: tempfile::TempDir,
}

impl Drop for FakeGithub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A git command as GitHub's own servers would run it: nothing of the test process's
/// git setup (`GIT_*` variables, a global config) applies.
pub(crate) fn git_command() -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    command
}

fn git(directory: &Path, arguments: &[&str]) -> String {
    git_as(directory, arguments, ("Fake GitHub", "fake@github.invalid"))
}

/// `git` with `identity` (name, e-mail) as the author and committer of what it commits.
fn git_as(directory: &Path, arguments: &[&str], identity: (&str, &str)) -> String {
    let (name, email) = identity;
    let output = git_command()
        .arg("-C")
        .arg(directory)
        .args(arguments)
        .env("GIT_AUTHOR_NAME", name)
        .env("GIT_AUTHOR_EMAIL", email)
        .env("GIT_COMMITTER_NAME", name)
        .env("GIT_COMMITTER_EMAIL", email)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {arguments:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl FakeGithub {
    /// Starts the fake on a free local port, with the owner `octocat` signed up.
    pub async fn start() -> FakeGithub {
        let root = tempfile::tempdir().expect("a folder for the fake's repositories");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("an address");
        let base = format!("http://{address}");
        let shared = Arc::new(Shared {
            state: Mutex::new(FakeState::default()),
            faults: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            oauth_client_ids: Mutex::new(Vec::new()),
            urls: Urls {
                api: base.clone(),
                web: base,
            },
            git_root: root.path().to_owned(),
        });
        let app = axum::Router::new().fallback({
            let shared = shared.clone();
            move |request| rest::handle(shared.clone(), request)
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let mut fake = FakeGithub {
            shared,
            address,
            owner_token: String::new(),
            server,
            _root: root,
        };
        fake.owner_token = fake.add_user(OWNER);
        fake
    }

    pub fn api_base(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn web_base(&self) -> String {
        self.api_base()
    }

    /// The owner's token.
    pub fn owner_token(&self) -> &str {
        &self.owner_token
    }

    /// Signs up a user and returns their token.
    pub fn add_user(&self, login: &str) -> String {
        self.add_account(login, false)
    }

    /// Signs up a bot account and returns its token.
    pub fn add_bot(&self, login: &str) -> String {
        self.add_account(login, true)
    }

    fn add_account(&self, login: &str, is_bot: bool) -> String {
        let mut state = self.shared.state.lock().expect("state");
        let id = state.new_id();
        let token = format!("ghp_fake{id}{}", login.len() * 7919);
        state.users.push(FakeUser {
            id,
            login: login.to_owned(),
            token: token.clone(),
            is_bot,
            token_scopes: Some("repo".to_owned()),
            is_organization: false,
        });
        token
    }

    /// Puts `branch` of `full_name` under classic branch protection.
    pub fn protect_branch(&self, full_name: &str, branch: &str) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state.repo_mut(owner, name).expect("the repository");
        repo.protected_branches.push(branch.to_owned());
    }

    /// Adds a ruleset rule of `rule_type` (`update`, `pull_request`,
    /// `required_signatures`…) on the branches matching `pattern` (`name` or `prefix/*`).
    pub fn add_branch_rule(&self, full_name: &str, pattern: &str, rule_type: &str) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state.repo_mut(owner, name).expect("the repository");
        let rule = serde_json::json!({
            "type": rule_type,
            "ruleset_source_type": "Repository",
            "ruleset_source": full_name,
            "ruleset_id": 40 + repo.branch_rules.len(),
        });
        repo.branch_rules.push((pattern.to_owned(), rule));
    }

    /// Makes `login`'s token one with these classic scopes (`"repo, workflow"`), or a
    /// fine-grained one (`None`), as `X-OAuth-Scopes` tells.
    pub fn set_token_scopes(&self, login: &str, scopes: Option<&str>) {
        let mut state = self.shared.state.lock().expect("state");
        if let Some(user) = state
            .users
            .iter_mut()
            .find(|user| user.login.eq_ignore_ascii_case(login))
        {
            user.token_scopes = scopes.map(str::to_owned);
        }
    }

    fn user_id(&self, login: &str) -> u64 {
        self.shared
            .state
            .lock()
            .expect("state")
            .user_by_login(login)
            .unwrap_or_else(|| panic!("no fake user {login}"))
            .id
    }

    /// Makes a repository of the owner with one commit (a README) on `default_branch`.
    pub fn create_repo(&self, full_name: &str, default_branch: &str) {
        self.create_repo_with_files(full_name, default_branch, &[]);
    }

    /// Makes a repository with no commits at all and returns its bare repository, for a
    /// caller that fills it itself (for example with `git fast-import`).
    pub fn create_empty_repo(&self, full_name: &str, default_branch: &str) -> PathBuf {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let bare = self.shared.git_root.join(owner).join(format!("{name}.git"));
        std::fs::create_dir_all(&bare).expect("a folder for the bare repository");
        git(
            &bare,
            &[
                "init",
                "--quiet",
                "--bare",
                &format!("--initial-branch={default_branch}"),
            ],
        );
        git(&bare, &["config", "http.receivepack", "true"]);
        let mut state = self.shared.state.lock().expect("state");
        let id = state.new_id();
        state.repos.insert(
            repo_key(owner, name),
            FakeRepo {
                id,
                owner: owner.to_owned(),
                name: name.to_owned(),
                default_branch: default_branch.to_owned(),
                bare_path: bare.clone(),
                created_at: now(),
                next_number: 1,
                issues: Default::default(),
                pulls: Default::default(),
                labels: Default::default(),
                collaborators: Vec::new(),
                has_issues: true,
                protected_branches: Vec::new(),
                branch_rules: Vec::new(),
                fork_of: None,
                copying_for: 0,
            },
        );
        bare
    }

    /// Makes a repository whose first commit holds a README and `files` (path, text).
    pub fn create_repo_with_files(
        &self,
        full_name: &str,
        default_branch: &str,
        files: &[(&str, &str)],
    ) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let bare = self.shared.git_root.join(owner).join(format!("{name}.git"));
        std::fs::create_dir_all(&bare).expect("a folder for the bare repository");
        git(
            &bare,
            &[
                "init",
                "--quiet",
                "--bare",
                &format!("--initial-branch={default_branch}"),
            ],
        );
        git(&bare, &["config", "http.receivepack", "true"]);
        let work = tempfile::tempdir().expect("a work tree");
        git(
            work.path(),
            &[
                "init",
                "--quiet",
                &format!("--initial-branch={default_branch}"),
            ],
        );
        std::fs::write(work.path().join("README.md"), format!("# {name}\n")).expect("README");
        for (path, text) in files {
            let file = work.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
            std::fs::write(file, text).expect("a file");
        }
        git(work.path(), &["add", "-A"]);
        git(work.path(), &["commit", "--quiet", "-m", "Initial commit"]);
        git(
            work.path(),
            &[
                "push",
                "--quiet",
                bare.to_str().expect("UTF-8 path"),
                default_branch,
            ],
        );
        let mut state = self.shared.state.lock().expect("state");
        let id = state.new_id();
        state.repos.insert(
            repo_key(owner, name),
            FakeRepo {
                id,
                owner: owner.to_owned(),
                name: name.to_owned(),
                default_branch: default_branch.to_owned(),
                bare_path: bare,
                created_at: now(),
                next_number: 1,
                issues: Default::default(),
                pulls: Default::default(),
                labels: Default::default(),
                collaborators: Vec::new(),
                has_issues: true,
                protected_branches: Vec::new(),
                branch_rules: Vec::new(),
                fork_of: None,
                copying_for: 0,
            },
        );
    }

    /// The bare repository behind `owner/name`.
    pub fn bare_path(&self, full_name: &str) -> PathBuf {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        self.shared
            .state
            .lock()
            .expect("state")
            .repo(owner, name)
            .expect("a fake repository")
            .bare_path
            .clone()
    }

    /// The HTTP clone address of a repository (credentials not included).
    pub fn git_url(&self, full_name: &str) -> String {
        format!("{}/{full_name}.git", self.api_base())
    }

    /// Opens an issue by `author` with `labels`; returns its number.
    pub fn create_issue(
        &self,
        full_name: &str,
        author: &str,
        title: &str,
        body: &str,
        labels: &[&str],
    ) -> u64 {
        let user_id = self.user_id(author);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let id = state.new_id();
        let mut label_ids = Vec::new();
        for _ in labels {
            label_ids.push(state.new_id());
        }
        let repo = state.repo_mut(owner, name).expect("a fake repository");
        for (label, label_id) in labels.iter().zip(label_ids) {
            repo.labels.entry((*label).to_owned()).or_insert(label_id);
        }
        let number = repo.next_number;
        repo.next_number += 1;
        let at = now();
        repo.issues.insert(
            number,
            FakeIssue {
                id,
                number,
                title: title.to_owned(),
                body: Some(body.to_owned()),
                user_id,
                labels: labels.iter().map(|l| (*l).to_owned()).collect(),
                state: "open".to_owned(),
                created_at: at,
                updated_at: at,
                closed_at: None,
                is_pull: false,
            },
        );
        number
    }

    /// Comments on issue or PR `number` as `author`; returns the comment's id.
    pub fn add_comment(&self, full_name: &str, number: u64, author: &str, body: &str) -> u64 {
        let user_id = self.user_id(author);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        assert!(
            state
                .repo(owner, name)
                .is_some_and(|repo| repo.issues.contains_key(&number)),
            "no issue or PR #{number} in {full_name}"
        );
        let id = state.new_id();
        let at = now();
        state.comments.insert(
            id,
            FakeComment {
                id,
                repo_key: repo_key(owner, name),
                issue_number: number,
                user_id,
                body: body.to_owned(),
                created_at: at,
                updated_at: at,
                last_edit: None,
            },
        );
        state.touch_issue(owner, name, number);
        id
    }

    /// Edits a comment on GitHub as its author would (behind Handoff's back).
    pub fn edit_comment(&self, id: u64, body: &str) {
        let author = {
            let state = self.shared.state.lock().expect("state");
            let comment = state.comments.get(&id).expect("a fake comment");
            state.user(comment.user_id).login.clone()
        };
        self.edit_comment_as(id, &author, body);
    }

    /// Edits a comment on GitHub as `login` (someone with write access to the
    /// repository may edit anyone's comment).
    pub fn edit_comment_as(&self, id: u64, login: &str, body: &str) {
        let editor = self.user_id(login);
        let mut state = self.shared.state.lock().expect("state");
        let comment = state.comments.get_mut(&id).expect("a fake comment");
        comment.body = body.to_owned();
        comment.updated_at = now();
        comment.last_edit = Some((editor, comment.updated_at));
    }

    /// Deletes a comment as someone on GitHub would.
    pub fn delete_comment(&self, id: u64) {
        let mut state = self.shared.state.lock().expect("state");
        state.delete_comment(id);
    }

    pub fn comment_body(&self, id: u64) -> Option<String> {
        self.shared
            .state
            .lock()
            .expect("state")
            .comments
            .get(&id)
            .map(|comment| comment.body.clone())
    }

    /// The comments of issue or PR `number`: (id, author, body), oldest first.
    /// The reactions on issue comment `comment_id`: who gave each, and which.
    pub fn reactions_on(&self, comment_id: u64) -> Vec<(String, String)> {
        let state = self.shared.state.lock().expect("state");
        state
            .reactions
            .values()
            .filter(|reaction| reaction.comment_id == comment_id)
            .map(|reaction| {
                (
                    state.user(reaction.user_id).login.clone(),
                    reaction.content.clone(),
                )
            })
            .collect()
    }

    pub fn comments(&self, full_name: &str, number: u64) -> Vec<(u64, String, String)> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state
            .comments_of(&repo_key(owner, name), number)
            .into_iter()
            .map(|comment| {
                (
                    comment.id,
                    state.user(comment.user_id).login.clone(),
                    comment.body.clone(),
                )
            })
            .collect()
    }

    /// Opens a PR from `head` (which must exist) into the default branch, as `author`.
    pub fn create_pull(&self, full_name: &str, author: &str, head: &str, title: &str) -> u64 {
        let base = {
            let (owner, name) = full_name.split_once('/').expect("owner/name");
            let state = self.shared.state.lock().expect("state");
            state
                .repo(owner, name)
                .expect("a fake repository")
                .default_branch
                .clone()
        };
        self.create_pull_into(full_name, author, head, &base, title)
    }

    /// Opens a PR from `head` into `base` (both branches of the repository), as `author`.
    pub fn create_pull_into(
        &self,
        full_name: &str,
        author: &str,
        head: &str,
        base: &str,
        title: &str,
    ) -> u64 {
        let user_id = self.user_id(author);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let number = state.open_pull(
            &repo_key(owner, name),
            state::NewPull {
                title: title.to_owned(),
                body: None,
                author: user_id,
                head: head.to_owned(),
                head_fork: None,
                base: base.to_owned(),
                draft: false,
            },
        );
        bare_repository::refresh_pull_heads(&mut state, owner, name);
        number
    }

    /// Opens a PR into `base` of `full_name` from `fork_owner`'s fork, whose branch
    /// `head` holds one commit of `files` on top of `full_name`'s `base`. As on GitHub,
    /// the base repository keeps the PR's head as `refs/pull/N/head`; the branch itself
    /// lives only in the fork (so a branch of the same name in the base repository is
    /// another thing entirely).
    pub fn create_fork_pull(
        &self,
        full_name: &str,
        fork_owner: &str,
        head: &str,
        base: &str,
        title: &str,
        files: &[(&str, &str)],
    ) -> u64 {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let base_bare = self.bare_path(full_name);
        let fork_name = self.create_fork(full_name, fork_owner);
        let fork_bare = self.bare_path(&fork_name);
        let work = tempfile::tempdir().expect("a work tree");
        git(
            work.path(),
            &[
                "clone",
                "--quiet",
                "--branch",
                base,
                fork_bare.to_str().expect("UTF-8 path"),
                ".",
            ],
        );
        for (path, text) in files {
            let file = work.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
            std::fs::write(file, text).expect("a file");
        }
        git(work.path(), &["add", "-A"]);
        let (author_name, author_email) = self.identity_of(fork_owner);
        git_as(
            work.path(),
            &["commit", "--quiet", "-m", title],
            (&author_name, &author_email),
        );
        git(
            work.path(),
            &[
                "push",
                "--quiet",
                "--force",
                "origin",
                &format!("HEAD:refs/heads/{head}"),
            ],
        );
        let sha = git(work.path(), &["rev-parse", "HEAD"]);

        let author = self.user_id(fork_owner);
        let mut state = self.shared.state.lock().expect("state");
        let fork_key = fork_name.to_ascii_lowercase();
        let number = state.open_pull(
            &repo_key(owner, name),
            state::NewPull {
                title: title.to_owned(),
                body: None,
                author,
                head: head.to_owned(),
                head_fork: Some(fork_key),
                base: base.to_owned(),
                draft: false,
            },
        );
        drop(state);
        git(
            work.path(),
            &[
                "push",
                "--quiet",
                base_bare.to_str().expect("UTF-8 path"),
                &format!("{sha}:refs/pull/{number}/head"),
            ],
        );
        number
    }

    /// Deletes `branch` as someone on GitHub would (the PR's `refs/pull/N/head` stays
    /// at the branch's last commit).
    pub fn delete_branch(&self, full_name: &str, branch: &str) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        bare_repository::refresh_pull_heads(
            &mut self.shared.state.lock().expect("state"),
            owner,
            name,
        );
        git(
            &self.bare_path(full_name),
            &["update-ref", "-d", &format!("refs/heads/{branch}")],
        );
    }

    /// Commits `files` on top of `branch` as the owner pushing by hand; returns the
    /// commit.
    pub fn push_commit(
        &self,
        full_name: &str,
        branch: &str,
        message: &str,
        files: &[(&str, &str)],
    ) -> String {
        self.push_commit_as(OWNER, full_name, branch, message, files)
    }

    /// The name and e-mail `login`'s commits carry: GitHub links them to the account.
    fn identity_of(&self, login: &str) -> (String, String) {
        let email = self
            .shared
            .state
            .lock()
            .expect("state")
            .user_by_login(login)
            .unwrap_or_else(|| panic!("no fake user {login}"))
            .email();
        (login.to_owned(), email)
    }

    /// Commits `files` on top of `branch` as `login` (a user of the fake) pushing by
    /// hand; returns the commit.
    pub fn push_commit_as(
        &self,
        login: &str,
        full_name: &str,
        branch: &str,
        message: &str,
        files: &[(&str, &str)],
    ) -> String {
        let identity = self.identity_of(login);
        let bare = self.bare_path(full_name);
        let work = tempfile::tempdir().expect("a work tree");
        let bare_text = bare.to_str().expect("UTF-8 path").to_owned();
        git(
            work.path(),
            &["clone", "--quiet", "--branch", branch, &bare_text, "."],
        );
        for (path, text) in files {
            let file = work.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
            std::fs::write(file, text).expect("a file");
        }
        git(work.path(), &["add", "-A"]);
        git_as(
            work.path(),
            &["commit", "--quiet", "-m", message],
            (&identity.0, &identity.1),
        );
        git(work.path(), &["push", "--quiet", "origin", branch]);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        bare_repository::refresh_pull_heads(
            &mut self.shared.state.lock().expect("state"),
            owner,
            name,
        );
        git(work.path(), &["rev-parse", "HEAD"])
    }

    /// Makes each of `branches` (name, file to add) from `from` with one commit of its
    /// own, in one clone and one push (many branches at the cost of one); returns each
    /// branch's commit.
    pub fn create_branches_with_a_commit(
        &self,
        full_name: &str,
        from: &str,
        branches: &[(String, String)],
    ) -> Vec<String> {
        let bare = self.bare_path(full_name);
        let work = tempfile::tempdir().expect("a work tree");
        let bare_text = bare.to_str().expect("UTF-8 path").to_owned();
        git(
            work.path(),
            &["clone", "--quiet", "--branch", from, &bare_text, "."],
        );
        let mut shas = Vec::new();
        for (branch, path) in branches {
            git(work.path(), &["checkout", "--quiet", "-B", branch, from]);
            let file = work.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
            std::fs::write(file, format!("{branch}\n")).expect("a file");
            git(work.path(), &["add", "-A"]);
            git(work.path(), &["commit", "--quiet", "-m", branch]);
            shas.push(git(work.path(), &["rev-parse", "HEAD"]));
        }
        let mut push = vec!["push".to_owned(), "--quiet".to_owned(), "origin".to_owned()];
        push.extend(branches.iter().map(|(branch, _)| branch.clone()));
        let push: Vec<&str> = push.iter().map(String::as_str).collect();
        git(work.path(), &push);
        shas
    }

    /// Opens `count` PRs by `author` (a user of the fake), each from a branch of its own
    /// with one commit, whose checks settled: a third passed, a third failed (the
    /// second of every three), a third have none. Returns their numbers.
    pub fn open_pulls_with_settled_checks(
        &self,
        full_name: &str,
        author: &str,
        count: usize,
    ) -> Vec<u64> {
        let branches: Vec<(String, String)> = (0..count)
            .map(|n| (format!("contrib/change-{n}"), format!("docs/change-{n}.md")))
            .collect();
        let heads = self.create_branches_with_a_commit(full_name, "main", &branches);
        let mut numbers = Vec::new();
        for (n, ((branch, _), sha)) in branches.iter().zip(heads).enumerate() {
            let conclusion = match n % 3 {
                0 => Some(("success", "ok")),
                1 => Some(("failure", "1 failed")),
                _ => None,
            };
            if let Some((conclusion, summary)) = conclusion {
                self.add_check_run(
                    full_name,
                    &sha,
                    "github-actions",
                    "test",
                    Some(conclusion),
                    summary,
                );
            }
            numbers.push(self.create_pull(full_name, author, branch, &format!("Change {n}")));
        }
        numbers
    }

    /// The text of `path` on `branch`, if it is there.
    pub fn file_on_branch(&self, full_name: &str, branch: &str, path: &str) -> Option<String> {
        let output = git_command()
            .arg("-C")
            .arg(self.bare_path(full_name))
            .args(["show", &format!("{branch}:{path}")])
            .output()
            .expect("git runs");
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The files `branch` changes since it left `base`, sorted.
    pub fn files_changed(&self, full_name: &str, branch: &str, base: &str) -> Vec<String> {
        let output = git_command()
            .arg("-C")
            .arg(self.bare_path(full_name))
            .args(["diff", "--name-only", &format!("{base}...{branch}")])
            .output()
            .expect("git runs");
        let mut files: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        files.sort();
        files
    }

    /// Commit subjects of `branch` that `base` does not have, oldest first.
    pub fn commits_ahead(&self, full_name: &str, branch: &str, base: &str) -> Vec<String> {
        let listed = git(
            &self.bare_path(full_name),
            &[
                "log",
                "--reverse",
                "--format=%s",
                &format!("{base}..{branch}"),
            ],
        );
        listed.lines().map(str::to_owned).collect()
    }

    /// Makes a branch at the tip of another one, in the bare repository.
    pub fn create_branch(&self, full_name: &str, branch: &str, from: &str) {
        git(&self.bare_path(full_name), &["branch", branch, from]);
    }

    /// The commit `branch` points at, if it exists.
    pub fn branch_sha(&self, full_name: &str, branch: &str) -> Option<String> {
        let output = git_command()
            .arg("-C")
            .arg(self.bare_path(full_name))
            .args([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ])
            .output()
            .expect("git runs");
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Merges PR `number` with a real merge commit on its base branch.
    pub fn merge_pull(&self, full_name: &str, number: u64) {
        let bare = self.bare_path(full_name);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let (head, base) = {
            let state = self.shared.state.lock().expect("state");
            let pull = &state.repo(owner, name).expect("repo").pulls[&number];
            (pull.head.clone(), pull.base.clone())
        };
        let tree = git(&bare, &["merge-tree", "--write-tree", &base, &head]);
        let tree = tree.lines().next().expect("a tree").to_owned();
        let commit = git(
            &bare,
            &[
                "commit-tree",
                &tree,
                "-p",
                &base,
                "-p",
                &head,
                "-m",
                &format!("Merge pull request #{number}"),
            ],
        );
        git(
            &bare,
            &["update-ref", &format!("refs/heads/{base}"), &commit],
        );
        let mut state = self.shared.state.lock().expect("state");
        let repo = state.repo_mut(owner, name).expect("repo");
        let at = now();
        let pull = repo.pulls.get_mut(&number).expect("a PR");
        pull.merged_at = Some(at);
        pull.merge_commit_sha = Some(commit);
        let issue = repo.issues.get_mut(&number).expect("its issue");
        issue.state = "closed".to_owned();
        issue.closed_at = Some(at);
        issue.updated_at = at;
    }

    /// Closes PR `number` without merging.
    pub fn close_pull(&self, full_name: &str, number: u64) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state.repo_mut(owner, name).expect("repo");
        let issue = repo.issues.get_mut(&number).expect("a PR");
        issue.state = "closed".to_owned();
        issue.closed_at = Some(now());
        issue.updated_at = now();
    }

    /// The title of issue or PR `number`.
    pub fn issue_title(&self, full_name: &str, number: u64) -> String {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state.repo(owner, name).expect("repo").issues[&number]
            .title
            .clone()
    }

    /// Whether PR `number` was opened as a draft.
    pub fn pull_is_draft(&self, full_name: &str, number: u64) -> bool {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state.repo(owner, name).expect("repo").pulls[&number].draft
    }

    /// Makes every later push to `full_name` fail the way GitHub's own checks refuse one:
    /// the bare repository's pre-receive hook prints `remote_lines` (as GitHub prints
    /// `remote: error: GH013: …`) and declines.
    pub fn refuse_pushes(&self, full_name: &str, remote_lines: &[&str]) {
        let hooks = self.bare_path(full_name).join("hooks");
        std::fs::create_dir_all(&hooks).expect("the hooks folder");
        let mut script = String::from("#!/bin/sh\n");
        for line in remote_lines {
            script.push_str(&format!("echo '{}' >&2\n", line.replace('\'', "")));
        }
        script.push_str("exit 1\n");
        let hook = hooks.join("pre-receive");
        std::fs::write(&hook, script).expect("the hook");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
                .expect("the hook runs");
        }
    }

    /// The body of issue or PR `number`.
    pub fn issue_body(&self, full_name: &str, number: u64) -> Option<String> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state
            .repo(owner, name)
            .expect("repo")
            .issues
            .get(&number)
            .and_then(|issue| issue.body.clone())
    }

    /// The commit PR `number`'s head is at (`refs/pull/N/head`).
    pub fn pull_head_sha(&self, full_name: &str, number: u64) -> String {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let bare = self.bare_path(full_name);
        let head = git(&bare, &["rev-parse", &format!("refs/pull/{number}/head")]);
        assert!(
            !head.is_empty(),
            "PR #{number} of {owner}/{name} has a head"
        );
        head
    }

    /// Submits a review of PR `number` as `author` (`state`: APPROVED, CHANGES_REQUESTED
    /// or COMMENTED); returns its id. Panics on a review GitHub refuses: one approving
    /// or requesting changes from the PR's own author (see [`Self::try_add_review`]).
    pub fn add_review(
        &self,
        full_name: &str,
        number: u64,
        author: &str,
        state: &str,
        body: &str,
    ) -> u64 {
        self.try_add_review(full_name, number, author, state, body)
            .unwrap_or_else(|refusal| panic!("GitHub refuses this review: {refusal}"))
    }

    /// [`Self::add_review`], with GitHub's refusal as an error.
    pub fn try_add_review(
        &self,
        full_name: &str,
        number: u64,
        author: &str,
        state: &str,
        body: &str,
    ) -> Result<u64, String> {
        let user_id = self.user_id(author);
        let commit_id = self.pull_head_sha(full_name, number);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut fake = self.shared.state.lock().expect("state");
        assert!(
            fake.repo(owner, name)
                .is_some_and(|repo| repo.pulls.contains_key(&number)),
            "no PR #{number} in {full_name}"
        );
        if let Some(refusal) =
            rest::review_refusal(&fake, &repo_key(owner, name), number, user_id, state)
        {
            return Err(refusal.to_owned());
        }
        let id = fake.new_id();
        fake.touch_issue(owner, name, number);
        fake.reviews.insert(
            id,
            state::FakeReview {
                id,
                repo_key: repo_key(owner, name),
                pull_number: number,
                user_id,
                body: body.to_owned(),
                state: state.to_owned(),
                commit_id,
                submitted_at: now(),
            },
        );
        Ok(id)
    }

    /// Comments on line `line` of `path` in PR `number`'s diff as `author`; returns the
    /// comment's id.
    pub fn add_review_comment(
        &self,
        full_name: &str,
        number: u64,
        author: &str,
        path: &str,
        line: u64,
        body: &str,
    ) -> u64 {
        let user_id = self.user_id(author);
        let commit_id = self.pull_head_sha(full_name, number);
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut fake = self.shared.state.lock().expect("state");
        let id = fake.new_id();
        fake.touch_issue(owner, name, number);
        fake.review_comments.insert(
            id,
            state::FakeReviewComment {
                id,
                repo_key: repo_key(owner, name),
                pull_number: number,
                user_id,
                body: body.to_owned(),
                path: path.to_owned(),
                line,
                commit_id,
                created_at: now(),
            },
        );
        id
    }

    /// Reports a check run named `name` on commit `sha`, as the app `app` (CI) would:
    /// `conclusion` `None` leaves it in progress. Returns its id.
    pub fn add_check_run(
        &self,
        full_name: &str,
        sha: &str,
        app: &str,
        name: &str,
        conclusion: Option<&str>,
        summary: &str,
    ) -> u64 {
        let (owner, name_of_repo) = full_name.split_once('/').expect("owner/name");
        let mut fake = self.shared.state.lock().expect("state");
        let id = fake.new_id();
        let at = now();
        fake.check_runs.insert(
            id,
            state::FakeCheckRun {
                id,
                repo_key: repo_key(owner, name_of_repo),
                head_sha: sha.to_owned(),
                name: name.to_owned(),
                status: if conclusion.is_some() {
                    "completed"
                } else {
                    "in_progress"
                }
                .to_owned(),
                conclusion: conclusion.map(str::to_owned),
                title: conclusion.map(|conclusion| format!("{name}: {conclusion}")),
                summary: Some(summary.to_owned()),
                app_slug: app.to_owned(),
                started_at: at,
                completed_at: conclusion.map(|_| at),
                log: None,
            },
        );
        id
    }

    /// Reports a GitHub Actions job that failed on commit `sha`, with its log (read
    /// through `GET …/actions/jobs/{id}/logs`). Returns its id, the job's and the
    /// check run's.
    pub fn add_failed_actions_job(
        &self,
        full_name: &str,
        sha: &str,
        name: &str,
        summary: &str,
        log: &str,
    ) -> u64 {
        let id = self.add_check_run(
            full_name,
            sha,
            "github-actions",
            name,
            Some("failure"),
            summary,
        );
        let mut fake = self.shared.state.lock().expect("state");
        if let Some(run) = fake.check_runs.get_mut(&id) {
            run.log = Some(log.to_owned());
        }
        id
    }

    /// Moves the last update of every issue and PR of the repository `age` into the past
    /// (a repository whose PRs nobody touched lately).
    pub fn backdate_issues(&self, full_name: &str, age: chrono::Duration) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let mut state = self.shared.state.lock().expect("state");
        let repo = state.repo_mut(owner, name).expect("repo");
        for issue in repo.issues.values_mut() {
            issue.updated_at -= age;
        }
    }

    /// Moves every comment of `full_name` back in time by `age` (written and last
    /// edited that long before).
    pub fn backdate_comments(&self, full_name: &str, age: chrono::Duration) {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let key = repo_key(owner, name);
        let mut state = self.shared.state.lock().expect("state");
        for comment in state.comments.values_mut().filter(|c| c.repo_key == key) {
            comment.created_at -= age;
            comment.updated_at -= age;
        }
    }

    /// The state of PR `number`: "open", "closed" or "merged".
    pub fn pull_state(&self, full_name: &str, number: u64) -> String {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        let repo = state.repo(owner, name).expect("repo");
        if repo.pulls[&number].merged_at.is_some() {
            "merged".to_owned()
        } else {
            repo.issues[&number].state.clone()
        }
    }

    /// Every PR of the repository: (number, head branch, state).
    pub fn pulls(&self, full_name: &str) -> Vec<(u64, String, String)> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let numbers: Vec<u64> = {
            let state = self.shared.state.lock().expect("state");
            state
                .repo(owner, name)
                .expect("repo")
                .pulls
                .keys()
                .copied()
                .collect()
        };
        numbers
            .into_iter()
            .map(|number| {
                let head = {
                    let state = self.shared.state.lock().expect("state");
                    state.repo(owner, name).expect("repo").pulls[&number]
                        .head
                        .clone()
                };
                (number, head, self.pull_state(full_name, number))
            })
            .collect()
    }

    /// Issues (not PRs) of the repository: (number, title, body, state).
    pub fn issues(&self, full_name: &str) -> Vec<(u64, String, String, String)> {
        let (owner, name) = full_name.split_once('/').expect("owner/name");
        let state = self.shared.state.lock().expect("state");
        state
            .repo(owner, name)
            .expect("repo")
            .issues
            .values()
            .filter(|issue| !issue.is_pull)
            .map(|issue| {
                (
                    issue.number,
                    issue.title.clone(),
                    issue.body.clone().unwrap_or_default(),
                    issue.state.clone(),
                )
            })
            .collect()
    }

    /// Registers an OAuth app for the device flow.
    pub fn register_oauth_app(&self, client_id: &str) {
        self.shared
            .oauth_client_ids
            .lock()
            .expect("ids")
            .push(client_id.to_owned());
    }

    /// The owner enters `user_code` on GitHub and approves, as `login`.
    pub fn approve_device(&self, user_code: &str, login: &str) {
        let token = {
            let state = self.shared.state.lock().expect("state");
            state.user_by_login(login).expect("a user").token.clone()
        };
        let mut state = self.shared.state.lock().expect("state");
        let entry = state
            .device_codes
            .values_mut()
            .find(|entry| entry.user_code == user_code)
            .expect("a device code");
        entry.approved_token = Some(token);
    }

    /// The user codes handed out so far.
    pub fn device_user_codes(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .expect("state")
            .device_codes
            .values()
            .map(|entry| entry.user_code.clone())
            .collect()
    }

    /// How often the device holding `user_code` asked for its token so far, and how many
    /// of those asks were given it.
    pub fn device_polls(&self, user_code: &str) -> (u32, u32) {
        let state = self.shared.state.lock().expect("state");
        state
            .device_codes
            .values()
            .find(|entry| entry.user_code == user_code)
            .map(|entry| (entry.polls, entry.tokens_given))
            .expect("a device code")
    }

    /// Forgets every injected fault that has not happened yet.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().expect("faults").clear();
    }

    pub fn inject(&self, rule: FaultRule) {
        self.shared.faults.lock().expect("faults").push(rule);
    }

    /// How many injected faults have still to happen (a fault happens as its request
    /// arrives, before it is answered).
    pub fn faults_to_come(&self) -> usize {
        self.shared
            .faults
            .lock()
            .expect("faults")
            .iter()
            .map(|rule| rule.times)
            .sum()
    }

    /// The address the fake listens at.
    pub fn address(&self) -> std::net::SocketAddr {
        self.address
    }

    /// Every request answered so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.requests.lock().expect("log").clone()
    }

    pub fn clear_requests(&self) {
        self.shared.requests.lock().expect("log").clear();
    }

    /// Requests answered so far that cost rate limit.
    pub fn rate_limit_cost(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.costs_rate_limit)
            .count()
    }

    pub fn urls(&self) -> Urls {
        self.shared.urls.clone()
    }
}
