//! What the signed-in token may do, as far as GitHub says: a classic token's scopes come
//! back in `X-OAuth-Scopes` on every answer; a fine-grained token's permissions do not.
//!
//! The scope that matters here is `workflow`: with it, the agent's commits may add or
//! change GitHub Actions workflows, which run with the repository's secrets. Without it,
//! GitHub refuses such a push.

use http::{HeaderMap, Method};

use super::client::GithubClient;
use super::error::GithubError;

/// What GitHub says about the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenScopes {
    /// A classic token with these scopes.
    Classic(Vec<String>),
    /// A fine-grained (or app) token: GitHub does not list its permissions.
    NotListed,
}

impl TokenScopes {
    /// Reads the scopes from an answer's headers.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        match headers
            .get("x-oauth-scopes")
            .and_then(|value| value.to_str().ok())
        {
            Some(listed) => TokenScopes::Classic(
                listed
                    .split(',')
                    .map(str::trim)
                    .filter(|scope| !scope.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            None => TokenScopes::NotListed,
        }
    }

    /// Whether the token may change workflow files.
    pub fn can_change_workflows(&self) -> Option<bool> {
        match self {
            TokenScopes::Classic(scopes) => Some(scopes.iter().any(|scope| scope == "workflow")),
            TokenScopes::NotListed => None,
        }
    }

    /// The warning to show the owner, when there is one.
    pub fn warning(&self) -> Option<String> {
        match self.can_change_workflows() {
            Some(true) => Some(
                "the token has the `workflow` scope: commits Handoff pushes for the agent may \
                 add or change GitHub Actions workflows, which run with the repository's \
                 secrets; a token without it makes GitHub refuse such pushes"
                    .to_owned(),
            ),
            Some(false) => None,
            None => Some(
                "a fine-grained token's permissions cannot be read: if it may write \
                 workflows, commits Handoff pushes for the agent may change GitHub Actions \
                 workflows, which run with the repository's secrets"
                    .to_owned(),
            ),
        }
    }

    /// The scopes as they are kept (`"repo, workflow"`, or `fine-grained`).
    pub fn stored(&self) -> String {
        match self {
            TokenScopes::Classic(scopes) => scopes.join(", "),
            TokenScopes::NotListed => "fine-grained".to_owned(),
        }
    }

    /// The scopes as they were kept.
    pub fn from_stored(text: &str) -> Self {
        if text == "fine-grained" {
            return TokenScopes::NotListed;
        }
        TokenScopes::Classic(
            text.split(',')
                .map(str::trim)
                .filter(|scope| !scope.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }
}

/// Asks GitHub what the client's token may do.
pub async fn token_scopes(client: &GithubClient) -> Result<TokenScopes, GithubError> {
    let answer = client
        .send(Method::GET, "/user", None, HeaderMap::new())
        .await?;
    Ok(TokenScopes::from_headers(&answer.headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_classic_token_without_the_workflow_scope_goes_unremarked() {
        let mut headers = HeaderMap::new();
        headers.insert("x-oauth-scopes", "repo, read:org".parse().unwrap());
        let plain = TokenScopes::from_headers(&headers);
        assert_eq!(plain.can_change_workflows(), Some(false));
        assert_eq!(plain.warning(), None);
        headers.insert("x-oauth-scopes", "repo, workflow".parse().unwrap());
        let workflow = TokenScopes::from_headers(&headers);
        assert_eq!(workflow.can_change_workflows(), Some(true));
        assert!(workflow.warning().unwrap().contains("`workflow` scope"));
        let fine_grained = TokenScopes::from_headers(&HeaderMap::new());
        assert_eq!(fine_grained, TokenScopes::NotListed);
        assert!(fine_grained.warning().unwrap().contains("fine-grained"));
        assert_eq!(TokenScopes::from_stored(&workflow.stored()), workflow);
        assert_eq!(
            TokenScopes::from_stored(&fine_grained.stored()),
            fine_grained
        );
    }
}
