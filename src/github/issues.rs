//! Issues: the ones carrying the feedback label, which become feedback items.

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WireIssue;
use crate::domain::RepoName;
use crate::store::Store;

/// `text` made safe for a URL query value.
pub fn query_value(text: &str) -> String {
    let mut encoded = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

impl GithubClient {
    /// Every issue (open or closed) of `repo` with `label`, all pages, conditionally.
    /// Pull requests, which the issues API lists too, are left out.
    pub async fn labeled_issues(
        &self,
        store: &Store,
        repo: &RepoName,
        label: &str,
    ) -> Result<(Vec<WireIssue>, bool), GithubError> {
        let (issues, changed) = self
            .get_all_pages::<WireIssue>(
                store,
                &format!(
                    "/repos/{}/{}/issues?labels={}&state=all&per_page=100",
                    repo.owner,
                    repo.name,
                    query_value(label)
                ),
            )
            .await?;
        Ok((
            issues
                .into_iter()
                .filter(|issue| issue.pull_request.is_none())
                .collect(),
            changed,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_with_spaces_and_symbols_are_encoded() {
        assert_eq!(query_value("good first issue"), "good%20first%20issue");
        assert_eq!(query_value("a&b=c"), "a%26b%3Dc");
        assert_eq!(query_value("feedback"), "feedback");
    }
}
