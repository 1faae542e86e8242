//! Claiming an owner's `@handoff` command on GitHub, so that of two installations of the
//! same owner (a laptop and a desktop, both acting as the same account) exactly one
//! takes it. A reaction cannot tell them apart, so each replies on the command's thread
//! with a claim carrying its installation id, then reads the thread again: the earliest
//! claim wins (GitHub gives comments increasing ids, so every claimant that reads after
//! posting sees the same earliest one), and the others delete theirs. Only claims the
//! signed-in owner wrote count: a visitor cannot block a command by writing a claim.
//! Also here: the reaction that says a command was taken, and the answer that says how
//! its run ended.

use serde_json::json;

use super::client::GithubClient;
use super::comment_authorship::SignedInAccount;
use super::error::GithubError;
use super::wire::WireComment;
use handoff_domain::github_command::{winning_claim, CommandAnswer, CommandClaim};
use handoff_domain::{GithubCommand, RepoName};
use handoff_store::Store;

/// The reaction put on a command once it is taken (GitHub's "eyes").
pub const TAKEN_REACTION: &str = "eyes";

/// How settling a claim came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimSettled {
    /// This installation's claim is the earliest: it carries the command out.
    Won,
    /// Another installation's claim came first; this one's was withdrawn.
    Lost { installation: String },
}

/// The owner's claims among `comments`, with their comment ids.
fn owners_claims(comments: &[WireComment], owner: &SignedInAccount) -> Vec<(u64, CommandClaim)> {
    comments
        .iter()
        .filter(|comment| {
            comment
                .user
                .as_ref()
                .is_some_and(|user| owner.is(&user.login))
        })
        .filter_map(|comment| Some((comment.id, CommandClaim::of_body(comment.body_text())?)))
        .collect()
}

impl GithubClient {
    /// Puts reaction `content` on issue comment `comment_id`.
    pub async fn react_to_issue_comment(
        &self,
        repo: &RepoName,
        comment_id: u64,
        content: &str,
    ) -> Result<(), GithubError> {
        let _: serde_json::Value = self
            .post_json(
                &format!(
                    "/repos/{}/{}/issues/comments/{comment_id}/reactions",
                    repo.owner, repo.name
                ),
                &json!({ "content": content }),
            )
            .await?;
        Ok(())
    }

    /// Deletes issue comment `id`; one already gone is not an error.
    pub async fn delete_issue_comment(&self, repo: &RepoName, id: u64) -> Result<(), GithubError> {
        match self
            .delete(&format!(
                "/repos/{}/{}/issues/comments/{id}",
                repo.owner, repo.name
            ))
            .await
        {
            Ok(()) | Err(GithubError::NotFound { .. }) => Ok(()),
            Err(error) => Err(error),
        }
    }
}

/// The claim already on `command`'s thread, if any installation posted one (the
/// earliest), read before this installation posts its own.
pub async fn claim_on_thread(
    client: &GithubClient,
    store: &Store,
    owner: &SignedInAccount,
    repo: &RepoName,
    command: &GithubCommand,
) -> Result<Option<(u64, CommandClaim)>, GithubError> {
    let (comments, _) = client
        .issue_comments(store, repo, command.thread_number)
        .await?;
    Ok(winning_claim(
        owners_claims(&comments, owner),
        command.comment_id,
    ))
}

/// Replies on `command`'s thread with this installation's claim; returns the reply's id.
pub async fn post_claim(
    client: &GithubClient,
    repo: &RepoName,
    command: &GithubCommand,
    installation: &str,
    machine: &str,
) -> Result<u64, GithubError> {
    let claim = CommandClaim {
        command_comment_id: command.comment_id,
        installation: installation.to_owned(),
    };
    let body = format!(
        "{}\nHandoff on **{}** is taking this: {}.",
        claim.marker(),
        escape_markdown(machine),
        command.ask.describe()
    );
    let reply = client
        .create_issue_comment(repo, command.thread_number, &body)
        .await?;
    Ok(reply.id)
}

/// Reads `command`'s thread after this installation posted its claim (`own_claim`) and
/// settles who takes it: the earliest claim wins; a losing claim is deleted.
pub async fn settle_claim(
    client: &GithubClient,
    store: &Store,
    owner: &SignedInAccount,
    repo: &RepoName,
    command: &GithubCommand,
    installation: &str,
    own_claim: u64,
) -> Result<ClaimSettled, GithubError> {
    let winner = claim_on_thread(client, store, owner, repo, command).await?;
    match winner {
        Some((_, claim)) if claim.installation != installation => {
            client.delete_issue_comment(repo, own_claim).await?;
            Ok(ClaimSettled::Lost {
                installation: claim.installation,
            })
        }
        // This installation's claim is the earliest, or GitHub does not list it yet:
        // the reply was accepted, so no later claim can come before it.
        _ => Ok(ClaimSettled::Won),
    }
}

/// Replies on `command`'s thread with what came of it (`answer` goes in its marker).
pub async fn post_answer(
    client: &GithubClient,
    repo: &RepoName,
    command: &GithubCommand,
    answer: &CommandAnswer,
    text: &str,
    machine: &str,
) -> Result<u64, GithubError> {
    let body = format!(
        "{}\n{text}\n\n<sub>Handoff on {}</sub>",
        answer.marker(),
        escape_markdown(machine)
    );
    let reply = client
        .create_issue_comment(repo, command.thread_number, &body)
        .await?;
    Ok(reply.id)
}

/// A machine's name as plain text in markdown.
fn escape_markdown(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| {
            let escaped = matches!(
                c,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '!'
            );
            escaped.then_some('\\').into_iter().chain(Some(c))
        })
        .collect()
}
