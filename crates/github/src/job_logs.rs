//! The log of a GitHub Actions job, as plain text: what an automatic update shows the
//! agent of a failing check. GitHub answers the logs request with a redirect to a
//! short-lived download address on another host; the transport follows it and, the
//! host being another, leaves the token out (tower-http's standard redirect policy,
//! which octocrab's `follow-redirect` uses).

use http::{HeaderMap, Method};

use super::client::GithubClient;
use super::error::GithubError;
use handoff_domain::RepoName;

/// The most bytes of a job's log kept (its end is what matters; logs can be huge).
const JOB_LOG_MAX_BYTES: usize = 4 * 1024 * 1024;

impl GithubClient {
    /// The log of GitHub Actions job `job_id` (a check run's id, for Actions), as text:
    /// its last [`JOB_LOG_MAX_BYTES`] bytes.
    pub async fn actions_job_log(
        &self,
        repo: &RepoName,
        job_id: u64,
    ) -> Result<String, GithubError> {
        let path = format!(
            "/repos/{}/{}/actions/jobs/{job_id}/logs",
            repo.owner, repo.name
        );
        let answer = self
            .send(Method::GET, &path, None, HeaderMap::new())
            .await?;
        let start = answer.body.len().saturating_sub(JOB_LOG_MAX_BYTES);
        Ok(String::from_utf8_lossy(&answer.body[start..]).into_owned())
    }
}
