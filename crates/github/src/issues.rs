//! Issues: the ones carrying the feedback label, which become feedback items, and every
//! issue or PR updated since a time, for a sync that asks only for what changed.

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WireIssue;
use handoff_domain::RepoName;
use handoff_store::Store;

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

/// `time` as a listing's `since` parameter (whole seconds, UTC).
pub fn since_value(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl GithubClient {
    /// Every issue and pull request of `repo` (the issues API lists both) updated at or
    /// after `since`, oldest update first, all pages, conditionally.
    pub async fn issues_updated_since(
        &self,
        store: &Store,
        repo: &RepoName,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<WireIssue>, GithubError> {
        let (issues, _) = self
            .get_all_pages::<WireIssue>(
                store,
                &format!(
                    "/repos/{}/{}/issues?state=all&sort=updated&direction=asc&since={}&per_page=100",
                    repo.owner,
                    repo.name,
                    since_value(since)
                ),
            )
            .await?;
        Ok(issues)
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
