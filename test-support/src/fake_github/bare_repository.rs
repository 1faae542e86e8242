//! The fake's side of git: the commit a branch of a bare repository points at, the
//! `refs/pull/N/head` refs GitHub keeps, and the token a request carries (REST and git
//! over HTTP read it the same way).

use axum::http::HeaderMap;
use base64::Engine as _;

use super::state::FakeState;

/// The token of a request: `Bearer`/`token` headers for the API, Basic auth's password
/// for git over HTTP.
pub fn token_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    match scheme.to_ascii_lowercase().as_str() {
        "bearer" | "token" => Some(rest.trim().to_owned()),
        "basic" => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(rest.trim())
                .ok()?;
            let text = String::from_utf8(decoded).ok()?;
            text.split_once(':')
                .map(|(_, password)| password.to_owned())
        }
        _ => None,
    }
}

/// The commit `branch` of the repository points at, if the branch exists.
pub fn git_sha(state: &FakeState, owner: &str, name: &str, branch: &str) -> Option<String> {
    git_ref_sha(
        &state.repo(owner, name)?.bare_path,
        &format!("refs/heads/{branch}"),
    )
}

/// Points `refs/pull/N/head` of each PR whose branch lives in the repository itself at
/// that branch's tip, as GitHub does on every push (a deleted branch leaves the ref
/// where it was).
pub fn refresh_pull_heads(state: &mut FakeState, owner: &str, name: &str) {
    let Some(repo) = state.repo(owner, name) else {
        return;
    };
    let mut moved = Vec::new();
    // Every branch and PR head in one listing: a repository of many PRs is refreshed
    // with one git process, not two per PR.
    let refs = all_refs(&repo.bare_path);
    for pull in repo.pulls.values().filter(|pull| pull.head_fork.is_none()) {
        if let Some(sha) = refs.get(&format!("refs/heads/{}", pull.head)) {
            let reference = format!("refs/pull/{}/head", pull.number);
            if refs.get(&reference) == Some(sha) {
                continue;
            }
            let updated = super::git_command()
                .arg("-C")
                .arg(&repo.bare_path)
                .args(["update-ref", &reference, sha])
                .status()
                .is_ok_and(|status| status.success());
            assert!(updated, "{reference} could not be updated");
            moved.push(pull.number);
        }
    }
    // A push to a PR's branch moves the PR's last update, as on GitHub.
    for number in moved {
        state.touch_issue(owner, name, number);
    }
    refresh_fork_pull_heads(state, &super::state::repo_key(owner, name));
}

/// Points `refs/pull/N/head` of each PR whose branch lives in a fork at that branch's
/// tip, fetching the fork's commits into the base repository, for the PRs of the
/// repository `key` and the PRs whose fork `key` is.
fn refresh_fork_pull_heads(state: &mut FakeState, key: &str) {
    let mut stale = Vec::new();
    for (base_key, base) in &state.repos {
        for pull in base.pulls.values() {
            let Some(fork_key) = &pull.head_fork else {
                continue;
            };
            if base_key != key && fork_key != key {
                continue;
            }
            let Some(fork) = state.repos.get(fork_key) else {
                continue;
            };
            let Some(sha) = git_ref_sha(&fork.bare_path, &format!("refs/heads/{}", pull.head))
            else {
                continue;
            };
            let reference = format!("refs/pull/{}/head", pull.number);
            if git_ref_sha(&base.bare_path, &reference).as_deref() != Some(&sha) {
                stale.push((
                    base.bare_path.clone(),
                    fork.bare_path.clone(),
                    pull.head.clone(),
                    reference,
                    base.owner.clone(),
                    base.name.clone(),
                    pull.number,
                ));
            }
        }
    }
    for (base_bare, fork_bare, head, reference, owner, name, number) in stale {
        let fetched = super::git_command()
            .arg("-C")
            .arg(&base_bare)
            .args(["fetch", "--quiet"])
            .arg(&fork_bare)
            .arg(format!("+refs/heads/{head}:{reference}"))
            .status()
            .is_ok_and(|status| status.success());
        assert!(fetched, "{reference} could not be fetched from the fork");
        state.touch_issue(&owner, &name, number);
    }
}

/// The commit `reference` names in the bare repository at `bare`, if it names one.
/// Every branch and PR head of `bare`, by full name, with the commit it points at.
fn all_refs(bare: &std::path::Path) -> std::collections::HashMap<String, String> {
    let output = super::git_command()
        .arg("-C")
        .arg(bare)
        .args([
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
            "refs/pull",
        ])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(name, sha)| (name.to_owned(), sha.to_owned()))
        .collect()
}

pub fn git_ref_sha(bare: &std::path::Path, reference: &str) -> Option<String> {
    let output = super::git_command()
        .arg("-C")
        .arg(bare)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{reference}^{{commit}}"))
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Whether `head` merges into `base` without conflicts, as GitHub's `mergeable` says
/// (`git merge-tree` in the bare repository; `None` when git could not tell).
pub fn merges_cleanly(bare: &std::path::Path, base: &str, head: &str) -> Option<bool> {
    let status = super::git_command()
        .arg("-C")
        .arg(bare)
        .args(["merge-tree", "--write-tree", "--no-messages", base, head])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    match status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}
