//! The fix stage: the agent reads the stored results of the latest test run (not a
//! comment anyone could edit) and commits fixes, which are pushed to the PR's branch —
//! only when that branch is the repository's own and neither its base nor its default
//! branch. The results comment then says a fix was pushed.

use super::{BegunQa, StageDone, StageJob};
use crate::domain::pull_request::push_refusal;
use crate::domain::stage_prompts::StagePromptValues;
use crate::domain::test_results::{results_summary, SummaryLine};
use crate::domain::Repo;
use crate::domain::RunFailureCode;
use crate::github::wire::WirePull;
use crate::pipeline::agent_job::Stop;
use crate::pipeline::agent_job::WorkingCopy;
use crate::pipeline::agent_push::{PushTo, PushedCommits};
use crate::store::StoredTestResult;
use std::path::Path;

/// Why `fix` may not push to `pull`'s branch, if it may not (see [`push_refusal`]).
pub fn fix_push_refusal(pull: &WirePull, repo: &Repo) -> Option<String> {
    push_refusal(
        &repo.name,
        &repo.default_branch,
        &pull.head.name,
        pull.head.repo.as_ref().map(|head| head.full_name.as_str()),
        &pull.base.name,
    )
}

impl BegunQa {
    pub(super) async fn fix(&self, job: &StageJob<'_>) -> Result<StageDone, Stop> {
        let store = &self.pipeline.store;
        let pr_number = self.pull.number;
        let run_id = job.run_id;
        let head = self.pull.head.name.as_str();
        if let Some(reason) = fix_push_refusal(&self.pull, &self.repo) {
            return Err(Stop::failed(
                RunFailureCode::FixCannotPush,
                format!("fix cannot push to PR #{pr_number}: {reason}"),
            ));
        }
        let Some(results) = store
            .stage_runs()
            .latest_test_results(self.repo.id, pr_number)
            .await?
        else {
            return Err(Stop::failed(
                RunFailureCode::NoResults,
                format!("no test results are stored for PR #{pr_number}: run the test stage first"),
            ));
        };
        let failing: Vec<_> = results
            .results
            .iter()
            .filter(|r| !r.result.passed)
            .collect();
        if failing.is_empty() {
            return Ok(StageDone {
                detail: format!(
                    "nothing to fix: every scenario of run {} passed",
                    results.run_id
                ),
                output: None,
                end_sha: None,
            });
        }
        let failures = self.failures_for_prompt(&failing);
        let scenarios: Vec<_> = results.results.iter().map(|r| &r.result).collect();
        let results_json =
            serde_json::to_string_pretty(&serde_json::json!({ "scenarios": scenarios }))
                .map_err(|error| Stop::failed(RunFailureCode::Results, error.to_string()))?;
        let inputs = [("results.json".to_owned(), results_json)];
        let copy = self.working_copy(job).await?;
        let prompt = self
            .prompt(
                job.stage,
                StagePromptValues {
                    failures: &failures,
                    ..StagePromptValues::default()
                },
            )
            .await?;
        let out = self.run_agent(job, &copy, &prompt, &inputs).await?;
        let PushedCommits {
            end_sha, commits, ..
        } = self.push_the_fix(job, &copy, &out).await?;
        let lines: Vec<SummaryLine<'_>> = results
            .results
            .iter()
            .map(|result| SummaryLine {
                scenario: &result.result,
                issue_number: result.issue_number,
            })
            .collect();
        let note = format!(
            "🔧 A fix was pushed by Handoff run {run_id}: {commits} commit(s), up to `{}`. \
             Run the test stage again to confirm.",
            &end_sha[..end_sha.len().min(7)]
        );
        self.publish(job, &results_summary(&lines, results.run_id.0, Some(&note)))
            .await?;
        Ok(StageDone {
            detail: format!("{commits} commit(s) pushed to {head}"),
            output: self.setup.read_output(&out.join("output.md")),
            end_sha: Some(end_sha),
        })
    }

    /// The failing scenarios as the fix agent's prompt lists them. The test agent wrote
    /// them after reading someone else's code or words, when it did: then they are data.
    fn failures_for_prompt(&self, failing: &[&StoredTestResult]) -> String {
        let failures = failing
            .iter()
            .enumerate()
            .map(|(index, result)| {
                format!(
                    "{}. {}{}\n   Evidence: {}",
                    index + 1,
                    result.result.name,
                    result
                        .issue_number
                        .map(|n| format!(" (issue #{n})"))
                        .unwrap_or_default(),
                    result.result.evidence.replace('\n', "\n   ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        match &self.whose_work.untrusted_inputs {
            Some(why) => super::untrusted_inputs::fence_agent_output(&failures, why),
            None => failures,
        }
    }

    /// The fix's commits, pushed to the PR's head branch (never its base or the
    /// default). None is a loud failure.
    async fn push_the_fix(
        &self,
        job: &StageJob<'_>,
        copy: &WorkingCopy,
        out: &Path,
    ) -> Result<PushedCommits, Stop> {
        let protected = [
            self.pull.base.name.as_str(),
            self.repo.default_branch.as_str(),
        ];
        let pushed = self
            .pipeline
            .push_agent_commits(
                job.log,
                job.run_id,
                out,
                copy,
                &self.repo,
                PushTo {
                    repository: &self.repo.name,
                    branch: &self.pull.head.name,
                    protected: &protected,
                    // Held changes are a code run's: a fix's CI changes are flagged only.
                    ci_changes_wait_for_owner: false,
                },
            )
            .await?;
        pushed.ok_or_else(|| {
            Stop::failed(
                RunFailureCode::NoChanges,
                format!("the agent changed nothing; {}", job.see_log()),
            )
        })
    }
}
