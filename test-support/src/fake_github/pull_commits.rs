//! A PR's commits as GitHub lists them (`GET /repos/{o}/{r}/pulls/{n}/commits`): the
//! commits of its head (`refs/pull/N/head`) that its base lacks, oldest first, no more
//! than 250, each with the accounts its author and committer are linked to by their
//! e-mail addresses (`{}` for an address no account has), as GitHub links them.

use serde_json::{json, Value};

use super::shapes::{node_id, user, Urls};
use super::state::FakeState;

/// GitHub lists no more than this many commits of one PR.
const MOST_LISTED: usize = 250;

/// The commits of PR `number` of `owner/name`, or `None` when there is no such PR.
pub fn pull_commits(
    urls: &Urls,
    state: &FakeState,
    owner: &str,
    name: &str,
    number: u64,
) -> Option<Vec<Value>> {
    let repo = state.repo(owner, name)?;
    let pull = repo.pulls.get(&number)?;
    let range = format!("refs/heads/{}..refs/pull/{number}/head", pull.base);
    let output = super::git_command()
        .arg("-C")
        .arg(&repo.bare_path)
        .args([
            "log",
            "--reverse",
            "--format=%H%x1f%P%x1f%T%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%s%x1e",
            &range,
        ])
        .output()
        .expect("git runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let api = format!("{}/repos/{}/{}", urls.api, repo.owner, repo.name);
    let web = format!("{}/{}/{}", urls.web, repo.owner, repo.name);
    let account = |email: &str| {
        state
            .users
            .iter()
            .find(|known| known.email() == email)
            .map(|known| user(urls, known))
            .unwrap_or_else(|| json!({}))
    };
    let commits = text
        .split('\u{1e}')
        .map(str::trim)
        .filter(|record| !record.is_empty())
        .take(MOST_LISTED)
        .enumerate()
        .map(|(index, record)| {
            let fields: Vec<&str> = record.split('\u{1f}').collect();
            let field = |at: usize| fields.get(at).copied().unwrap_or_default();
            let sha = field(0);
            let parents: Vec<Value> = field(1)
                .split_whitespace()
                .map(|parent| {
                    json!({
                        "sha": parent,
                        "url": format!("{api}/commits/{parent}"),
                        "html_url": format!("{web}/commit/{parent}"),
                    })
                })
                .collect();
            json!({
                "url": format!("{api}/commits/{sha}"),
                "sha": sha,
                "node_id": node_id("C", index as u64 + 1),
                "html_url": format!("{web}/commit/{sha}"),
                "comments_url": format!("{api}/commits/{sha}/comments"),
                "commit": {
                    "url": format!("{api}/git/commits/{sha}"),
                    "author": { "name": field(3), "email": field(4), "date": field(5) },
                    "committer": { "name": field(6), "email": field(7), "date": field(8) },
                    "message": field(9),
                    "comment_count": 0,
                    "tree": { "sha": field(2), "url": format!("{api}/git/trees/{}", field(2)) }
                },
                "author": account(field(4)),
                "committer": account(field(7)),
                "parents": parents
            })
        })
        .collect();
    Some(commits)
}
